/**
 * The one click that must happen at most once: sending the application. A durable mark is written before the click;
 * whenever the step runs again after it (a crash, a retried step, a new attempt of the run) it never clicks on its
 * own: it decides from the site — a confirmation shown, the job's page saying "already applied", the applicant's
 * applications listing the job — and when the site says nothing, asks a person whether the application went through.
 */
import { Clock, Effect, Schema } from "effect"
import type { TaskEvents } from "../Cluster/Events.ts"
import { StepFailed } from "../Errors/Service.ts"
import type { Profile } from "./Profile.ts"
import { type Answer, event } from "./Runs.ts"
import type { Driver, Facts } from "./SessionDriver.ts"
import { fillPage, isConfirmation, submitAction } from "./Steps.ts"

/** A submit's durable mark: when and from which page the click was about to be sent. */
export interface Mark {
  readonly id: string
  readonly at: string
  readonly url: string
  readonly run: string
}

/** How the step knows the application went through. */
export const How = Schema.Literals(["confirmation", "already-applied", "applications-list", "person"])
export type How = typeof How.Type

export const Submitted = Schema.Struct({ submitted: Schema.Boolean, already: Schema.Boolean, how: How })
export type Submitted = typeof Submitted.Type

/** The event that takes a mark back. */
const notSent = "submit_not_sent"

/** The application's marks still standing, oldest first, from the store. */
export const marksOf = (events: TaskEvents["Service"], application: string) =>
  events.list(application).pipe(
    Effect.map((all) => {
      const taken = new Set(all.filter((e) => e.eventType === notSent).map((e) => e.data.id))
      return all
        .filter((e) => e.eventType === event.submitAttempted && !taken.has(e.data.id))
        .map(
          (e): Mark => ({
            id: String(e.data.id),
            at: String(e.data.at),
            url: String(e.data.url),
            run: String(e.data.run)
          })
        )
    })
  )

const unstored = (step: string, what: string) => (error: { readonly message: string }) =>
  new StepFailed({ step, retryable: true, message: `${what}: ${error.message}` })

/** Writes the mark before the click, durably (the click waits for it), and answers its id. */
export const mark = (
  events: TaskEvents["Service"],
  application: string,
  data: { readonly run: string; readonly attempt: number; readonly step: string; readonly url: string }
) =>
  Effect.gen(function* () {
    const id = crypto.randomUUID()
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    yield* events
      .append(application, event.submitAttempted, { id, at, ...data })
      .pipe(Effect.mapError(unstored(data.step, "the submit's mark could not be stored, so the click was not sent")))
    return id
  })

/** Takes a mark back: the click it announced certainly sent nothing. */
export const unmark = (events: TaskEvents["Service"], application: string, id: string, step: string) =>
  events
    .append(application, notSent, { id })
    .pipe(Effect.mapError(unstored(step, "taking the submit's mark back failed")))

export interface SubmitContext {
  readonly step: string
  /** The job's page, where a site that knows the applicant says it already applied. */
  readonly job: string
  /** The applicant's applications on the site, when known: a listed job was applied to. */
  readonly applications?: string | undefined
  /** The marks of every earlier submit of this application, in any run. */
  readonly marks: Effect.Effect<ReadonlyArray<Mark>>
  /** Writes the mark and answers its id; the click is not sent unless it was written. */
  readonly mark: (url: string) => Effect.Effect<string, StepFailed>
  /** Takes a mark back: its click certainly sent nothing (the button was not there). */
  readonly unmark: (id: string) => Effect.Effect<void, StepFailed>
  /** Records how the step decided. */
  readonly decided: (how: How) => Effect.Effect<void>
  /** A person's answer, when the step runs after one. */
  readonly answer?: Answer | undefined
  /** How long the page may take to show the site's answer after the click (a slow site). */
  readonly outcomeWaitMs: number
}

const sameJob = (href: string, job: string) => {
  if (!URL.canParse(href) || !URL.canParse(job)) return false
  const a = new URL(href)
  const b = new URL(job)
  return a.host === b.host && a.pathname.replace(/\/$/, "") === b.pathname.replace(/\/$/, "")
}

