/**
 * Which run a start of an application joins or begins: the attempt under way (or waiting for a person) is joined;
 * an application that ended is reported as it ended unless a retry is asked for, which begins the next attempt — a
 * new run of the same application, in the same browser session, after what the last one recorded.
 */
import { Effect } from "effect"
import * as Runs from "./Runs.ts"
import { applicationId, type Payload, runOf } from "./Workflow.ts"

export type Plan =
  /** The first attempt, never started. */
  | { readonly kind: "first"; readonly application: string; readonly attempt: 1; readonly run: string }
  /** An attempt under way or waiting for a person: it is joined (resumed where it stopped). */
  | {
      readonly kind: "join"
      readonly application: string
      readonly attempt: number
      readonly run: string
      readonly wait: Runs.Wait | undefined
    }
  /** The application ended (and no retry was asked for, or it succeeded): nothing runs. */
  | {
      readonly kind: "ended"
      readonly application: string
      readonly attempt: number
      readonly run: string
      readonly outcome: Exclude<Runs.Outcome, { readonly state: "running" }>
    }
  /** A new attempt after one that failed or was cancelled. */
  | {
      readonly kind: "retry"
      readonly application: string
      readonly attempt: number
      readonly run: string
      readonly previous: { readonly run: string; readonly outcome: Runs.Outcome }
    }

export const plan = (payload: Payload, retry: boolean) =>
  Effect.gen(function* () {
    const application = yield* applicationId(payload)
    const all = yield* Runs.attempts(application)
    const latest = yield* Runs.describe(all.at(-1)!)
    const at = { application, attempt: latest.attempt, run: latest.run }
    if (latest.attempt === 1 && latest.history.length === 0) return { kind: "first", ...at, attempt: 1 } as Plan
    if (latest.outcome.state === "running") return { kind: "join", ...at, wait: latest.wait } as Plan
    if (!retry || latest.outcome.state === "succeeded") return { kind: "ended", ...at, outcome: latest.outcome } as Plan
    const attempt = latest.attempt + 1
    return {
      kind: "retry",
      application,
      attempt,
      run: yield* runOf(payload, attempt),
      previous: { run: latest.run, outcome: latest.outcome }
    } as Plan
  })

/** The payload of the plan's run. */
export const payloadOf = (payload: Payload, plan: Plan): Payload => {
  const { attempt: _attempt, ...first } = payload
  return plan.attempt <= 1 ? first : { ...first, attempt: plan.attempt }
}

/** One line for a person about what the plan does (`storeFlag`: see `Runs.describeWait`). */
export const describe = (plan: Plan, storeFlag = "") => {
  switch (plan.kind) {
    case "first":
      return `run ${plan.run}: a new application`
    case "join":
      return `run ${plan.run} (attempt ${plan.attempt}) is under way: continuing it${plan.wait === undefined ? "" : `; it waits for a person:\n${Runs.describeWait(plan.wait, storeFlag)}`}`
    case "ended":
      return plan.outcome.state === "succeeded"
        ? `run ${plan.run} (attempt ${plan.attempt}) already applied`
        : `run ${plan.run} (attempt ${plan.attempt}) ${plan.outcome.state === "cancelled" ? "was cancelled" : `failed: ${plan.outcome.error}`}; nothing was sent again. Start a new attempt with --retry (or apply.start {"retry": true})`
    case "retry":
      return `run ${plan.run}: attempt ${plan.attempt}, a retry of run ${plan.previous.run} (${plan.previous.outcome.state === "failed" ? `failed: ${plan.previous.outcome.error}` : plan.previous.outcome.state}); the submit is still sent at most once`
  }
}
