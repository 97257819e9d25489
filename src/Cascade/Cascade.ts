/**
 * The fallback cascade: try a call on each engine level in order, retrying a level on a Schedule, with a time limit
 * per attempt and a total budget, both enforced by interruption. What each attempt records (events, telemetry,
 * artifacts) is wrapped around it by `Instrumentation.ts`; the breakers are the `Breaker` service.
 *
 * A page-level failure (a miss, an ambiguous target, bad input, a refused action, a failed load) is retried on its
 * level only when the page changed during the attempt (late content may have appeared): the same call on the same
 * page would fail the same way. It still moves on to the next level, whose engine may see the page differently.
 *
 * Why a plain loop over levels and not `ExecutionPlan`: a plan step provides an engine Layer to the effect, but our
 * engines must be connected inside the Sandbox's one-client lease and reached through its switch protocol (capture
 * page state, disconnect, verify, connect, restore). Each level also needs per-level decisions a plan step cannot
 * see: skip when the engine is not configured or its breaker is open, stop when a failed `act` changed the page,
 * emit `level_skipped`/`cascade_escalation` with the level. Retries within a level are still an `Effect.retry` driven
 * by a `Schedule`, and an attempt learns its number on the level from `Schedule.CurrentMetadata`, as a plan step's
 * effect does from `ExecutionPlan.CurrentMetadata`. An attempt is judged by what the traffic and the page recorded in
 * Cascade/Policing.ts.
 */
import { Context, Data, Effect, Layer, Option, Ref, Schedule } from "effect"
import { Egress } from "../Egress/Egress.ts"
import type { Engine } from "../Engine/Engine.ts"
import * as EngineId from "../EngineId.ts"
import { EngineCoolingDown, NotConfigured, Timeout } from "../Errors/Engine.ts"
import { DialogOpen } from "../Errors/Page.ts"
import { HumanTimeout, PolicyRejected } from "../Errors/Service.ts"
import { isPageError, type SwitchyardError } from "../Errors.ts"
import * as Events from "../Logging/Events.ts"
import { Sandbox } from "../Sandbox/Sandbox.ts"
import * as StartTime from "../Sandbox/StartTime.ts"
import { Breaker, coolingDown } from "./Breaker.ts"
import { policing } from "./Cascade/Policing.ts"
import { Engines } from "./Engines.ts"
import { type AttemptRef, capture, instrumented } from "./Instrumentation.ts"
import { type CascadeConfig, handsToPerson, idOf, type Level } from "./Policy.ts"

export { policing } from "./Cascade/Policing.ts"

/** How the cascade reaches engines: injected, so the policy can be tested on virtual time without a browser. */
export interface Runner<A> {
  readonly attempt: (at: AttemptRef) => Effect.Effect<A, SwitchyardError>
  /** Why a level is skipped before it is tried: `not_configured`, or `engine_cooling_down` (its breaker is open). */
  readonly skip: (level: Level, index: number) => Effect.Effect<Option.Option<SwitchyardError>>
  /** A digest of the page, compared around a failed attempt to tell whether the page changed meanwhile. */
  readonly fingerprint: Effect.Effect<string>
  /** Whether the page shows a human check (a CAPTCHA): read before a person is asked; default none. */
  readonly humanCheck?: Effect.Effect<boolean>
  readonly onSuccess?: (at: AttemptRef) => Effect.Effect<void>
  readonly onFailure?: (at: AttemptRef, error: SwitchyardError) => Effect.Effect<void>
}

export interface CallOptions {
  /** Tool name, for events and errors. */
  readonly action: string
  /** An `act`: a failure may have changed the page. */
  readonly isAct: boolean
  /**
   * The call only reads the page (an extract, a screenshot): the look at the page before its attempt runs beside the
   * attempt, which leaves the page as it was, instead of ahead of it.
   */
  readonly readsOnly?: boolean
  /**
   * Where a level stands in the page's full cascade when `config` holds only some of its levels (the Stagehand
   * fallback): events and errors report that index, the one the state block and `browser.status` show.
   */
  readonly levelIndex?: (level: Level) => number
}

/** A failed act changed the page: repeating it could do it twice, so the cascade stops with this error. */
class Halt extends Data.TaggedClass("Halt")<{ readonly error: SwitchyardError }> {}

