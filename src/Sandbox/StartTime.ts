/**
 * The time an attempt waits for its browser to start (or restart) and for its engine's modules to load: not the
 * engine's work, so not counted against the attempt's time limit. Each of those waits has a bound of its own (the
 * provider's launch limit), and a browser's start is no longer cut off, to be begun again by the next attempt,
 * because a loaded machine made it outlast a short limit.
 */
import { Clock, Context, Deferred, Effect, Ref } from "effect"

export interface StartTime {
  /** Runs `self` with its time kept off the limit of the attempt it runs in. */
  readonly uncounted: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** Outside an attempt's limit there is nothing to keep off. */
export const StartTime = Context.Reference<StartTime>("switchyard/Sandbox/StartTime", {
  defaultValue: () => ({ uncounted: (self) => self })
})

/** Runs `self` with its time kept off the limit of the attempt it runs in. */
export const uncounted = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    return yield* (yield* StartTime).uncounted(self)
  })

/** Uncounted work: how many run now (they may overlap), since when, and the time it took so far. */
interface Kept {
  readonly running: number
  readonly since: number
  readonly total: number
  /** Completes when the uncounted work running now ends. */
  readonly ended: Deferred.Deferred<void> | undefined
}

/**
 * Runs `self` for at most `ms` of counted time, else stops it and fails with `onTimeout`: the time `self` spends in
 * `uncounted` work is added on top.
 */
export const limit =
  <E2>(ms: number, onTimeout: () => Effect.Effect<never, E2>) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | E2, R> =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const kept = yield* Ref.make<Kept>({ running: 0, since: 0, total: 0, ended: undefined })
      const begin = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.update(kept, (k) =>
          k.running === 0
            ? { ...k, running: 1, since: now, ended: Deferred.makeUnsafe<void>() }
            : { ...k, running: k.running + 1 }
        )
      )
      const end = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.modify(kept, (k): [Deferred.Deferred<void> | undefined, Kept] =>
          k.running > 1
            ? [undefined, { ...k, running: k.running - 1 }]
            : [k.ended, { running: 0, since: 0, total: k.total + now - k.since, ended: undefined }]
        ).pipe(Effect.flatMap((ended) => (ended === undefined ? Effect.void : Deferred.succeed(ended, undefined))))
      )
      const time: StartTime = {
        uncounted: (work) =>
          Effect.acquireUseRelease(
            begin,
            () => work,
            () => end
          )
      }
      // Sleeps the counted time still owed; uncounted work under way is waited out, then counted off.
      const timer: Effect.Effect<void> = Effect.gen(function* () {
        const k = yield* Ref.get(kept)
        if (k.ended !== undefined) {
          yield* Deferred.await(k.ended)
          return yield* timer
        }
        const counted = (yield* Clock.currentTimeMillis) - started - k.total
        if (counted >= ms) return
        yield* Effect.sleep(ms - counted)
        return yield* timer
      })
      return yield* self.pipe(
        Effect.provideService(StartTime, time),
        Effect.raceFirst(timer.pipe(Effect.andThen(Effect.suspend(onTimeout))))
      )
    })
