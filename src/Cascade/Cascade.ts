/**
 * The fallback cascade: try a call on each engine level in order, retrying a level on a Schedule, with a time limit
 * per attempt and a total budget, both enforced by interruption.
 *
 * Why a plain loop over levels and not `ExecutionPlan`: a plan step provides an engine Layer to the effect, but our
 * engines must be connected inside the Sandbox's one-client lease and reached through its switch protocol (capture
 * page state, disconnect, verify, connect, restore). Each level also needs per-level decisions a plan step cannot
 * see: skip when the engine is not configured or its breaker is open, stop when a failed `act` changed the page,
 * emit `engine_failure`/`cascade_escalation` with the level and attempt. Retries within a level are still an
 * `Effect.retry` driven by a `Schedule`.
 */
import { Clock, Context, Data, Effect, Layer, Option, Schedule } from "effect"
import type { Engine } from "../Engine/Engine.ts"
import * as EngineId from "../Engine/EngineId.ts"
import { NotConfigured, Timeout } from "../Errors/Engine.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as Artifacts from "../Logging/Artifacts.ts"
import * as Events from "../Logging/Events.ts"
import * as Telemetry from "../Logging/Telemetry.ts"
import { Sandbox } from "../Sandbox/Sandbox.ts"
import { Engines } from "./Engines.ts"
import { type CascadeConfig, idOf, type Level } from "./Policy.ts"

export interface AttemptRef {
  /** `<call attemptId>.<n>`: the n-th engine attempt of the call. */
  readonly id: string
  readonly level: Level
  /** Position of the level in the cascade, from 0. */
  readonly index: number
  /** Attempt number on this level, from 1. */
  readonly attempt: number
}

/** How the cascade reaches engines: injected, so the policy can be tested on virtual time without a browser. */
export interface Runner<A> {
  readonly attempt: (at: AttemptRef) => Effect.Effect<A, SwitchyardError>
  /** A reason to skip a level before trying it (not configured, breaker open). */
  readonly skip: (level: Level, index: number) => Effect.Effect<Option.Option<string>>
  /** A digest of the page, compared around a failed `act` to tell whether it changed anything. */
  readonly fingerprint: Effect.Effect<string>
  readonly onSuccess?: (at: AttemptRef) => Effect.Effect<void>
  readonly onFailure?: (at: AttemptRef, error: SwitchyardError) => Effect.Effect<void>
}

export interface CallOptions {
  /** Tool name, for events and errors. */
  readonly action: string
  /** An `act`: a failure may have changed the page. */
  readonly isAct: boolean
}

/** A failed act changed the page: repeating it could do it twice, so the cascade stops with this error. */
class Halt extends Data.TaggedClass("Halt")<{ readonly error: SwitchyardError }> {}