/** A page-level failure on a page that did not change: not repeated on this level; the next level may still try. */
class Settled extends Data.TaggedClass("Settled")<{ readonly error: SwitchyardError }> {}

/** Where the call is in the cascade: read when the total budget runs out, to say where it stopped. */
interface Position {
  readonly index: number
  readonly attempt: number
}

/** An attempt stopped by its level's time limit fails with `Timeout`; its browser's start is not counted (StartTime.ts). */
const limited = (at: AttemptRef, options: CallOptions) =>
  StartTime.limit(at.level.timeoutPerAttemptMs, () =>
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
  )

/** Attempt ids numbered per call, so a call that runs the cascade twice (Stagehand, then the fallback) never reuses one. */
const attemptIds = Effect.gen(function* () {
  const call = yield* Events.CurrentCall
  const counter = call?.attempts ?? (yield* Ref.make(0))
  return Ref.updateAndGet(counter, (n) => n + 1).pipe(Effect.map((n) => `${call?.attemptId ?? "call"}.${n}`))
})

/**
 * One level: attempts retried on the level's Schedule while the error is retryable, no act changed the page, and a
 * page-level failure saw the page change.
 */
const runLevel = <A>(
  config: CascadeConfig,
  runner: Runner<A>,
  options: CallOptions,
  level: Level,
  index: number,
  position: Ref.Ref<Position>,
  nextId: Effect.Effect<string>
): Effect.Effect<A, SwitchyardError | Halt> => {
  /** How a failed attempt ends: retried if retryable (the error), this level given up (Settled), or the call (Halt). */
  const judge = (error: SwitchyardError, before: Option.Option<string>) =>
    Effect.gen(function* () {
      // The egress policy refused what the call reached for, or the page ran past a limit: any level would meet the
      // same page again.
      if (error._tag === "PolicyRejected" || error._tag === "LimitExceeded") return new Halt({ error })
      // A page the network did not deliver (refused, not resolved, a TLS failure) is the same for every engine.
      if (error._tag === "NavigationFailed" && error.reason !== undefined) return new Halt({ error })
      // A failed act that may have acted is repeated only when the page shows it did nothing.
      // A dialog blocks every engine alike: no retry or other level can get past it; the agent answers it.
      if (error instanceof DialogOpen) return new Halt({ error })
      // The session's page or browser went under the call: the call ends at once; the next one gets the page back.
      if (error._tag === "CdpClosed" && error.lost !== undefined) return new Halt({ error })
      const possible = options.isAct && "sideEffect" in error && error.sideEffect === "possible"
      const guarded = possible && !config.repeatPossibleSideEffects
      const pageLevel = isPageError(error) && error.retryable
      if (Option.isNone(before) || (!guarded && !pageLevel)) return error
      const changed = (yield* runner.fingerprint) !== before.value
      if (guarded && changed) return new Halt({ error })
      if (pageLevel && !changed) return new Settled({ error })
      return error
    })

  const once = Effect.gen(function* () {
    const { attempt: retried } = yield* Schedule.CurrentMetadata
    const at: AttemptRef = { id: yield* nextId, level, index, attempt: retried + 1 }
    yield* Ref.set(position, { index, attempt: at.attempt })
    // The page before the attempt, read only when it can decide something: an act, or a level with retries left.
    const looked =
      options.isAct || at.attempt <= level.retryCount ? Effect.asSome(runner.fingerprint) : Effect.succeedNone
    const [before, outcome] = yield* Effect.all(
      [looked, Effect.result(runner.attempt(at).pipe(limited(at, options), instrumented(at, options.action, runner)))],
      { concurrency: options.readsOnly === true && !options.isAct ? 2 : 1 }
    )
    if (outcome._tag === "Success") return outcome.success
    return yield* Effect.fail(yield* judge(outcome.failure, before))
  })
  const schedule = Schedule.exponential(config.retryBaseDelayMs ?? 250).pipe(Schedule.upTo({ times: level.retryCount }))
  return once.pipe(
    Effect.retry({ schedule, while: (e) => !(e instanceof Halt) && !(e instanceof Settled) && e.retryable }),
    Effect.catch((e) => Effect.fail(e instanceof Settled ? e.error : e))
  )
}

