/**
 * The one-client lease: one call at a time holds the browser, waiting a bounded time, refused while a person holds it;
 * the holder runs on its own fiber, so `forceRelease` and `close` stop it and its caller still gets `session_closed`.
 * Owns the call holding the lease and whether the session is shut down.
 */
import { Context, Effect, Exit, Fiber, Layer, Option, Ref, Semaphore } from "effect"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import { LeaseTimeout, SessionClosed } from "../Errors/Service.ts"
import type { SwitchyardError } from "../Errors.ts"
import { Occupant } from "../Takeover/Occupant.ts"

interface Shape {
  /**
   * Runs `self` holding the lease. `spec` names the engine the call is for: an automation engine is refused at once
   * while someone else (a person) holds the browser, also while it waits.
   */
  readonly run: <A, E>(
    self: Effect.Effect<A, E>,
    spec?: EngineSpec | "automation"
  ) => Effect.Effect<A, E | LeaseTimeout | SessionClosed | SwitchyardError>
  /** Interrupts the call holding the lease, unless that is the caller itself. */
  readonly interruptHolder: Effect.Effect<void>
  /** Ends the session's calls: every later call, and every call still waiting, gets `session_closed`. */
  readonly shutDown: Effect.Effect<void>
  /** Runs `self` holding the lease even after `shutDown`: the close that ends the session. */
  readonly runLast: <A, E>(
    self: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | LeaseTimeout | SessionClosed | SwitchyardError>
}

export interface LeaseOptions {
  /** How long a call waits for the lease before failing with `lease_timeout`. */
  readonly timeoutMs: number
}

export class Lease extends Context.Service<Lease, Shape>()("switchyard/Sandbox/Lease") {
  static readonly layer = (options: LeaseOptions) => Layer.effect(Lease, make(options))
}

/** The call holding the lease, and whether the session is shut down. */
interface Holding {
  /** The fiber running the call that holds the lease: what `forceRelease` and `close` interrupt. */
  readonly holder: Fiber.Fiber<unknown, unknown> | undefined
  /** No call gets the lease any more. */
  readonly shutdown: boolean
}

export const make = Effect.fnUntraced(function* (options: LeaseOptions) {
  const { timeoutMs } = options
  const state = yield* Ref.make<Holding>({ holder: undefined, shutdown: false })
  const occupant = yield* Effect.serviceOption(Occupant)
  const semaphore = yield* Semaphore.make(1)

  /**
   * Who can refuse this call: the occupant, for automation calls (an engine's, or work on the page without one); nobody
   * for a person's own engine or for upkeep.
   */
  const gateFor = (spec: EngineSpec | "automation" | undefined) =>
    spec === undefined || (spec !== "automation" && spec.id.kind === "human") || Option.isNone(occupant)
      ? undefined
      : occupant.value

  /**
   * The permit, waited for at most `timeoutMs`; refused as soon as someone else holds the browser. The whole wait is
   * interruptible (a cancelled call, a client gone, a session closed stop it at once); an interrupted take leaves no
   * permit behind.
   */
  const acquire = (gate: Occupant["Service"] | undefined) =>
    Effect.interruptible(
      (gate === undefined
        ? semaphore.take(1)
        : semaphore.take(1).pipe(Effect.raceFirst(gate.arrival.pipe(Effect.flatMap(Effect.fail))))
      ).pipe(
        Effect.timeoutOrElse({
          duration: timeoutMs,
          orElse: () =>
            Effect.fail(
              new LeaseTimeout({ timeoutMs, message: `another call held the browser for more than ${timeoutMs} ms` })
            )
        })
      )
    )

  const shutDownError = () => new SessionClosed({ message: "the session is shut down" })

  /** Runs `self` on a fiber of its own, known as the holder while it runs. */
  const hold = <A, E>(self: Effect.Effect<A, E>, gate: Occupant["Service"] | undefined, last: boolean) =>
    Effect.gen(function* () {
      // The session may have been shut down, or someone may have taken the browser, while this call waited.
      if (!last && (yield* Ref.get(state)).shutdown) return yield* shutDownError()
      const occupied = gate === undefined ? Option.none() : yield* gate.current
      if (Option.isSome(occupied)) return yield* Effect.fail(occupied.value)
      const call = yield* Effect.forkChild(self)
      yield* Ref.update(state, (s) => ({ ...s, holder: call }))
      const exit = yield* Fiber.await(call).pipe(Effect.onInterrupt(() => Fiber.interrupt(call)))
      if (Exit.isFailure(exit) && Exit.hasInterrupts(exit) && !Exit.hasFails(exit)) {
        return yield* new SessionClosed({
          message: "the session's browser was closed or released while this call ran; call again to start afresh"
        })
      }
      return yield* exit
    }).pipe(Effect.ensuring(Ref.update(state, (s) => ({ ...s, holder: undefined }))))

  const holding = <A, E>(self: Effect.Effect<A, E>, gate: Occupant["Service"] | undefined, last: boolean) =>
    Effect.acquireUseRelease(
      acquire(gate),
      () => hold(self, gate, last),
      () => semaphore.release(1)
    )

  const run = Effect.fn("Lease.run")(function* <A, E>(self: Effect.Effect<A, E>, spec?: EngineSpec | "automation") {
    if ((yield* Ref.get(state)).shutdown) return yield* shutDownError()
    return yield* holding(self, gateFor(spec), false)
  })

  const interruptHolder = Effect.gen(function* () {
    const { holder } = yield* Ref.get(state)
    const self = yield* Effect.fiber
    if (holder !== undefined && holder !== self) yield* Fiber.interrupt(holder)
  }).pipe(Effect.withSpan("Lease.interruptHolder"))

  return Lease.of({
    run,
    interruptHolder,
    shutDown: Ref.update(state, (s) => ({ ...s, shutdown: true })).pipe(Effect.withSpan("Lease.shutDown")),
    runLast: Effect.fn("Lease.runLast")(function* <A, E>(self: Effect.Effect<A, E>) {
      return yield* holding(self, undefined, true)
    })
  })
})
