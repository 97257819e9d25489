/**
 * An application's runs as the store records them, read from any process without a workflow engine: its attempts
 * (the first runs under the application's own id, each retry under an id of its own), how each ended, and the person
 * one waits for. `apply` reads it to join, retry or refuse; `apply --status`, `switchyard resume` and the JSON-RPC
 * methods read it too.
 */
import { Effect, Schema } from "effect"
import { type TaskEvent, TaskEvents } from "../Cluster/Events.ts"

/** The events a run writes about itself, by name. */
export const event = {
  attemptStarted: "attempt_started",
  runFinished: "run_finished",
  cancelRequested: "run_cancel_requested",
  humanNeeded: "human_needed",
  humanResumed: "human_resumed",
  resumeRequested: "human_resume_requested",
  submitAttempted: "submit_attempted",
  submitDecided: "submit_decided"
} as const

/** What a person answers when a submit's fate is unknown: the application went through, or it did not. */
export const Answer = Schema.Literals(["submitted", "not-submitted"])
export type Answer = typeof Answer.Type

export interface Attempt {
  readonly attempt: number
  readonly run: string
}

export type Outcome =
  | { readonly state: "running" }
  | { readonly state: "succeeded"; readonly result: Record<string, unknown> }
  | { readonly state: "failed"; readonly error: string }
  | { readonly state: "cancelled" }

/** A person a run waits for. */
export interface Wait {
  readonly run: string
  readonly step: string
  readonly session: string
  readonly token: string
  readonly reason: string
  /** Set when the wait needs an answer: whether a submit whose fate is unknown went through. */
  readonly question?: string
  /** The noVNC page to drive the browser from, when human takeover is configured. */
  readonly novnc?: string
  readonly at: string
}

/** The browser session an application drives, in every attempt: named after the application. */
export const sessionOf = (application: string) => `apply-${application.slice(0, 40)}`

/** The application a session belongs to. */
export const applicationOfSession = (session: string) =>
  session.startsWith("apply-") ? session.slice("apply-".length) : undefined

const latest = (events: ReadonlyArray<TaskEvent>, type: string) => events.findLast((e) => e.eventType === type)

/** The application's attempts, oldest first (the first, under the application's id, even when it wrote nothing). */
export const attempts = (application: string) =>
  Effect.gen(function* () {
    const events = yield* TaskEvents
    const found = new Map<number, Attempt>([[1, { attempt: 1, run: application }]])
    for (const e of yield* events.list(application)) {
      if (e.eventType !== event.attemptStarted) continue
      const attempt = Number(e.data.attempt)
      if (attempt > 0 && typeof e.data.run === "string") found.set(attempt, { attempt, run: e.data.run })
    }
    return [...found.values()].sort((a, b) => a.attempt - b.attempt)
  })

/** The application a run is an attempt of (the run itself for a first attempt or an unknown run). */
export const applicationOf = (run: string) =>
  Effect.gen(function* () {
    const events = yield* TaskEvents
    const started = latest(yield* events.list(run), event.attemptStarted)
    return typeof started?.data.application === "string" ? started.data.application : run
  })

/** How a run ended, from its own events; `running` while it has not (under way, or waiting for a person). */
export const outcomeOf = (history: ReadonlyArray<TaskEvent>): Outcome => {
  const finished = latest(history, event.runFinished)
  if (finished?.data.ok === true) return { state: "succeeded", result: (finished.data.result ?? {}) as never }
  if (latest(history, event.cancelRequested) !== undefined) return { state: "cancelled" }
  if (finished !== undefined) return { state: "failed", error: String(finished.data.error ?? "failed") }
  return { state: "running" }
}

/** The person `run` waits for now, if any (asked and not yet answered). */
export const waitOf = (run: string, history: ReadonlyArray<TaskEvent>): Wait | undefined => {
  const answered = new Set(
    history
      .filter((e) => e.eventType === event.humanResumed || e.eventType === event.resumeRequested)
      .map((e) => e.data.token)
  )
  const open = history.findLast((e) => e.eventType === event.humanNeeded && !answered.has(e.data.token))
  if (open === undefined || outcomeOf(history).state !== "running") return undefined
  const d = open.data
  return {
    run,
    step: String(d.step),
    session: String(d.session),
    token: String(d.token),
    reason: String(d.reason ?? ""),
    ...(typeof d.question === "string" ? { question: d.question } : {}),
    ...(typeof d.novnc === "string" ? { novnc: d.novnc } : {}),
    at: open.createdAt
  }
}

/** An attempt with what its events say: how it ended and whom it waits for. */
export const describe = (attempt: Attempt) =>
  Effect.gen(function* () {
    const events = yield* TaskEvents
    const history = yield* events.list(attempt.run)
    return { ...attempt, history, outcome: outcomeOf(history), wait: waitOf(attempt.run, history) }
  })

/** The application's latest attempt, described. */
export const current = (application: string) =>
  attempts(application).pipe(Effect.flatMap((all) => describe(all.at(-1)!)))

/** The command that ends a person's wait, as people type it. */
export const resumeCommand = (wait: Wait, storeFlag = "") =>
  wait.question === undefined
    ? `switchyard resume ${wait.session}${storeFlag}`
    : `switchyard resume ${wait.session} --submitted${storeFlag}   (or --not-submitted)`

/**
 * How a person learns of a wait: what is needed, where, and the exact command that ends it (`storeFlag`: what it
 * needs to find this run's store, `Store.flagFor`).
 */
export const describeWait = (wait: Wait, storeFlag = "") =>
  [
    `${wait.step} needs a person: ${wait.reason}`,
    `  where: browser session ${wait.session}${wait.novnc === undefined ? " (any browser tool on it; human takeover is not set up, so no noVNC page)" : `, on screen at ${wait.novnc}`}`,
    ...(wait.question === undefined ? [] : [`  question: ${wait.question}`]),
    `  when done: ${resumeCommand(wait, storeFlag)}`
  ].join("\n")
