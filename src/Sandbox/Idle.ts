/**
 * Idle shutdown (seed 002): every call marks the session used and restarts a timer; when it runs out with no call
 * in between, the browser is closed. The next call starts a new one. Owns the last use and the timer.
 */
import { Clock, Context, Effect, FiberHandle, Layer, Ref } from "effect"
import { BrowserLife } from "./BrowserLife.ts"
import { Lease } from "./Lease.ts"

export class Idle extends Context.Service<
  Idle,
  {
    /** Marks the session used now and restarts the timer. */
    readonly touch: Effect.Effect<void>
    /** Stops the timer (the session is closing anyway). */
    readonly cancel: Effect.Effect<void>
    /** When a call last used the session, if one has. */
    readonly lastUsedAt: Effect.Effect<number | null>
  }
>()("switchyard/Sandbox/Idle") {
  /** Closes the browser under the lease when `idleTimeoutMs` passes without a call. */
  static readonly layer = (options: { readonly idleTimeoutMs: number | null }) =>
    Layer.effect(
      Idle,
      Effect.gen(function* () {
        const lease = yield* Lease
        const life = yield* BrowserLife
        return yield* make({ idleTimeoutMs: options.idleTimeoutMs, closeIdle: lease.run(life.stop) })
      })
    )
}

/** `closeIdle` runs when `idleTimeoutMs` passes without a call; `null` never closes. */
export const make = Effect.fnUntraced(function* (options: {
  readonly idleTimeoutMs: number | null
  readonly closeIdle: Effect.Effect<void, unknown>
}) {
  const { idleTimeoutMs, closeIdle } = options
  const lastUsedAt = yield* Ref.make<number | null>(null)
  const timer = yield* FiberHandle.make<void, never>()
  const touch = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* Ref.set(lastUsedAt, now)
    if (idleTimeoutMs === null) return
    yield* FiberHandle.run(
      timer,
      Effect.sleep(idleTimeoutMs).pipe(
        Effect.andThen(closeIdle),
        Effect.andThen(Effect.logInfo("browser closed after idle timeout", { idleTimeoutMs })),
        Effect.ignore
      )
    )
  }).pipe(Effect.withSpan("Idle.touch"))
  return Idle.of({ touch, cancel: FiberHandle.clear(timer), lastUsedAt: Ref.get(lastUsedAt) })
})