/** Failures that show the click was never sent. */
const sentNothing = (error: { readonly type: string; readonly sideEffect?: string }) =>
  error.sideEffect === "none" ||
  ["invalid_input", "not_configured", "busy", "lease_timeout", "engine_cooling_down", "rejected_by_policy"].includes(
    error.type
  )

/** Reads the page, or nothing when it cannot be read now (a page still loading, or not reached). */
const look = (driver: Driver) => driver.facts.pipe(Effect.option)

const visit = (driver: Driver, url: string) =>
  driver.call("browser.navigate", { url }).pipe(
    Effect.andThen(look(driver)),
    Effect.catch(() => Effect.succeedNone)
  )

/** What the site says of this application: applied (and how it says so), or nothing. */
export const siteState = (driver: Driver, context: Pick<SubmitContext, "job" | "applications">) =>
  Effect.gen(function* () {
    const jobPage = yield* visit(driver, context.job)
    if (jobPage._tag === "Some" && isConfirmation(jobPage.value)) return "already-applied" as const
    if (context.applications !== undefined) {
      const list = yield* visit(driver, context.applications)
      if (list._tag === "Some" && list.value.links.some((link) => sameJob(link.href, context.job)))
        return "applications-list" as const
    }
    return undefined
  })

/** Waits, bounded, for the page to show the site's answer to the click: a confirmation, or a page that is none. */
const outcome = (driver: Driver, waitMs: number) =>
  Effect.gen(function* () {
    const deadline = (yield* Clock.currentTimeMillis) + waitMs
    for (;;) {
      const page = yield* look(driver)
      if (page._tag === "Some" && isConfirmation(page.value)) return true
      if ((yield* Clock.currentTimeMillis) >= deadline) return false
      yield* Effect.sleep(1_000)
    }
  })

/** The person's question when the site does not tell. */
const ask = (step: string, marks: ReadonlyArray<Mark>, applications: string | undefined) => {
  const last = marks.at(-1)!
  const where = applications === undefined ? "the site (its list of your applications)" : applications
  return new StepFailed({
    step,
    retryable: false,
    question: `was the application sent at ${last.at} received? Check ${where}.`,
    message: `the application's Submit was clicked at ${last.at} on ${last.url}, and the site shows neither a confirmation nor the application: it is not clicked again without a person's word`
  })
}

/** Submits the application at most once, deciding from the site and a person after any earlier click. */
export const submit = (driver: Driver, profile: Profile, context: SubmitContext) =>
  Effect.gen(function* () {
    const marks = yield* context.marks
    const done = (how: How, already: boolean) =>
      context.decided(how).pipe(Effect.as({ submitted: true, already, how } satisfies Submitted))
    const now: Facts = yield* driver.facts
    if (isConfirmation(now)) return yield* done("confirmation", marks.length > 0)
    if (context.answer === "submitted") return yield* done("person", true)
    let form = now
    if (marks.length > 0) {
      if (context.answer !== "not-submitted") {
        const said = yield* siteState(driver, context)
        if (said !== undefined) return yield* done(said, true)
        return yield* ask(context.step, marks, context.applications)
      }
      // A person said the earlier click sent nothing: back to the form it was on.
      const at = marks.at(-1)!.url
      if (now.url !== at) {
        yield* driver.call("browser.navigate", { url: at })
        form = yield* driver.facts
        if (isConfirmation(form)) return yield* done("confirmation", true)
      }
    }
    // After a restore the browser's form is fresh: whatever the draft lost is set again first.
    yield* fillPage(driver, profile, form)
    const id = yield* context.mark(form.url)
    // Whatever the click answers (a slow site makes it time out), the page and then the site tell what happened;
    // only a click that certainly did nothing (no such button) takes its mark back and fails as it did.
    const clicked = yield* driver.answer("browser.act", submitAction("submit the application"))
    if (!clicked.ok && clicked.error !== undefined && sentNothing(clicked.error)) {
      yield* context.unmark(id)
      return yield* new StepFailed({
        step: context.step,
        retryable: clicked.error.retryable,
        message: `browser.act failed: ${clicked.error.type}: ${clicked.error.message}`
      })
    }
    if (yield* outcome(driver, context.outcomeWaitMs)) return yield* done("confirmation", false)
    const said = yield* siteState(driver, context)
    if (said !== undefined) return yield* done(said, false)
    return yield* ask(context.step, yield* context.marks, context.applications)
  })
