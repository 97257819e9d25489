/**
 * Idle shutdown (seed 002): every call marks the session used and restarts a timer; when it runs out with no call
 * in between, the browser is closed. The next call starts a new one.
 */
import { Clock, Effect, FiberHandle, Ref } from "effect"
import type { SessionState } from "./SessionState.ts"

export interface Idle {
  /** Marks the session used now and restarts the timer. */
  readonly touch: Effect.Effect<void>
  /** Stops the timer (the session is closing anyway). */
  readonly cancel: Effect.Effect<void>
}

/** `closeIdle` runs when `idleTimeoutMs` passes without a call; `null` never closes. */
export const make = Effect.fnUntraced(function* (options: {
  readonly state: Ref.Ref<SessionState>
  readonly idleTimeoutMs: number | null
  readonly closeIdle: Effect.Effect<void, unknown>
}) {
  const { state, idleTimeoutMs, closeIdle } = options
  const timer = yield* FiberHandle.make<void, never>()
  const touch = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* Ref.update(state, (s) => ({ ...s, lastUsedAt: now }))
    if (idleTimeoutMs === null) return
    yield* FiberHandle.run(
      timer,
      Effect.sleep(idleTimeoutMs).pipe(
        Effect.andThen(closeIdle),
        Effect.andThen(Effect.logInfo("browser closed after idle timeout", { idleTimeoutMs })),
        Effect.ignore
      )
    )
  })
  return { touch, cancel: FiberHandle.clear(timer) } satisfies Idle
})
