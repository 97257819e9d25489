/**
 * Screenshots per attempt off the answer's path: a capture starts when its attempt ends and finishes while the
 * answer goes out. The mask it puts on typed text changes paint only (no layout, no values), so the next call's reads
 * may overlap it; what may navigate or reads the page's pixels waits until no capture runs (`settled`).
 */
import { Deferred, Effect, Option, Scope } from "effect"

export interface Captures {
  /** Takes a screenshot now, or right after the one running, and hands it to `save` in the background. */
  readonly start: (save: (image: Uint8Array) => Effect.Effect<void>) => Effect.Effect<void>
  /** Waits until no capture is running (each is bounded by its own limit). */
  readonly settled: Effect.Effect<void>
}

type Save = (image: Uint8Array) => Effect.Effect<void>

/**
 * Attempts that end while a capture runs share the next one: by the time it starts the page already shows the last
 * of them, so one frame serves them all and a burst of calls costs at most two captures.
 */
export const make = (shot: Effect.Effect<Option.Option<Uint8Array>>): Effect.Effect<Captures, never, Scope.Scope> =>
  Effect.gen(function* () {
    // The captures' own scope, closed after the finalizer below has let the last of them finish (finalizers run
    // last-added first): a session that closes keeps the screenshot of its last attempt.
    const scope = yield* Scope.fork(yield* Effect.scope)
    yield* Effect.addFinalizer(() => settled)
    // Read and written only in synchronous steps, so a start never races the loop's end: at most one capture (one
    // mask) is on the page at a time.
    let running: Deferred.Deferred<void> | undefined
    let waiting: Array<Save> = []

    const loop = (batch: ReadonlyArray<Save>): Effect.Effect<void> =>
      shot.pipe(
        Effect.flatMap((image) =>
          Option.isSome(image) ? Effect.forEach(batch, (save) => save(image.value), { discard: true }) : Effect.void
        ),
        Effect.andThen(
          Effect.suspend(() => {
            const next = waiting
            waiting = []
            return next.length > 0 ? loop(next) : Effect.void
          })
        )
      )

    const start = (save: Save) =>
      Effect.suspend(() => {
        if (running !== undefined) {
          waiting.push(save)
          return Effect.void
        }
        const done = Deferred.makeUnsafe<void>()
        running = done
        const finish = Effect.sync(() => {
          running = undefined
          waiting = []
        }).pipe(Effect.andThen(Deferred.succeed(done, undefined)))
        return Effect.forkIn(loop([save]).pipe(Effect.ensuring(finish)), scope).pipe(Effect.asVoid)
      })

    const settled: Effect.Effect<void> = Effect.suspend(() =>
      running === undefined ? Effect.void : Deferred.await(running)
    )
    return { start, settled }
  })
