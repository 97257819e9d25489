/**
 * One FIFO lane per session name: a `Semaphore` of one permit, kept in the registry while calls wait or run on it.
 * A call joins its lane before it yields, so calls on one session run one at a time in the order they came.
 */
import { Effect, HashMap, Option, Ref, Semaphore } from "effect"
import type { Lane, Registry } from "./Registry.ts"

/**
 * Runs `self` in the session's lane: after the calls that came before it on that session, never beside one. The
 * Semaphore serves waiters in the order they asked, a newcomer never takes a permit a waiter is owed, and a call
 * given up while waiting leaves the line. `onIdle` runs when the session's last call ends.
 */
export const run = <A, E, R>(
  registry: Ref.Ref<Registry>,
  name: string,
  self: Effect.Effect<A, E, R>,
  onIdle: Effect.Effect<void>
): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Ref.modify(registry, (r): [Semaphore.Semaphore, Registry] => {
      const lane = Option.getOrElse(
        HashMap.get(r.lanes, name),
        (): Lane => ({ turns: Semaphore.makeUnsafe(1), pending: 0 })
      )
      return [lane.turns, { ...r, lanes: HashMap.set(r.lanes, name, { ...lane, pending: lane.pending + 1 }) }]
    }),
    (turns) => turns.withPermit(self),
    () =>
      Ref.modify(registry, (r): [boolean, Registry] => {
        const lane = HashMap.get(r.lanes, name)
        if (Option.isNone(lane)) return [false, r]
        const left = lane.value.pending - 1
        // A lane with nobody in it is dropped: the next call on the session makes a new one.
        return left === 0
          ? [true, { ...r, lanes: HashMap.remove(r.lanes, name) }]
          : [false, { ...r, lanes: HashMap.set(r.lanes, name, { ...lane.value, pending: left }) }]
      }).pipe(Effect.flatMap((emptied) => (emptied ? onIdle : Effect.void)))
  )
