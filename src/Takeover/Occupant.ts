/**
 * Someone other than automation who can hold the browser: a person over VNC. While they do, the Sandbox refuses
 * automation calls at once with their error, also calls already waiting for the lease, instead of waiting it out.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { SwitchyardError } from "../Errors.ts"
import { Handoff, inControl } from "./Handoff.ts"

export class Occupant extends Context.Service<
  Occupant,
  {
    /** The error automation gets while someone holds the browser now. */
    readonly current: Effect.Effect<Option.Option<SwitchyardError>>
    /** Completes with that error once someone holds the browser (at once if someone does). */
    readonly arrival: Effect.Effect<SwitchyardError>
  }
>()("switchyard/Occupant") {
  /** The person of the session's `Handoff`. */
  static readonly layer: Layer.Layer<Occupant, never, Handoff> = Layer.effect(
    Occupant,
    Effect.gen(function* () {
      const handoff = yield* Handoff
      return Occupant.of({
        current: handoff.active.pipe(Effect.map(Option.map((takeover): SwitchyardError => inControl(takeover)))),
        arrival: handoff.arrival.pipe(Effect.map((takeover): SwitchyardError => inControl(takeover)))
      })
    })
  )
}