const runLevel = <A>(
  config: CascadeConfig,
  runner: Runner<A>,
  options: CallOptions,
  level: Level,
  index: number,
  nextId: (attempt: number) => string
) =>
  Effect.gen(function* () {
    let attempt = 0
    let before = ""
    const one = Effect.gen(function* () {
      attempt++
      const at: AttemptRef = { id: nextId(attempt), level, index, attempt }
      if (options.isAct) before = yield* runner.fingerprint
      const ref = { engine: level.engine, ...(level.mode ? { mode: level.mode } : {}), level: index, attempt }
      const lifecycle = { attemptId: at.id, provider: level.engine, ...ref }
      yield* Events.emit({ event: "start", ...lifecycle })
      const started = yield* Clock.currentTimeMillis
      // One terminal event per attempt: an interruption while a failure is being recorded adds none.
      let ended = false
      return yield* runner.attempt(at).pipe(
        Effect.timeoutOrElse({
          duration: level.timeoutPerAttemptMs,
          orElse: () =>
            Effect.fail(
              new Timeout({
                engine: level.engine,
                action: options.action,
                timeoutMs: level.timeoutPerAttemptMs,
                level: index,
                attempt,
                sideEffect: options.isAct ? "possible" : "none",
                message: `${options.action} on ${EngineId.label(idOf(level))} (level ${index}, attempt ${attempt}) took longer than ${level.timeoutPerAttemptMs} ms and was stopped`
              })
            )
        }),
        Effect.tap(() =>
          Effect.gen(function* () {
            const durationMs = (yield* Clock.currentTimeMillis) - started
            ended = true
            yield* Events.emit({ event: "success", ...lifecycle, durationMs, outcome: "success" })
            yield* Telemetry.recordOperation(EngineId.label(idOf(level)), "success", durationMs)
            yield* Events.emit({ event: "engine_operation", ...ref, durationMs, outcome: "success" })
            if (runner.onSuccess) yield* runner.onSuccess(at)
          })
        ),
        Effect.tapError((error) =>
          Effect.gen(function* () {
            const durationMs = (yield* Clock.currentTimeMillis) - started
            ended = true
            yield* Events.emit({
              event: "failure",
              ...lifecycle,
              durationMs,
              outcome: "failure",
              reason: error.message,
              errorType: error.type,
              retryable: error.retryable
            })
            yield* Telemetry.recordOperation(EngineId.label(idOf(level)), "failure", durationMs, error.type)
            yield* Events.emit({
              event: "engine_operation",
              ...ref,
              durationMs,
              outcome: "failure",
              errorType: error.type
            })
            yield* Events.emit({
              event: "engine_failure",
              ...ref,
              errorType: error.type,
              message: error.message,
              retryable: error.retryable
            })
            if (runner.onFailure) yield* runner.onFailure(at, error)
          })
        ),
        // An attempt stopped from outside (the total budget, shutdown, a cancelled call) still gets its terminal event.
        Effect.onInterrupt(() =>
          Clock.currentTimeMillis.pipe(
            Effect.flatMap((now) =>
              ended
                ? Effect.void
                : Events.emit({
                    event: "failure",
                    ...lifecycle,
                    durationMs: now - started,
                    outcome: "failure",
                    reason: "the attempt was stopped before it finished (time budget, shutdown or a cancelled call)",
                    errorType: "interrupted",
                    retryable: true
                  })
            )
          )
        ),
        Effect.withSpan("Cascade.attempt", {
          attributes: {
            attemptId: at.id,
            engine: EngineId.label(idOf(level)),
            level: index,
            attempt,
            action: options.action
          }
        })
      )
    })

    // A failed act that may have acted is repeated only when the page shows it did nothing.
    const checked = one.pipe(
      Effect.catch((error): Effect.Effect<never, SwitchyardError | Halt> => {
        const possible = "sideEffect" in error && error.sideEffect === "possible"
        if (!options.isAct || !possible || config.repeatPossibleSideEffects) return Effect.fail(error)
        return runner.fingerprint.pipe(
          Effect.flatMap((after) => Effect.fail(after === before ? error : new Halt({ error })))
        )
      })
    )
    const schedule = Schedule.exponential(config.retryBaseDelayMs ?? 250).pipe(
      Schedule.upTo({ times: level.retryCount })
    )
    return yield* checked.pipe(Effect.retry({ schedule, while: (e) => !(e instanceof Halt) && e.retryable }))
  })

/** Runs one call through the cascade's levels; the caller gets the first success or a typed error. */
export const run = <A>(
  config: CascadeConfig,
  runner: Runner<A>,
  options: CallOptions
): Effect.Effect<A, SwitchyardError> => {
  let position = { index: 0, attempt: 0 }
  const levels = Effect.gen(function* () {
    const call = yield* Events.CurrentCall
    // Numbered per call, so a call that runs the cascade twice (Stagehand, then the fallback) never reuses an id.
    const counter = call?.attempts ?? { n: 0 }
    const nextId = (attempt: number) => {
      position = { ...position, attempt }
      return `${call?.attemptId ?? "call"}.${++counter.n}`
    }
    let last: SwitchyardError | undefined
    const skipped: Array<string> = []
    for (const [index, level] of config.levels.entries()) {
      position = { index, attempt: 0 }
      const skip = yield* runner.skip(level, index)
      if (Option.isSome(skip)) {
        skipped.push(`${EngineId.label(idOf(level))}: ${skip.value}`)
        yield* Events.emit({
          event: "level_skipped",
          engine: level.engine,
          ...(level.mode ? { mode: level.mode } : {}),
          level: index,
          reason: skip.value
        })
        continue
      }
      const outcome = yield* Effect.result(runLevel(config, runner, options, level, index, nextId))
      if (outcome._tag === "Success") return outcome.success
      const failure = outcome.failure
      if (failure instanceof Halt) return yield* Effect.fail(failure.error)
      last = failure
      const next = config.levels.findIndex((_, i) => i > index)
      const to = next >= 0 ? EngineId.label(idOf(config.levels[next]!)) : null
      const reason = `${failure.type}: ${failure.message}`
      yield* Events.emit({ event: "fallback", from: EngineId.label(idOf(level)), to, reason })
      yield* Events.emit({
        event: "cascade_escalation",
        fromLevel: index,
        from: EngineId.label(idOf(level)),
        toLevel: next >= 0 ? next : null,
        to,
        reason
      })
    }
    return yield* Effect.fail(
      last ??
        new NotConfigured({
          action: options.action,
          message: `no engine level could run ${options.action}: ${skipped.join("; ")}`
        })
    )
  })
  return levels.pipe(
    Effect.timeoutOrElse({
      duration: config.totalTimeoutMs,
      orElse: () =>
        Effect.fail(
          new Timeout({
            action: options.action,
            timeoutMs: config.totalTimeoutMs,
            level: position.index,
            attempt: position.attempt,
            sideEffect: options.isAct ? "possible" : "none",
            message: `${options.action} used the cascade's whole budget of ${config.totalTimeoutMs} ms (stopped at level ${position.index})`
          })
        )
    })
  )
}

