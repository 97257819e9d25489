/**
 * What the browser's target events say about its pages: each page's URL and title as last announced (no round trip
 * to read them), and which pages were closed or crashed, so a call running on a lost page can end at once.
 */
import { Deferred, Effect, Option, Ref } from "effect"
import type * as Protocol from "../../Cdp/Protocol.ts"

/** What happened to a page: closed (tab closed), crashed (renderer gone) or hung (main thread not answering). */
export type Fate = "closed" | "crashed" | "hung"

export const described: Record<Fate, string> = {
  closed: "was closed",
  crashed: "crashed",
  hung: "stopped responding"
}

/** A page's URL and title. */
export interface Location {
  readonly url: string
  readonly title: string
}

export interface Targets {
  /** A page's URL and title as the browser last announced them. */
  readonly location: (targetId: string) => Effect.Effect<Option.Option<Location>>
  /** Whether `targetId` was closed or crashed since the events were first seen. */
  readonly fate: (targetId: string) => Effect.Effect<Option.Option<Fate>>
  /** Completes when `targetId` is closed or crashes (at once if it already has). */
  readonly lost: (targetId: string) => Effect.Effect<Fate>
  /**
   * Takes in one event from any connection to the browser (`targetId`: the page whose attached session sent it);
   * events of other domains are ignored.
   */
  readonly observe: (event: Protocol.Event, targetId?: string) => Effect.Effect<void>
}

interface Seen {
  readonly locations: ReadonlyMap<string, Location>
  readonly fates: ReadonlyMap<string, Fate>
  /** Calls waiting for a page to be lost. */
  readonly watchers: ReadonlyMap<string, Deferred.Deferred<Fate>>
}

const without = <V>(map: ReadonlyMap<string, V>, key: string) => {
  const next = new Map(map)
  next.delete(key)
  return next
}

export const make: Effect.Effect<Targets> = Effect.gen(function* () {
  const seen = yield* Ref.make<Seen>({ locations: new Map(), fates: new Map(), watchers: new Map() })

  const settle = (targetId: string, fate: Fate) =>
    Ref.modify(seen, (s): [Deferred.Deferred<Fate> | undefined, Seen] => [
      s.watchers.get(targetId),
      { ...s, fates: new Map(s.fates).set(targetId, fate), watchers: without(s.watchers, targetId) }
    ]).pipe(Effect.flatMap((watcher) => (watcher === undefined ? Effect.void : Deferred.succeed(watcher, fate))))

  const lost = (targetId: string) =>
    Effect.gen(function* () {
      const mine = yield* Deferred.make<Fate>()
      const wait = yield* Ref.modify(seen, (s): [Effect.Effect<Fate>, Seen] => {
        const fate = s.fates.get(targetId)
        if (fate !== undefined) return [Effect.succeed(fate), s]
        const watcher = s.watchers.get(targetId)
        if (watcher !== undefined) return [Deferred.await(watcher), s]
        return [Deferred.await(mine), { ...s, watchers: new Map(s.watchers).set(targetId, mine) }]
      })
      return yield* wait
    })

  const observe = (event: Protocol.Event, targetId?: string): Effect.Effect<void> => {
    switch (event.method) {
      case "Target.targetCreated":
      case "Target.targetInfoChanged": {
        const info = event.params.targetInfo
        if (info.type !== "page") return Effect.void
        return Ref.update(seen, (s) => ({
          ...s,
          locations: new Map(s.locations).set(info.targetId, { url: info.url, title: info.title })
        }))
      }
      case "Target.targetDestroyed": {
        const { targetId } = event.params
        return Ref.update(seen, (s) => ({ ...s, locations: without(s.locations, targetId) })).pipe(
          Effect.andThen(settle(targetId, "closed"))
        )
      }
      case "Target.targetCrashed":
        return settle(event.params.targetId, "crashed")
      // The same, told at once on a session attached to the page.
      case "Inspector.targetCrashed":
        return targetId === undefined ? Effect.void : settle(targetId, "crashed")
      default:
        return Effect.void
    }
  }

  return {
    location: (targetId) => Ref.get(seen).pipe(Effect.map((s) => Option.fromNullishOr(s.locations.get(targetId)))),
    fate: (targetId) => Ref.get(seen).pipe(Effect.map((s) => Option.fromNullishOr(s.fates.get(targetId)))),
    lost,
    observe
  } satisfies Targets
})
