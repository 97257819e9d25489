/**
 * What the browser's target events say about its pages: each page's URL and title as last announced (no round trip
 * to read them), and which pages were closed or crashed, so a call running on a lost page can end at once. A closing
 * page leaves the browser's target list some hundred milliseconds before its events come: a list read says so first.
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
  /** Counts the target events seen (a URL or title change is one). */
  readonly generation: Effect.Effect<number>
  /**
   * Counts the events that change which pages there are (one opened, closed or crashed): while it stands still, a list
   * of the pages read before holds the same pages (their URLs and titles are the announced ones, `location`).
   */
  readonly members: Effect.Effect<number>
  /** The pages whose events were seen and that were not lost: take it before asking the browser for its list. */
  readonly known: Effect.Effect<ReadonlyArray<string>>
  /**
   * The browser listed `listed` after `known` was taken: a page of `known` it no longer lists is closed (its events
   * are still on their way).
   */
  readonly listed: (known: ReadonlyArray<string>, listed: ReadonlySet<string>) => Effect.Effect<void>
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
  /** Target events seen so far. */
  readonly generation: number
  /** Those of them that opened, closed or crashed a target. */
  readonly members: number
}

const without = <V>(map: ReadonlyMap<string, V>, key: string) => {
  const next = new Map(map)
  next.delete(key)
  return next
}

export const make: Effect.Effect<Targets> = Effect.gen(function* () {
  const seen = yield* Ref.make<Seen>({
    locations: new Map(),
    fates: new Map(),
    watchers: new Map(),
    generation: 0,
    members: 0
  })
  const counted = (event: Protocol.Event) =>
    Ref.update(seen, (s) => ({
      ...s,
      generation: s.generation + 1,
      members: event.method === "Target.targetInfoChanged" ? s.members : s.members + 1
    }))

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

  const closed = (targetId: string) =>
    Ref.update(seen, (s) => ({ ...s, locations: without(s.locations, targetId) })).pipe(
      Effect.andThen(settle(targetId, "closed"))
    )

  const observe = (event: Protocol.Event, targetId?: string): Effect.Effect<void> =>
    event.method.startsWith("Target.target") || event.method === "Inspector.targetCrashed"
      ? Effect.andThen(counted(event), record(event, targetId))
      : Effect.void

  const record = (event: Protocol.Event, targetId?: string): Effect.Effect<void> => {
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
      case "Target.targetDestroyed":
        return closed(event.params.targetId)
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
    generation: Ref.get(seen).pipe(Effect.map((s) => s.generation)),
    members: Ref.get(seen).pipe(Effect.map((s) => s.members)),
    known: Ref.get(seen).pipe(Effect.map((s) => [...s.locations.keys()].filter((id) => !s.fates.has(id)))),
    listed: (known, listed) =>
      Effect.forEach(
        known.filter((id) => !listed.has(id)),
        closed,
        { discard: true }
      ),
    observe
  } satisfies Targets
})
