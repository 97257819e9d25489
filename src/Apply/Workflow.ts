/**
 * Seed 001's job application as a durable `effect/workflow`: start-browser → analyze-form → fill-fields →
 * upload-resume → check-captcha → submit → verify, then cleanup. Each step is an activity, so a step that finished
 * is never run again when the workflow resumes after a crash or on another runner (its stored result is replayed);
 * a step still running when the process died runs again, and reads the page afresh — except the submit's click,
 * which happens at most once (Submit.ts). A step the model-free cascade cannot finish — a human check, say — hands
 * the page to a person: a durable wait (`DurableDeferred`) that `switchyard resume` or `browser.resume` on the
 * session completes, surviving restarts; then the step runs once more. A failed or cancelled run is tried again on
 * purpose as a new attempt (`apply --retry`): the same application and browser session, a new run id.
 */
import { Clock, Effect, Option, Schedule, Schema } from "effect"
import { Activity, DurableDeferred, Workflow } from "effect/workflow"
import { TaskEvents } from "../Cluster/Events.ts"
import { Fleet } from "../Cluster/Fleet.ts"
import { StepFailed } from "../Errors/Service.ts"
import { Profile } from "./Profile.ts"
import * as Runs from "./Runs.ts"
import * as SessionDriver from "./SessionDriver.ts"
import * as Steps from "./Steps.ts"
import * as Submit from "./Submit.ts"

export const JobApplication = Workflow.make("JobApplication", {
  payload: {
    job: Schema.String,
    profile: Profile,
    /** Which attempt of the application this run is: 1 (absent) for the first, then one more per retry. */
    attempt: Schema.optional(Schema.Number),
    /** The applicant's applications on the site, where a submit's fate can be read. */
    applications: Schema.optional(Schema.String)
  },
  success: Schema.Struct({ platform: Schema.String, url: Schema.String, confirmation: Schema.String }),
  error: StepFailed,
  // One application per applicant and job: starting it again joins the attempt under way.
  idempotencyKey: ({ job, profile, attempt }) =>
    attempt === undefined || attempt <= 1 ? `${job}\n${profile.email}` : `${job}\n${profile.email}\n#${attempt}`
})

export type Payload = typeof JobApplication.payloadSchema.Type

/** The application's id: its first attempt's run id. */
export const applicationId = (payload: Payload) => {
  const { attempt: _attempt, ...first } = payload
  return JobApplication.executionId(first)
}

/** The run of attempt `attempt` of the application `payload` names. */
export const runOf = (payload: Payload, attempt: number) => {
  const { attempt: _attempt, ...first } = payload
  return JobApplication.executionId(attempt <= 1 ? first : { ...first, attempt })
}

export const steps = [
  "start-browser",
  "analyze-form",
  "fill-fields",
  "upload-resume",
  "check-captcha",
  "submit",
  "verify",
  "cleanup"
] as const

/** What a person sends back when their part is done: for a submit whose fate is unknown, whether it went through. */
export const PersonAnswer = Schema.Struct({ answer: Schema.optional(Runs.Answer) })

/** The person's hand-back for a step, by the step's name. */
export const personFor = (step: string) => DurableDeferred.make(`person:${step}`, { success: PersonAnswer })

/** How long the page may take to show the site's answer to the submit (`SWITCHYARD_SUBMIT_WAIT_MS`, default 60 s). */
const submitWaitMs = () => Number(process.env.SWITCHYARD_SUBMIT_WAIT_MS ?? 60_000)

const Analysis = Schema.Struct({
  platform: Schema.String,
  fields: Schema.Array(Schema.String),
  submitted: Schema.Boolean
})
const Verified = Schema.Struct({ url: Schema.String, confirmation: Schema.String })