/** Runs one call through the cascade's levels; the caller gets the first success or a typed error. */
export const run = <A>(
  config: CascadeConfig,
  runner: Runner<A>,
  options: CallOptions
): Effect.Effect<A, SwitchyardError> =>
  Effect.gen(function* () {
    const position = yield* Ref.make<Position>({ index: 0, attempt: 0 })
    /** The reported index of the level at `index` in `config`. */
    const shown = (index: number) => {
      const full = options.levelIndex?.(config.levels[index]!) ?? -1
      return full >= 0 ? full : index
    }
    const levels = Effect.gen(function* () {
      const nextId = yield* attemptIds
      let last: SwitchyardError | undefined
      /** The page miss to answer with when no person is asked: one that names candidates, else the latest. */
      let miss: SwitchyardError | undefined
      const skipped: Array<readonly [Level, SwitchyardError]> = []
      for (const [index, level] of config.levels.entries()) {
        yield* Ref.set(position, { index: shown(index), attempt: 0 })
        if (level.engine === "human") {
          const notNeeded = yield* personNotNeeded(config, runner, miss)
          if (Option.isSome(notNeeded)) {
            yield* Events.emit({
              event: "level_skipped",
              engine: level.engine,
              level: shown(index),
              reason: notNeeded.value
            })
            last = miss ?? last
            continue
          }
        }
        const skip = yield* runner.skip(level, shown(index))
        if (Option.isSome(skip)) {
          skipped.push([level, skip.value])
          yield* Events.emit({
            event: "level_skipped",
            engine: level.engine,
            ...(level.mode ? { mode: level.mode } : {}),
            level: shown(index),
            reason: skip.value.message
          })
          continue
        }
        const outcome = yield* Effect.result(runLevel(config, runner, options, level, shown(index), position, nextId))
        if (outcome._tag === "Success") return outcome.success
        if (outcome.failure instanceof Halt) return yield* Effect.fail(outcome.failure.error)
        const failure = outcome.failure
        if (isMiss(failure) && (miss === undefined || !("elements" in miss) || miss.elements === undefined))
          miss = failure
        last = failure instanceof HumanTimeout && last !== undefined ? askedBecause(failure, last) : failure
        yield* escalate(config, index, last, shown)
      }
      return yield* Effect.fail(last ?? allSkipped(options.action, skipped))
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

/**
 * Every level was skipped. An engine that is only resting makes the call worth repeating: the answer is then the
 * soonest breaker to close (`engine_cooling_down`, retryable, with the time left), else `not_configured`.
 */
const allSkipped = (action: string, skipped: ReadonlyArray<readonly [Level, SwitchyardError]>): SwitchyardError => {
  const reasons = skipped.map(([level, error]) => `${EngineId.label(idOf(level))}: ${error.message}`).join("; ")
  const message = `no engine level could run ${action}: ${reasons}`
  const resting = skipped.flatMap(([, error]) => (error instanceof EngineCoolingDown ? [error] : []))
  const soonest = resting.reduce<EngineCoolingDown | undefined>(
    (best, e) => (best === undefined || e.retryAfterMs < best.retryAfterMs ? e : best),
    undefined
  )
  return soonest === undefined
    ? new NotConfigured({ action, message })
    : new EngineCoolingDown({
        ...(soonest.engine === undefined ? {} : { engine: soonest.engine }),
        label: soonest.label,
        failures: soonest.failures,
        retryAfterMs: soonest.retryAfterMs,
        action,
        message
      })
}

/** Failures that say the page has no such target, or the call is malformed: a person would find no more. */
const misses: ReadonlySet<string> = new Set([
  "element_not_found",
  "ambiguous_target",
  "invalid_input",
  "verification_failed"
])
const isMiss = (error: SwitchyardError) => misses.has(error.type)

/**
 * Whether the cascade's `human` level is skipped, and why: a person is asked only for what the policy's
 * `handToPerson` names — engines that gave out, a human check on the page, or (when named) a page miss, which
 * otherwise answers the agent at once with its candidates.
 */
const personNotNeeded = <A>(config: CascadeConfig, runner: Runner<A>, miss: SwitchyardError | undefined) =>
  Effect.gen(function* () {
    if (miss === undefined && handsToPerson(config, "engines_exhausted")) return Option.none<string>()
    if (miss !== undefined && handsToPerson(config, "page_miss")) return Option.none<string>()
    if (handsToPerson(config, "human_check") && (yield* runner.humanCheck ?? Effect.succeed(false)))
      return Option.none<string>()
    return Option.some(
      miss === undefined
        ? "the cascade policy hands no page to a person when the engines give out (handToPerson)"
        : `a page miss (${miss.type}) is the agent's to answer, not a person's`
    )
  })

/** A person did not finish in time: the answer says also what made the cascade ask them. */
const askedBecause = (timedOut: HumanTimeout, cause: SwitchyardError) =>
  new HumanTimeout({
    ...(timedOut.engine === undefined ? {} : { engine: timedOut.engine }),
    ...(timedOut.action === undefined ? {} : { action: timedOut.action }),
    timeoutMs: timedOut.timeoutMs,
    causedBy: {
      type: cause.type,
      message: cause.message,
      retryable: cause.retryable,
      ...(cause.engine === undefined ? {} : { engine: cause.engine }),
      ...("elements" in cause && cause.elements !== undefined ? { elements: cause.elements } : {})
    },
    message: `${timedOut.message}. The person was asked because ${cause.type}: ${cause.message}`
  })

/** The level at `index` failed: say where the cascade goes next. */
const escalate = (config: CascadeConfig, index: number, failure: SwitchyardError, shown: (index: number) => number) => {
  const level = config.levels[index]!
  const next = index + 1 < config.levels.length ? index + 1 : -1
  const to = next >= 0 ? EngineId.label(idOf(config.levels[next]!)) : null
  const reason = `${failure.type}: ${failure.message}`
  return Effect.all([
    Events.emit({ event: "fallback", from: EngineId.label(idOf(level)), to, reason }),
    Events.emit({
      event: "cascade_escalation",
      fromLevel: shown(index),
      from: EngineId.label(idOf(level)),
      toLevel: next >= 0 ? shown(next) : null,
      to,
      reason
    })
  ])
}

// ---------------------------------------------------------------------------------------------------------------
// The service: levels run on the session's Sandbox, engines come from the Engines registry, breakers per engine.

export interface CascadeCall<A> extends CallOptions {
  readonly config: CascadeConfig
  /** The call refers to a secret: only engines that act without a model run it, so no model sees the reference
   * or chooses where the value goes. */
  readonly modelFree?: boolean
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
      const policed = policing(sandbox, yield* Effect.serviceOption(Egress))
      const fingerprint = sandbox.fingerprint.pipe(
        Effect.orElseSucceed(() => "unknown"),
        Effect.withSpan("Cascade.fingerprint")
      )

      const skip = (level: Level, action: string, modelFree: boolean) =>
        Effect.gen(function* () {
          const configured = yield* Effect.result(engines.specFor(level))
          if (configured._tag === "Failure") return Option.some<SwitchyardError>(configured.failure)
          if (modelFree && configured.success.capabilities.instructions !== "grammar")
            return Option.some<SwitchyardError>(
              new PolicyRejected({
                action,
                field: "arguments",
                message: `${EngineId.label(idOf(level))} works through a model, which never sees secrets: a call that types a {{secret:…}} runs on a model-free level`
              })
            )
          return Option.map(yield* breaker.check(idOf(level)), (open) => coolingDown(idOf(level), open, action))
        })

      return Cascade.of({
        call: Effect.fn("Cascade.call")(function* <A>(call: CascadeCall<A>) {
          return yield* run<A>(
            call.config,
            {
              attempt: ({ level }) =>
                engines
                  .specFor(level)
                  .pipe(Effect.flatMap((spec) => policed(call.action, level.engine, sandbox.use(spec, call.run)))),
              skip: (level) => skip(level, call.action, call.modelFree ?? false),
              fingerprint,
              humanCheck: sandbox.humanCheck,
              onSuccess: (at) => breaker.success(idOf(at.level)).pipe(Effect.andThen(artifacts(at))),
              onFailure: (at, error) =>
                artifacts(at, error).pipe(Effect.andThen(breaker.failure(idOf(at.level), error, call.config)))
            },
            call
          )
        })
      })
    })
  ).pipe(Layer.provide(Breaker.layer))
}
