/**
 * The cascade's circuit breakers (seed 001 §4, criterion 1): consecutive health failures of an engine trip it for a
 * cooldown, across the calls of one session, so the cascade skips it instead of waiting on it again. Keyed by the
 * engine's label; the state lives in a `Ref`, the time comes from the `Clock` (virtual in tests).
 *
 * Only engine health counts: the engine or its browser crashed, hung, disconnected or could not start, its model
 * failed, or the person at the human level did not answer in time (`countsAgainst` lists every error type). A
 * page-level failure (`element_not_found`, `ambiguous_target`, `invalid_input`, `action_failed`,
 * `verification_failed`, `navigation_failed`, `dialog_open`, `download_too_large`) says something about the page or
 * the agent's instruction, and so do a refused or impossible call, a setup mistake and the service's own state (`unsupported`, `not_configured`,
 * `invalid_endpoint`, `rejected_by_policy`, `human_in_control`, `session_closed`, `shutting_down`, `busy`,
 * `lease_timeout`): those neither count nor reset the count, so an agent's misses never lock an engine, and never
 * unlock a sick one.
 */
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import * as EngineId from "../EngineId.ts"
import { EngineCoolingDown } from "../Errors/Engine.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { CascadeConfig } from "./Policy.ts"

/** Whether a failure says the engine is unwell. Every error type is listed, so a new one has to be decided here. */
const health: Record<SwitchyardError["type"], boolean> = {
  // The engine or its model.
  timeout: true,
  cdp_closed: true,
  not_initialized: true,
  llm_error: true,
  llm_bad_response: true,
  // The browser under the engine, or the switch to it.
  switch_failed: true,
  browser_unavailable: true,
  browser_launch_failed: true,
  endpoint_unreachable: true,
  provider_error: true,
  // The person did not answer in time: the human level is not there now.
  human_timeout: true,
  // The page or the instruction.
  element_not_found: false,
  ambiguous_target: false,
  invalid_input: false,
  action_failed: false,
  verification_failed: false,
  navigation_failed: false,
  limit_exceeded: false,
  dialog_open: false,
  download_too_large: false,
  // A call the engine cannot or may not serve, a setup mistake, and the service's own state.
  unsupported: false,
  not_configured: false,
  invalid_endpoint: false,
  engine_cooling_down: false,
  rejected_by_policy: false,
  human_in_control: false,
  session_closed: false,
  shutting_down: false,
  busy: false,
  lease_timeout: false,
  step_failed: false,
  // The service's own defect says nothing about the engine's health.
  internal: false
}

/** Whether `error` counts toward its engine's breaker. */
export const countsAgainst = (error: SwitchyardError): boolean => health[error.type]

/** When a breaker trips and for how long: the cascade's `maxFailures` and `cooldownMs`. */
export type Limits = Pick<CascadeConfig, "maxFailures" | "cooldownMs">

/** An open breaker: the level is skipped until `openUntil`. */
export interface Open {
  readonly failures: number
  readonly openUntil: number
  /** Time left until the engine is tried again. */
  readonly retryAfterMs: number
}

/** What a call that meets an open breaker is told: the engine rests, and when to ask again. */
export const coolingDown = (id: EngineId.EngineId, open: Open, action?: string): EngineCoolingDown =>
  new EngineCoolingDown({
    engine: id.kind,
    label: EngineId.label(id),
    ...(action === undefined ? {} : { action }),
    failures: open.failures,
    retryAfterMs: open.retryAfterMs,
    message: `${EngineId.label(id)} is cooling down after ${open.failures} consecutive failures; it is tried again in ${Math.ceil(open.retryAfterMs / 1000)} s`
  })

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
    error: SwitchyardError,
    limits: Limits
  ) {
    if (!countsAgainst(error)) return
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
    /** The engine failed a call: a health failure is one more in a row, and at `maxFailures` the breaker opens. */
    readonly failure: (id: EngineId.EngineId, error: SwitchyardError, limits: Limits) => Effect.Effect<void>
  }
>()("switchyard/Breaker") {
  static readonly layer = Layer.effect(Breaker, make)
}
