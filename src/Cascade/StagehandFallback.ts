/**
 * Seed 000's policy around the Stagehand levels: Stagehand gets one retry per request or step, then it is disabled
 * there and the call goes to the fallback levels with what is left of its time budget. Other calls run the cascade.
 */
import { Clock, Effect, Ref, type Result } from "effect"
import * as EngineId from "../EngineId.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as Events from "../Logging/Events.ts"
import { type CascadeConfig, idOf, type Level } from "./Policy.ts"

/** Stagehand's state for one request or step; the attempt log reads it when it stamps each event. */
export interface Flags {
  readonly stagehandRetryUsed: boolean
  readonly stagehandDisabled: boolean
}

export interface StagehandFallbackOptions {
  /** Route to the fallback engines after Stagehand's second failure; off: Stagehand's errors are final. */
  readonly fallback?: boolean
  /** Error types that earn Stagehand its one retry; others go to the fallback at once. Default: any retryable. */
  readonly retryOn?: ReadonlyArray<string>
}

export interface Routed<A> {
  readonly outcome: Result.Result<A, SwitchyardError>
  /** Guidance for the agent: retry Stagehand, or the fallback is in use now. */
  readonly message: string | undefined
}

const logFallback = (action: string, attempt: number, reason: string, fallback: "retry" | "webview") =>
  Effect.logInfo(JSON.stringify({ event: "stagehand_fallback", action, attempt, reason, fallback }))

/**
 * Runs one call under the policy: `run` runs it on the levels of the config it is given; `usable` says whether a
 * level's engine is configured here.
 */
export const make =
  (options: StagehandFallbackOptions, usable: (level: Level) => Effect.Effect<boolean>) =>
  <A>(
    action: string,
    config: CascadeConfig,
    flags: Ref.Ref<Flags>,
    run: (config: CascadeConfig) => Effect.Effect<A, SwitchyardError>
  ): Effect.Effect<Routed<A>> =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const stagehand = config.levels.filter((l) => l.engine === "stagehand")
      const rest = { ...config, levels: config.levels.filter((l) => l.engine !== "stagehand") }
      const stagehandUsable = (yield* Effect.forEach(stagehand, usable)).some((ok) => ok)
      const fallbackConfig = rest.levels.length > 0 ? rest : config
      if ((yield* Ref.get(flags)).stagehandDisabled || !stagehandUsable || stagehand.length === 0) {
        return { outcome: yield* Effect.result(run(fallbackConfig)), message: undefined }
      }
      const first = yield* Effect.result(run({ ...config, levels: stagehand }))
      // A dialog the call opened (or found) is the page's answer, not Stagehand's failure: the agent answers it first.
      const dialog = first._tag === "Failure" && first.failure.type === "dialog_open"
      if (first._tag === "Success" || dialog || !(options.fallback ?? true) || rest.levels.length === 0) {
        return { outcome: first, message: undefined }
      }
      const reason = first.failure.message
      // A resting Stagehand (its breaker open) would fail the retry the same way: fall back at once.
      const earnsRetry =
        first.failure.retryable &&
        first.failure.type !== "engine_cooling_down" &&
        (options.retryOn === undefined || options.retryOn.includes(first.failure.type))
      if (earnsRetry && !(yield* Ref.get(flags)).stagehandRetryUsed) {
        yield* Ref.update(flags, (f) => ({ ...f, stagehandRetryUsed: true }))
        yield* logFallback(action, 1, reason, "retry")
        return { outcome: first, message: `Stagehand failed: ${reason}. Try Stagehand once more.` }
      }
      yield* Ref.update(flags, (f) => ({ ...f, stagehandDisabled: true }))
      yield* logFallback(action, 2, reason, "webview")
      yield* Events.emit({ event: "disabled", provider: "stagehand", reason })
      yield* Events.emit({
        event: "fallback",
        from: stagehand.map((l) => EngineId.label(idOf(l))).join(" → "),
        to: rest.levels.map((l) => EngineId.label(idOf(l))).join(" → "),
        reason
      })
      // One call, one budget: the fallback gets what Stagehand left of it.
      const remaining = config.totalTimeoutMs - ((yield* Clock.currentTimeMillis) - started)
      if (remaining <= 0) {
        return {
          outcome: first,
          message: `Stagehand failed again: ${reason}. The call used its whole budget; the next call uses the fallback tools.`
        }
      }
      return {
        outcome: yield* Effect.result(run({ ...rest, totalTimeoutMs: remaining })),
        message: `Stagehand failed again: ${reason}. Using fallback tools now.`
      }
    })
