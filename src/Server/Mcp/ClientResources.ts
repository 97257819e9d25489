/**
 * One MCP client's resources at work: each answer's resources and changed downloads added to its store (links for the
 * answer), `list_changed` and, for subscribers, `updated` sent; a download still under way watched until it ends; and
 * the client's `resources/*` requests answered from the store.
 */
import { type ErrorCode, McpError, type ServerNotification } from "@modelcontextprotocol/sdk/types.js"
import { Option } from "effect"
import type { ToolAnswer } from "../../Cascade/Router.ts"
import type { PageView } from "../../Sandbox/Sandbox.ts"
import type { ResourceHandlers } from "./Front.ts"
import type { Entry, Store } from "./Resources.ts"

/** How often a download still under way is looked at, for its resource's `updated` notification. */
const downloadPollMs = 500

export interface Reach {
  /** A browser session's tabs, dialog and downloads, read without a call. */
  readonly page: (session: string | undefined) => Promise<Option.Option<PageView>>
  /** Sends the client a notification. */
  readonly notify: (notification: ServerNotification) => Promise<void>
}

export const make = (store: Store, reach: Reach) => {
  const notify = (notification: ServerNotification) => void reach.notify(notification).catch(() => undefined)
  const listChanged = () => notify({ method: "notifications/resources/list_changed" })
  const announce = (uri: string) => {
    if (store.subscribed(uri)) notify({ method: "notifications/resources/updated", params: { uri } })
  }

  /** The session's downloads as the store now knows them; whether any is new, announced when one ended. */
  const downloadsOf = (session: string | undefined, downloads: PageView["downloads"]) => {
    const seen = downloads.map((d, i) => store.download(session, i, d))
    for (const d of seen) if (d.finished) announce(d.entry.uri)
    return seen
  }

  /** While a download is under way, its session is looked at until it ends; subscribers hear when it does. */
  let watching = false
  const watch = () => {
    if (watching || store.pending().length === 0) return
    watching = true
    const look = async () => {
      const sessions = [...new Set(store.pending().map((p) => p.session))]
      const views = await Promise.all(sessions.map(async (s) => [s, await reach.page(s)] as const))
      for (const [session, view] of views) {
        if (Option.isSome(view) && downloadsOf(session, view.value.downloads).some((d) => d.added)) listChanged()
      }
      // A session gone since has nothing more to report: its downloads stay as they were.
      const left = store.pending().filter((p) => views.some(([s, v]) => s === p.session && Option.isSome(v)))
      if (left.length === 0) watching = false
      else setTimeout(() => void look().catch(() => (watching = false)), downloadPollMs).unref()
    }
    setTimeout(() => void look().catch(() => (watching = false)), downloadPollMs).unref()
  }

  /** The resources an answer brings — what the call made, the session's downloads when they changed — as new entries. */
  const collect = (answer: ToolAnswer, session: string | undefined): ReadonlyArray<Entry> => {
    const made = (answer.resources ?? []).map(store.add)
    const downloads = downloadsOf(session, answer.state.downloads ?? [])
    const added = downloads.filter((d) => d.added).map((d) => d.entry)
    if (made.length > 0 || added.length > 0) listChanged()
    watch()
    return [...made, ...added]
  }

  const handlers: ResourceHandlers = {
    list: async () => ({
      resources: store.list().map((e) => ({
        uri: e.uri,
        name: e.name,
        title: e.title,
        mimeType: e.mimeType,
        ...(e.description === undefined ? {} : { description: e.description }),
        ...(e.size === undefined ? {} : { size: e.size })
      }))
    }),
    read: async (request) => {
      const contents = await store.read(request.params.uri)
      if (contents === undefined) {
        // The spec's code for a resource that is not there (or not readable yet: a download under way).
        throw new McpError(
          -32002 as ErrorCode,
          `Resource not found: ${request.params.uri} (resources/list lists this session's resources)`
        )
      }
      return { contents: [contents] }
    },
    subscribe: async (request) => {
      store.subscribe(request.params.uri)
      return {}
    },
    unsubscribe: async (request) => {
      store.unsubscribe(request.params.uri)
      return {}
    }
  }

  return { collect, handlers }
}
