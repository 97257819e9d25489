/**
 * The cascade's circuit breakers (seed 001 §4, criterion 1): consecutive failures of an engine trip it for a
 * cooldown, across the calls of one session, so the cascade skips it instead of waiting on it again. Keyed by the
 * engine's label; the state lives in a `Ref`, the time comes from the `Clock` (virtual in tests).
 */
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import * as EngineId from "../Engine/EngineId.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { CascadeConfig } from "./Policy.ts"

/** When a breaker trips and for how long: the cascade's `maxFailures` and `cooldownMs`. */
export type Limits = Pick<CascadeConfig, "maxFailures" | "cooldownMs">

/** An open breaker: the level is skipped until `openUntil`. */
export interface Open {
  readonly failures: number
  readonly openUntil: number
  /** Time left until the engine is tried again. */
  readonly retryAfterMs: number
}

interface State {
  readonly failures: number
  /** 0 while the breaker is closed. */
  readonly openUntil: number
}

export const defaultCooldownMs = 60_000

export const make = Effect.gen(function* () {
  const states = yield* Ref.make<ReadonlyMap<string, State>>(new Map())

  const check = Effect.fn("Breaker.check")(function* (id: EngineId.EngineId) {
    const state = (yield* Ref.get(states)).get(EngineId.label(id))
    const now = yield* Clock.currentTimeMillis
    if (state === undefined || state.openUntil <= now) return Option.none<Open>()
    return Option.some<Open>({ ...state, retryAfterMs: state.openUntil - now })
  })

  const success = Effect.fn("Breaker.success")(function* (id: EngineId.EngineId) {
    yield* Ref.update(states, (m) => {
      const next = new Map(m)
      next.delete(EngineId.label(id))
      return next
    })
  })

  const failure = Effect.fn("Breaker.failure")(function* (
    id: EngineId.EngineId,
    _error: SwitchyardError,
    limits: Limits
  ) {
    const now = yield* Clock.currentTimeMillis
    const max = limits.maxFailures ?? Number.POSITIVE_INFINITY
    yield* Ref.update(states, (m) => {
      const key = EngineId.label(id)
      const failures = (m.get(key)?.failures ?? 0) + 1
      const openUntil = failures >= max ? now + (limits.cooldownMs ?? defaultCooldownMs) : 0
      return new Map(m).set(key, { failures, openUntil })
    })
  })

  return { check, success, failure }
})

export class Breaker extends Context.Service<
  Breaker,
  {
    /** Whether the engine's breaker is open, and for how long still. */
    readonly check: (id: EngineId.EngineId) => Effect.Effect<Option.Option<Open>>
    /** The engine served a call: its failures are forgotten and its breaker closes. */
    readonly success: (id: EngineId.EngineId) => Effect.Effect<void>
    /** The engine failed a call: one more consecutive failure; at `maxFailures` the breaker opens. */
    readonly failure: (id: EngineId.EngineId, error: SwitchyardError, limits: Limits) => Effect.Effect<void>
  }
>()("switchyard/Breaker") {
  static readonly layer = Layer.effect(Breaker, make)
}