export const layer = JobApplication.toLayer(
  Effect.fnUntraced(function* (payload, executionId) {
    const { job, profile } = payload
    const events = yield* TaskEvents
    const attempt = payload.attempt ?? 1
    const run = executionId
    const application = attempt <= 1 ? run : yield* applicationId(payload)
    const session = Runs.sessionOf(application)
    // In a fleet, which runner ran each step: a step resumed elsewhere after a runner died shows it.
    const runner = Option.map(yield* Effect.serviceOption(Fleet), (fleet) => fleet.self).pipe(Option.getOrNull)

    // The attempt, written once: under its run, and under the application for a retry (with what the last one said).
    yield* Activity.make({
      name: "attempt",
      execute: Effect.gen(function* () {
        const previous =
          attempt > 1 ? Runs.outcomeOf(yield* events.list(yield* runOf(payload, attempt - 1))) : undefined
        const data = {
          application,
          attempt,
          run,
          session,
          ...(previous === undefined
            ? {}
            : { retryOf: yield* runOf(payload, attempt - 1), previous: previous.state, ...previousError(previous) })
        }
        yield* events.record(run, Runs.event.attemptStarted, data)
        if (application !== run) yield* events.record(application, Runs.event.attemptStarted, data)
      })
    })

    /** One step as an activity: its events, its retries on retryable failures, its driver on the session. */
    const activity = <A, S extends Schema.Top>(
      name: string,
      success: S & Schema.Codec<A, S["Encoded"]>,
      body: (driver: SessionDriver.Driver) => Effect.Effect<A, StepFailed>,
      platform?: string
    ) =>
      Activity.make({
        name,
        success,
        error: StepFailed,
        execute: Effect.gen(function* () {
          const tried = yield* Activity.CurrentAttempt
          const started = yield* Clock.currentTimeMillis
          const took = Clock.currentTimeMillis.pipe(Effect.map((now) => now - started))
          // A cancelled run starts no step, wherever and whenever it is resumed.
          if (Runs.outcomeOf(yield* events.list(run)).state === "cancelled") {
            return yield* new StepFailed({ step: name, retryable: false, message: "the run was cancelled" })
          }
          yield* events.record(run, "step_started", {
            step: name,
            attempt: tried,
            platform: platform ?? null,
            session,
            runner
          })
          yield* Effect.logInfo(`${name}: started`)
          const driver = yield* SessionDriver.make({ run, session, step: name, startUrl: job, platform })
          return yield* body(driver).pipe(
            // Retryable failures include a session whose runner just died: the fleet moves it within seconds.
            Effect.retry({ schedule: Schedule.spaced("1 second"), times: 15, while: (error) => error.retryable }),
            Effect.tapError((error) =>
              Effect.flatMap(took, (durationMs) =>
                events.record(run, "step_failed", {
                  step: name,
                  attempt: tried,
                  platform: platform ?? null,
                  durationMs,
                  error: error.message
                })
              )
            ),
            Effect.tap(() =>
              Effect.flatMap(took, (durationMs) =>
                events
                  .record(run, "step_completed", { step: name, attempt: tried, platform: platform ?? null, durationMs })
                  .pipe(Effect.andThen(Effect.logInfo(`${name}: done in ${durationMs} ms`)))
              )
            )
          )
        })
      })

    /**
     * A step that fails for good hands the page to a person — unless no person at the page could fix it (a setting
     * must change): the wait is durable (the process may die meanwhile), and `switchyard resume` on the session ends
     * it, with an answer when the step asked a question; then the step runs once more and must succeed.
     */
    const withPerson = <A, R>(
      name: string,
      step: (name: string, answer?: Runs.Answer) => Effect.Effect<A, StepFailed, R>
    ) =>
      step(name).pipe(
        Effect.catch((error: StepFailed) =>
          Effect.gen(function* () {
            if (error.retryable || error.setting !== undefined) return yield* Effect.fail(error)
            const person = personFor(name)
            const token = yield* DurableDeferred.token(person)
            const asked = yield* Activity.make({
              name: `${name}:ask-person`,
              success: Schema.Struct({ novnc: Schema.optional(Schema.String) }),
              execute: Effect.gen(function* () {
                // Where the person sees the browser, when human takeover is set up: the noVNC page.
                const driver = yield* SessionDriver.make({ run, session, step: name })
                const handed = yield* driver.answer("browser.handoff", { reason: error.message }).pipe(Effect.option)
                const novnc = Option.flatMap(handed, (answer) => {
                  if (!answer.ok) return Option.none()
                  // The link carries this takeover's password in its fragment: the person opens it and is in.
                  const result = answer.result as { link?: string; url?: string } | undefined
                  return Option.fromNullishOr(result?.link ?? result?.url)
                })
                const wait: Runs.Wait = {
                  run,
                  step: name,
                  session,
                  token,
                  reason: error.message,
                  ...(error.question === undefined ? {} : { question: error.question }),
                  ...(Option.isSome(novnc) ? { novnc: novnc.value } : {}),
                  at: new Date(yield* Clock.currentTimeMillis).toISOString()
                }
                const { run: _run, at: _at, ...data } = wait
                yield* events.record(run, Runs.event.humanNeeded, data)
                yield* Effect.logWarning(`${name}: waiting for a person on session ${session}: ${error.message}`)
                return Option.isSome(novnc) ? { novnc: novnc.value } : {}
              })
            })
            const { answer } = yield* DurableDeferred.await(person)
            // The person who took the browser over on its noVNC page hands it back: the step's next run needs it.
            if (asked.novnc !== undefined) {
              yield* Activity.make({
                name: `${name}:taken-back`,
                execute: SessionDriver.make({ run, session, step: name }).pipe(
                  Effect.flatMap((driver) => driver.answer("browser.resume", {})),
                  Effect.ignore
                )
              })
            }
            return yield* step(`${name}:after-person`, answer)
          })
        )
      )

    const application$ = Effect.gen(function* () {
      yield* activity("start-browser", Schema.Struct({ url: Schema.String, title: Schema.String }), (d) =>
        Steps.startBrowser(d, job)
      )
      const analysis = yield* activity("analyze-form", Analysis, Steps.analyzeForm)
      const platform = analysis.platform
      yield* withPerson("fill-fields", (name) =>
        activity(name, Schema.Struct({ filled: Schema.Number }), (d) => Steps.fillFields(d, profile), platform)
      )
      yield* withPerson("upload-resume", (name) =>
        activity(name, Schema.Struct({ uploaded: Schema.Boolean }), (d) => Steps.uploadResume(d, profile), platform)
      )
      yield* withPerson("check-captcha", (name) =>
        activity(name, Schema.Struct({ url: Schema.String }), Steps.checkCaptcha, platform)
      )
      const marks = Submit.marksOf(events, application)
      const submitted = yield* withPerson("submit", (name, answer) =>
        activity(
          name,
          Submit.Submitted,
          (d) =>
            Submit.submit(d, profile, {
              step: name,
              job,
              applications: payload.applications,
              marks,
              mark: (url) => Submit.mark(events, application, { run, attempt, step: name, url }),
              unmark: (id) => Submit.unmark(events, application, id, name),
              decided: (how) => events.record(run, Runs.event.submitDecided, { step: name, how }),
              answer,
              outcomeWaitMs: submitWaitMs()
            }),
          platform
        )
      )
      const verified = yield* withPerson("verify", (name) =>
        activity(name, Verified, (d) => Steps.verify(d, submitted.how === "person"), platform)
      )
      yield* activity(
        "cleanup",
        Schema.Boolean,
        (driver) =>
          Effect.gen(function* () {
            yield* driver.close
            return true
          }),
        platform
      )
      return { platform, url: verified.url, confirmation: verified.confirmation }
    })

    // How the run ended, written once, so any process can tell without a workflow engine.
    const finished = (data: Record<string, unknown>) =>
      Activity.make({ name: "finished", execute: events.record(run, Runs.event.runFinished, data) })
    return yield* application$.pipe(
      Effect.tap((result) => finished({ ok: true, result })),
      Effect.tapError((error) => finished({ ok: false, step: error.step, error: error.message }))
    )
  })
)

const previousError = (outcome: Runs.Outcome) => (outcome.state === "failed" ? { previousError: outcome.error } : {})
