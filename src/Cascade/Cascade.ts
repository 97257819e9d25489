/**
 * The fallback cascade: try a call on each engine level in order, retrying a level on a Schedule, with a time limit
 * per attempt and a total budget, both enforced by interruption. What each attempt records (events, telemetry,
 * artifacts) is wrapped around it by `Instrumentation.ts`; the breakers are the `Breaker` service.
 *
 * Why a plain loop over levels and not `ExecutionPlan`: a plan step provides an engine Layer to the effect, but our
 * engines must be connected inside the Sandbox's one-client lease and reached through its switch protocol (capture
 * page state, disconnect, verify, connect, restore). Each level also needs per-level decisions a plan step cannot
 * see: skip when the engine is not configured or its breaker is open, stop when a failed `act` changed the page,
 * emit `level_skipped`/`cascade_escalation` with the level. Retries within a level are still an `Effect.retry` driven
 * by a `Schedule`, and an attempt learns its number on the level from `Schedule.CurrentMetadata`, as a plan step's
 * effect does from `ExecutionPlan.CurrentMetadata`.
 */
import { Context, Data, Effect, Layer, Option, Ref, Schedule } from "effect"
import type { Engine } from "../Engine/Engine.ts"
import * as EngineId from "../Engine/EngineId.ts"
import { NotConfigured, Timeout } from "../Errors/Engine.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as Events from "../Logging/Events.ts"
import { Sandbox } from "../Sandbox/Sandbox.ts"
import { Breaker } from "./Breaker.ts"
import { Engines } from "./Engines.ts"
import { type AttemptRef, capture, instrumented } from "./Instrumentation.ts"
import { type CascadeConfig, idOf, type Level } from "./Policy.ts"

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

/** Where the call is in the cascade: read when the total budget runs out, to say where it stopped. */
interface Position {
  readonly index: number
  readonly attempt: number
}

/** An attempt stopped by its level's time limit fails with `Timeout`. */
const limited =
  (at: AttemptRef, options: CallOptions) =>
  <A>(attempt: Effect.Effect<A, SwitchyardError>): Effect.Effect<A, SwitchyardError> =>
    attempt.pipe(
      Effect.timeoutOrElse({
        duration: at.level.timeoutPerAttemptMs,
        orElse: () =>
          Effect.fail(
            new Timeout({
              engine: at.level.engine,
              action: options.action,
              timeoutMs: at.level.timeoutPerAttemptMs,
              level: at.index,
              attempt: at.attempt,
              sideEffect: options.isAct ? "possible" : "none",
              message: `${options.action} on ${EngineId.label(idOf(at.level))} (level ${at.index}, attempt ${at.attempt}) took longer than ${at.level.timeoutPerAttemptMs} ms and was stopped`
            })
          )
      })
    )

/** Attempt ids numbered per call, so a call that runs the cascade twice (Stagehand, then the fallback) never reuses one. */
const attemptIds = Effect.gen(function* () {
  const call = yield* Events.CurrentCall
  const counter = call?.attempts ?? { n: 0 }
  return () => `${call?.attemptId ?? "call"}.${++counter.n}`
})

/** One level: attempts retried on the level's Schedule while the error is retryable and no act changed the page. */
const runLevel = <A>(
  config: CascadeConfig,
  runner: Runner<A>,
  options: CallOptions,
  level: Level,
  index: number,
  position: Ref.Ref<Position>,
  nextId: () => string
): Effect.Effect<A, SwitchyardError | Halt> => {
  const once = Effect.gen(function* () {
    const { attempt: retried } = yield* Schedule.CurrentMetadata
    const at: AttemptRef = { id: nextId(), level, index, attempt: retried + 1 }
    yield* Ref.set(position, { index, attempt: at.attempt })
    const before = options.isAct ? yield* runner.fingerprint : ""
    const outcome = yield* Effect.result(
      runner.attempt(at).pipe(limited(at, options), instrumented(at, options.action, runner))
    )
    if (outcome._tag === "Success") return outcome.success
    const error = outcome.failure
    // A failed act that may have acted is repeated only when the page shows it did nothing.
    const possible = "sideEffect" in error && error.sideEffect === "possible"
    if (!options.isAct || !possible || config.repeatPossibleSideEffects) return yield* Effect.fail(error)
    const after = yield* runner.fingerprint
    return yield* Effect.fail(after === before ? error : new Halt({ error }))
  })
  const schedule = Schedule.exponential(config.retryBaseDelayMs ?? 250).pipe(Schedule.upTo({ times: level.retryCount }))
  return once.pipe(Effect.retry({ schedule, while: (e) => !(e instanceof Halt) && e.retryable }))
}

