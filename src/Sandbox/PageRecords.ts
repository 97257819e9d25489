/**
 * What the session's pages recorded, as answers show it: console messages, requests and one request's details, read
 * from the kept connection's bounded rings (redacted there), each naming the tab it came from unless it is the active one.
 */
import { Effect, Ref } from "effect"
import type * as Console from "./PageLink/Console.ts"
import type * as Network from "./PageLink/Network.ts"
import type * as SessionState from "./SessionState.ts"

/** A console message or request as answers show it: `tab` (its index) only when it came from another tab. */
export type Shown<A extends { readonly tab: string }> = Omit<A, "tab"> & { readonly tab?: number | string }

/** A tab as answers name it: nothing for the active one, its index for another, its id for one since closed. */
const shown = <A extends { readonly tab: string }>(s: SessionState.SessionState, item: A): Shown<A> => {
  const { tab, ...rest } = item
  if (tab === s.browser?.targetId) return rest
  return { ...rest, tab: s.tabs.list.find((t) => t.id === tab)?.index ?? tab }
}

export const make = (state: Ref.Ref<SessionState.SessionState>) => {
  const messages = Effect.fn("Sandbox.console")(function* (query: Console.Query) {
    const s = yield* Ref.get(state)
    if (s.browser === undefined) return { messages: [], last: 0 }
    // Without a `since`, what the active tab's page did since it loaded.
    const answer = yield* s.browser.link.console(
      query.since === undefined ? { ...query, page: s.browser.targetId } : query
    )
    return { ...answer, messages: answer.messages.map((m) => shown(s, m)) }
  })
  const network = Effect.fn("Sandbox.network")(function* (query: Network.Query) {
    const s = yield* Ref.get(state)
    if (s.browser === undefined) return { requests: [], last: 0 }
    const answer = yield* s.browser.link.network(
      query.since === undefined ? { ...query, page: s.browser.targetId } : query
    )
    return { ...answer, requests: answer.requests.map((r) => shown(s, r)) }
  })
  const request = Effect.fn("Sandbox.request")(function* (seq: number) {
    const s = yield* Ref.get(state)
    if (s.browser === undefined) return undefined
    const details = yield* s.browser.link.request(seq)
    return details === undefined ? undefined : shown(s, details)
  })
  return { console: messages, network, request }
}
