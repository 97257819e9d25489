/**
 * The cap on sessions (browsers) and the bounded queue in front of it: a `Semaphore` of `maxBrowsers` permits whose
 * waiters, at most `queue` and counted in the registry, are served in arrival order within `slotTimeoutMs`. A new
 * session takes a free slot without queueing only when no call waits for one: a slot freed for a waiter is the waiter's.
 */
import { Effect, HashMap, Option, Ref, Semaphore } from "effect"
import { Busy } from "../../Errors/Service.ts"
import type { Registry } from "./Registry.ts"

export interface SlotsOptions {
  readonly maxBrowsers: number
  readonly queue: number
  readonly slotTimeoutMs: number
}

export interface Slots {
  /**
   * A slot for a new session: a free one, else an idle session's (`fromIdle` hibernates one and passes its slot on),
   * else the next freed while the queue has room; `busy` past the queue or the timeout.
   */
  readonly take: (fromIdle: Effect.Effect<boolean>) => Effect.Effect<void, Busy>
  /** Gives a slot back: the first call waiting for one takes it. */
  readonly release: Effect.Effect<void>
}

export const make = (options: SlotsOptions, registry: Ref.Ref<Registry>) =>
  Effect.gen(function* () {
    const slots = yield* Semaphore.make(options.maxBrowsers)

    const take = (fromIdle: Effect.Effect<boolean>) =>
      Effect.gen(function* () {
        // `takeIfAvailable` does not look at waiters (`take` does): a slot given back wakes the first a tick later.
        if ((yield* Ref.get(registry)).waiting === 0 && (yield* slots.takeIfAvailable(1))) return
        // Counted as waiting before looking for an idle session, so a session going idle meanwhile gives its slot
        // to a waiter (the Sessions hibernate one when a lane empties while calls wait).
        const admitted = yield* Ref.modify(registry, (r): [boolean, Registry] =>
          r.waiting >= options.queue ? [false, r] : [true, { ...r, waiting: r.waiting + 1 }]
        )
        const leave = admitted ? Ref.update(registry, (r) => ({ ...r, waiting: r.waiting - 1 })) : Effect.void
        const got = yield* Effect.gen(function* () {
          if (yield* fromIdle) return true
          if (!admitted) {
            const r = yield* Ref.get(registry)
            return yield* new Busy({
              message: `${HashMap.size(r.open)} sessions are open (the limit is ${options.maxBrowsers}), each working, and ${r.waiting} calls already wait for one; retry later or close a session`
            })
          }
          // Waiters are served in the order they came; a timed-out take leaves the line and holds no permit.
          return Option.isSome(yield* slots.take(1).pipe(Effect.timeoutOption(options.slotTimeoutMs)))
        }).pipe(Effect.ensuring(leave))
        if (!got) {
          return yield* new Busy({
            message: `no session slot freed within ${options.slotTimeoutMs} ms (${options.maxBrowsers} sessions are open, each working)`
          })
        }
      })

    return { take, release: Effect.asVoid(slots.release(1)) } satisfies Slots
  })
