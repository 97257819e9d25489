/**
 * What a person watching `switchyard apply` reads on stderr: each step as it starts and ends, with its duration, each
 * wait for a person with what is needed, where, and the command that ends it — read from the run's events in the
 * store, so the same lines come whether this process runs the steps or a fleet's runners do, and only what happens
 * from now on (a reconnect does not print the history again).
 */
import { Effect, Schedule } from "effect"
import { type TaskEvent, TaskEvents } from "../Cluster/Events.ts"
import * as Runs from "./Runs.ts"

const seconds = (ms: unknown) => `${(Number(ms ?? 0) / 1000).toFixed(1)} s`

export const say = (line: string) => process.stderr.write(`switchyard apply: ${line.replace(/\n/g, "\n  ")}\n`)

/** The line an event prints, if it prints one (`storeFlag`: see `Runs.describeWait`). */
export const lineOf = (run: string, e: TaskEvent, storeFlag = ""): string | undefined => {
  const d = e.data
  const on = typeof d.runner === "string" ? ` on ${d.runner}` : ""
  switch (e.eventType) {
    case "step_started":
      return `${d.step} started${on}${Number(d.attempt) > 1 ? ` (try ${d.attempt})` : ""}`
    case "step_completed":
      return `${d.step} done in ${seconds(d.durationMs)}`
    case "step_failed":
      return `${d.step} failed after ${seconds(d.durationMs)}: ${d.error}`
    case Runs.event.humanNeeded: {
      const wait = Runs.waitOf(run, [e])
      return wait === undefined ? undefined : Runs.describeWait(wait, storeFlag)
    }
    case Runs.event.humanResumed:
      return `${d.step}: a person resumed it${typeof d.answer === "string" ? ` (${d.answer})` : ""}`
    case Runs.event.submitDecided:
      return d.how === "confirmation"
        ? undefined
        : `${d.step}: the application was sent before; ${d.how === "person" ? "a person said it was received" : `the site shows it (${d.how})`}: not sent again`
    default:
      return undefined
  }
}

/**
 * Prints the run's events from now on: `poll` prints what is new (and lets `each` see the whole history: the process
 * running the application completes the requests it finds there), `loop` polls every half second until interrupted.
 */
export const follower = <R = never>(
  run: string,
  each?: (history: ReadonlyArray<TaskEvent>) => Effect.Effect<void, never, R>,
  storeFlag = ""
) =>
  Effect.gen(function* () {
    const events = yield* TaskEvents
    let seen = (yield* events.list(run)).length
    const poll = events.list(run).pipe(
      Effect.tap((all) =>
        Effect.sync(() => {
          for (const e of all.slice(seen)) {
            const line = lineOf(run, e, storeFlag)
            if (line !== undefined) say(line)
          }
          seen = all.length
        })
      ),
      Effect.tap((all) => each?.(all) ?? Effect.void),
      Effect.asVoid
    )
    return { poll, loop: poll.pipe(Effect.repeat(Schedule.spaced("500 millis")), Effect.asVoid) }
  })

/** A run as `apply --status` prints it: its application's attempts, how each ended, and its steps. */
export const statusText = (run: string, storeFlag = "") =>
  Effect.gen(function* () {
    const application = yield* Runs.applicationOf(run)
    const attempts = yield* Effect.forEach(yield* Runs.attempts(application), Runs.describe)
    const lines = [`application ${application} (browser session ${Runs.sessionOf(application)})`]
    for (const a of attempts) {
      const o = a.outcome
      const state =
        o.state === "succeeded"
          ? `applied: ${String(o.result.confirmation ?? "")} (${String(o.result.url ?? "")})`
          : o.state === "failed"
            ? `failed: ${o.error}`
            : o.state === "cancelled"
              ? "cancelled"
              : a.history.length === 0
                ? "not started"
                : a.wait === undefined
                  ? "under way (or stopped with its process: `switchyard apply` continues it)"
                  : "waiting for a person"
      lines.push(`attempt ${a.attempt}  run ${a.run}  ${state}`)
      if (a.wait !== undefined) lines.push(`  ${Runs.describeWait(a.wait, storeFlag).replace(/\n/g, "\n  ")}`)
      const steps = new Map<string, string>()
      for (const e of a.history) {
        const step = String(e.data.step ?? "")
        if (e.eventType === "step_started") steps.set(step, "running")
        if (e.eventType === "step_completed") steps.set(step, `done in ${seconds(e.data.durationMs)}`)
        if (e.eventType === "step_failed")
          steps.set(step, `failed after ${seconds(e.data.durationMs)}: ${e.data.error}`)
      }
      for (const [step, state] of steps) lines.push(`  ${step.padEnd(28)} ${state}`)
    }
    return lines.join("\n")
  })
