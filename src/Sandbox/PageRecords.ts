/**
 * What the session's pages recorded, as answers show it: console messages, requests and one request's details, read
 * from the kept connection's bounded rings (redacted there), each naming the tab it came from unless it is the active
 * one. Owns nothing: the rings are the page link's, the tabs Tabs'.
 */
import { Context, Effect, Layer, Option } from "effect"
import { BrowserLife } from "./BrowserLife.ts"
import type { Tab } from "./PageEvent.ts"
import type * as Console from "./PageLink/Console.ts"
import type * as Network from "./PageLink/Network.ts"
import { Tabs } from "./Tabs.ts"

/** A console message or request as answers show it: `tab` (its index) only when it came from another tab. */
export type Shown<A extends { readonly tab: string }> = Omit<A, "tab"> & { readonly tab?: number | string }

/** A tab as answers name it: nothing for the active one, its index for another, its id for one since closed. */
const shown = <A extends { readonly tab: string }>(active: string, tabs: ReadonlyArray<Tab>, item: A): Shown<A> => {
  const { tab, ...rest } = item
  if (tab === active) return rest
  return { ...rest, tab: tabs.find((t) => t.id === tab)?.index ?? tab }
}

export class PageRecords extends Context.Service<
  PageRecords,
  {
    /** The console messages and uncaught errors of the active tab's page since it loaded, or with `since` of every tab
     * since then (a bounded ring since the browser started), redacted. */
    readonly console: (
      query: Console.Query
    ) => Effect.Effect<Omit<Console.Answer, "messages"> & { readonly messages: ReadonlyArray<Shown<Console.Message>> }>
    /** The requests of the active tab's page since it started loading, or with `since` of every tab since then (a
     * bounded ring since the browser started), redacted. */
    readonly network: (
      query: Network.Query
    ) => Effect.Effect<Omit<Network.Answer, "requests"> & { readonly requests: ReadonlyArray<Shown<Network.Request>> }>
    /** One request with its headers and bodies (capped, redacted), while the ring holds it. */
    readonly request: (seq: number) => Effect.Effect<Shown<Network.Details> | undefined>
  }
>()("switchyard/Sandbox/PageRecords") {
  static readonly layer = Layer.effect(
    PageRecords,
    Effect.gen(function* () {
      const life = yield* BrowserLife
      const tabs = yield* Tabs
      const console = Effect.fn("PageRecords.console")(function* (query: Console.Query) {
        const live = yield* life.current
        if (Option.isNone(live)) return { messages: [], last: 0 }
        const { link, targetId } = live.value
        // Without a `since`, what the active tab's page did since it loaded.
        const answer = yield* link.console(query.since === undefined ? { ...query, page: targetId } : query)
        const list = yield* tabs.listed
        return { ...answer, messages: answer.messages.map((m) => shown(targetId, list, m)) }
      })
      const network = Effect.fn("PageRecords.network")(function* (query: Network.Query) {
        const live = yield* life.current
        if (Option.isNone(live)) return { requests: [], last: 0 }
        const { link, targetId } = live.value
        const answer = yield* link.network(query.since === undefined ? { ...query, page: targetId } : query)
        const list = yield* tabs.listed
        return { ...answer, requests: answer.requests.map((r) => shown(targetId, list, r)) }
      })
      const request = Effect.fn("PageRecords.request")(function* (seq: number) {
        const live = yield* life.current
        if (Option.isNone(live)) return undefined
        const details = yield* live.value.link.request(seq)
        return details === undefined ? undefined : shown(live.value.targetId, yield* tabs.listed, details)
      })
      return PageRecords.of({ console, network, request })
    })
  )
}
