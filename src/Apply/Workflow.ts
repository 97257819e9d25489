/**
 * Seed 001's job application as a durable `effect/workflow`: start-browser → analyze-form → fill-fields →
 * upload-resume → check-captcha → submit → verify, then cleanup. Each step is an activity, so a step that finished
 * is never run again when the workflow resumes after a crash or on another runner (its stored result is replayed);
 * a step still running when the process died runs again, and reads the page afresh. A step the model-free cascade
 * cannot finish — a human check, say — hands the page to a person: a durable wait (`DurableDeferred`) that
 * `browser.resume` on the session completes, surviving restarts; then the step runs once more.
 */
import { Effect, Option, Schedule, Schema } from "effect"
import { Activity, DurableDeferred, Workflow } from "effect/workflow"
import { TaskEvents } from "../Cluster/Events.ts"
import { Fleet } from "../Cluster/Fleet.ts"
import { StepFailed } from "../Errors/Service.ts"
import { Profile } from "./Profile.ts"
import * as SessionDriver from "./SessionDriver.ts"
import * as Steps from "./Steps.ts"

export const JobApplication = Workflow.make("JobApplication", {
  payload: { job: Schema.String, profile: Profile },
  success: Schema.Struct({ platform: Schema.String, url: Schema.String, confirmation: Schema.String }),
  error: StepFailed,
  // One application per applicant and job: starting it again joins the one under way.
  idempotencyKey: ({ job, profile }) => `${job}\n${profile.email}`
})

/** The browser session a run drives: named after the run, so any process finds it. */
export const sessionOf = (executionId: string) => `apply-${executionId.slice(0, 40)}`

/** The run a session belongs to, for the front door's `browser.resume`. */
export const runOf = (session: string) => (session.startsWith("apply-") ? session.slice("apply-".length) : undefined)

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

/** The person's hand-back for a step, by the step's name. */
export const personFor = (step: string) => DurableDeferred.make(`person:${step}`)

const Analysis = Schema.Struct({
  platform: Schema.String,
  fields: Schema.Array(Schema.String),
  submitted: Schema.Boolean
})
const Verified = Schema.Struct({ url: Schema.String, confirmation: Schema.String })

export const layer = JobApplication.toLayer(
  Effect.fnUntraced(function* ({ job, profile }, executionId) {
    const events = yield* TaskEvents
    const session = sessionOf(executionId)
    // In a fleet, which runner ran each step: a step resumed elsewhere after a runner died shows it.
    const runner = Option.map(yield* Effect.serviceOption(Fleet), (fleet) => fleet.self).pipe(Option.getOrNull)
    const run = executionId

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
          const attempt = yield* Activity.CurrentAttempt
          const started = Date.now()
          yield* events.record(run, "step_started", {
            step: name,
            attempt,
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
              events.record(run, "step_failed", {
                step: name,
                attempt,
                platform: platform ?? null,
                durationMs: Date.now() - started,
                error: error.message
              })
            ),
            Effect.tap(() =>
              events
                .record(run, "step_completed", {
                  step: name,
                  attempt,
                  platform: platform ?? null,
                  durationMs: Date.now() - started
                })
                .pipe(Effect.andThen(Effect.logInfo(`${name}: done in ${Date.now() - started} ms`)))
            )
          )
        })
      })

    /**
     * A step that fails for good hands the page to a person: the wait is durable (the process may die meanwhile),
     * and `browser.resume` on the session ends it; then the step runs once more and must succeed.
     */
    const withPerson = <A, E extends StepFailed, R>(name: string, step: (name: string) => Effect.Effect<A, E, R>) =>
      step(name).pipe(
        Effect.catch((error: E) =>
          Effect.gen(function* () {
            if (error.retryable) return yield* Effect.fail(error)
            const person = personFor(name)
            const token = yield* DurableDeferred.token(person)
            yield* Activity.make({
              name: `${name}:ask-person`,
              execute: events
                .record(run, "human_needed", { step: name, session, token, reason: error.message })
                .pipe(
                  Effect.andThen(
                    Effect.logWarning(`${name}: a person must take over session ${session}: ${error.message}`)
                  )
                )
            })
            yield* DurableDeferred.await(person)
            return yield* step(`${name}:after-person`)
          })
        )
      )

    yield* activity("start-browser", Schema.Struct({ url: Schema.String, title: Schema.String }), Steps.startBrowser)
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
    yield* withPerson("submit", (name) =>
      activity(
        name,
        Schema.Struct({ submitted: Schema.Boolean, already: Schema.Boolean }),
        (d) => Steps.submit(d, profile),
        platform
      )
    )
    const verified = yield* withPerson("verify", (name) => activity(name, Verified, Steps.verify, platform))
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
)