// ---------------------------------------------------------------------------------------------------------------
// The service: levels run on the session's Sandbox, engines come from the Engines registry, a breaker per level.

export interface CascadeCall<A> extends CallOptions {
  readonly config: CascadeConfig
  readonly run: (engine: Engine["Service"]) => Effect.Effect<A, SwitchyardError>
}

export class Cascade extends Context.Service<
  Cascade,
  { readonly call: <A>(call: CascadeCall<A>) => Effect.Effect<A, SwitchyardError> }
>()("switchyard/Cascade") {
  static readonly layer = Layer.effect(
    Cascade,
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const engines = yield* Engines
      // Seed 001 §4 criterion 1: consecutive failures trip a level for a while, across calls.
      const breakers = new Map<string, { failures: number; openUntil: number }>()

      const fingerprint = sandbox.fingerprint.pipe(Effect.orElseSucceed(() => "unknown"))

      /** Best effort: artifacts never fail or change the outcome of an attempt. */
      const capture = (at: AttemptRef, error?: SwitchyardError) =>
        Effect.gen(function* () {
          const sink = yield* Artifacts.Artifacts
          const call = yield* Events.CurrentCall
          if (call === undefined) return
          if (sink.screenshots) {
            const png = yield* sandbox.artifacts.screenshot
            if (Option.isSome(png)) yield* sink.write(call.traceId, `${at.id}.png`, png.value)
          }
          if (error !== undefined && sink.snapshots) {
            const lookedFor = "target" in error ? error.target : undefined
            const snapshot = yield* sandbox.artifacts.snapshot(lookedFor)
            if (Option.isSome(snapshot)) {
              yield* sink.write(call.traceId, `${at.id}.snapshot.json`, {
                attemptId: at.id,
                error: { type: error.type, message: error.message },
                ...(snapshot.value as object)
              })
            }
          }
        })

      return Cascade.of({
        call: <A>(call: CascadeCall<A>) =>
          run<A>(
            call.config,
            {
              attempt: ({ level }) =>
                engines.specFor(level).pipe(Effect.flatMap((spec) => sandbox.use(spec, call.run))),
              skip: (level) =>
                Effect.gen(function* () {
                  const configured = yield* Effect.result(engines.specFor(level))
                  if (configured._tag === "Failure") return Option.some(configured.failure.message)
                  const breaker = breakers.get(EngineId.label(idOf(level)))
                  const now = yield* Clock.currentTimeMillis
                  if (breaker !== undefined && breaker.openUntil > now) {
                    return Option.some(
                      `${breaker.failures} consecutive failures; skipped for ${Math.ceil((breaker.openUntil - now) / 1000)} s more`
                    )
                  }
                  return Option.none()
                }),
              fingerprint,
              onSuccess: (at) =>
                Effect.sync(() => void breakers.delete(EngineId.label(idOf(at.level)))).pipe(
                  Effect.andThen(capture(at))
                ),
              onFailure: (at, error) =>
                Effect.gen(function* () {
                  yield* capture(at, error)
                  const level = at.level
                  const key = EngineId.label(idOf(level))
                  const failures = (breakers.get(key)?.failures ?? 0) + 1
                  const now = yield* Clock.currentTimeMillis
                  const max = call.config.maxFailures ?? Number.POSITIVE_INFINITY
                  breakers.set(key, {
                    failures,
                    openUntil: failures >= max ? now + (call.config.cooldownMs ?? 60_000) : 0
                  })
                })
            },
            call
          )
      })
    })
  )
}