/** Runs one call through the cascade's levels; the caller gets the first success or a typed error. */
export const run = <A>(
  config: CascadeConfig,
  runner: Runner<A>,
  options: CallOptions
): Effect.Effect<A, SwitchyardError> =>
  Effect.gen(function* () {
    const position = yield* Ref.make<Position>({ index: 0, attempt: 0 })
    const levels = Effect.gen(function* () {
      const nextId = yield* attemptIds
      let last: SwitchyardError | undefined
      const skipped: Array<string> = []
      for (const [index, level] of config.levels.entries()) {
        yield* Ref.set(position, { index, attempt: 0 })
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
        const outcome = yield* Effect.result(runLevel(config, runner, options, level, index, position, nextId))
        if (outcome._tag === "Success") return outcome.success
        if (outcome.failure instanceof Halt) return yield* Effect.fail(outcome.failure.error)
        last = outcome.failure
        yield* escalate(config, index, last)
      }
      return yield* Effect.fail(
        last ??
          new NotConfigured({
            action: options.action,
            message: `no engine level could run ${options.action}: ${skipped.join("; ")}`
          })
      )
    })
    return yield* levels.pipe(
      Effect.timeoutOrElse({
        duration: config.totalTimeoutMs,
        orElse: () =>
          Ref.get(position).pipe(
            Effect.flatMap(({ index, attempt }) =>
              Effect.fail(
                new Timeout({
                  action: options.action,
                  timeoutMs: config.totalTimeoutMs,
                  level: index,
                  attempt,
                  sideEffect: options.isAct ? "possible" : "none",
                  message: `${options.action} used the cascade's whole budget of ${config.totalTimeoutMs} ms (stopped at level ${index})`
                })
              )
            )
          )
      })
    )
  })

/** The level at `index` failed: say where the cascade goes next. */
const escalate = (config: CascadeConfig, index: number, failure: SwitchyardError) => {
  const level = config.levels[index]!
  const next = index + 1 < config.levels.length ? index + 1 : -1
  const to = next >= 0 ? EngineId.label(idOf(config.levels[next]!)) : null
  const reason = `${failure.type}: ${failure.message}`
  return Effect.all([
    Events.emit({ event: "fallback", from: EngineId.label(idOf(level)), to, reason }),
    Events.emit({
      event: "cascade_escalation",
      fromLevel: index,
      from: EngineId.label(idOf(level)),
      toLevel: next >= 0 ? next : null,
      to,
      reason
    })
  ])
}

// ---------------------------------------------------------------------------------------------------------------
// The service: levels run on the session's Sandbox, engines come from the Engines registry, breakers per engine.

export interface CascadeCall<A> extends CallOptions {
  readonly config: CascadeConfig
  readonly run: (engine: Engine["Service"]) => Effect.Effect<A, SwitchyardError>
}

export class Cascade extends Context.Service<
  Cascade,
  { readonly call: <A>(call: CascadeCall<A>) => Effect.Effect<A, SwitchyardError> }
>()("switchyard/Cascade") {
  /** One breaker state per Cascade (per session), as the Breaker layer is built with it. */
  static readonly layer = Layer.effect(
    Cascade,
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const engines = yield* Engines
      const breaker = yield* Breaker
      const artifacts = capture(sandbox.artifacts)
      const fingerprint = sandbox.fingerprint.pipe(Effect.orElseSucceed(() => "unknown"))

      const skip = (level: Level) =>
        Effect.gen(function* () {
          const configured = yield* Effect.result(engines.specFor(level))
          if (configured._tag === "Failure") return Option.some(configured.failure.message)
          return Option.map(
            yield* breaker.check(idOf(level)),
            (open) => `${open.failures} consecutive failures; skipped for ${Math.ceil(open.retryAfterMs / 1000)} s more`
          )
        })

      return Cascade.of({
        call: <A>(call: CascadeCall<A>) =>
          run<A>(
            call.config,
            {
              attempt: ({ level }) =>
                engines.specFor(level).pipe(Effect.flatMap((spec) => sandbox.use(spec, call.run))),
              skip,
              fingerprint,
              onSuccess: (at) => breaker.success(idOf(at.level)).pipe(Effect.andThen(artifacts(at))),
              onFailure: (at, error) =>
                artifacts(at, error).pipe(Effect.andThen(breaker.failure(idOf(at.level), error, call.config)))
            },
            call
          )
      })
    })
  ).pipe(Layer.provide(Breaker.layer))
}
