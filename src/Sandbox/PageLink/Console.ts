/**
 * The console of the session's pages, kept in a bounded ring: console calls, uncaught errors and the browser's own
 * messages (a failed load, a blocked script), each with where it came from, redacted as the logs are when read.
 */
import { Effect } from "effect"
import type * as Protocol from "../../Cdp/Protocol.ts"
import { defaultRedactor } from "../../Logging/Redact.ts"

export type Level = "debug" | "info" | "warning" | "error"

export interface Message {
  /** Its place in the session's console: `since` takes the last one an answer showed. */
  readonly seq: number
  readonly level: Level
  /** `console.log` and the like (`console`), an uncaught error (`error`), or the browser's own (`browser`). */
  readonly kind: "console" | "error" | "browser"
  readonly text: string
  /** `url:line:column` of the script that wrote it, when known. */
  readonly source?: string
  /** The tab it came from. */
  readonly tab: string
  /** Milliseconds since the epoch. */
  readonly at: number
}

export interface Query {
  /** The least severe level to include; default everything. */
  readonly level?: Level
  /** Only messages after this `seq`. */
  readonly since?: number
  /** Only this tab's messages. */
  readonly tab?: string
  /** Only this tab's messages since its page loaded (its last navigation). */
  readonly page?: string
  /** At most this many (the newest). */
  readonly limit?: number
}

export interface Answer {
  readonly messages: ReadonlyArray<Message>
  /** The last `seq` of the session's console so far: pass it as `since` next time. */
  readonly last: number
  /** Messages older than the ring holds, dropped before this read. */
  readonly dropped?: number
}

export interface Console {
  /** Takes in one event from a page's session (targetId: the tab it belongs to). */
  readonly observe: (event: Protocol.Event, targetId: string | undefined) => Effect.Effect<void>
  readonly read: (query: Query) => Effect.Effect<Answer>
}

const severity: Record<Level, number> = { debug: 0, info: 1, warning: 2, error: 3 }

const levelOf = (type: string): Level =>
  type === "error" || type === "assert"
    ? "error"
    : type === "warning" || type === "warn"
      ? "warning"
      : type === "debug" || type === "verbose"
        ? "debug"
        : "info"

const maxText = 2_000

/** A logged value as the console shows it: strings as they are, objects by their preview. */
const shown = (arg: Protocol.Protocol.Runtime.RemoteObject): string => {
  if (arg.type === "string") return String(arg.value)
  if (arg.unserializableValue !== undefined) return arg.unserializableValue
  if (arg.type === "undefined") return "undefined"
  if (arg.value !== undefined) return JSON.stringify(arg.value)
  const preview = arg.preview
  if (preview !== undefined && preview.properties.length > 0) {
    const inner = preview.properties
      .map((p) => (preview.subtype === "array" ? (p.value ?? p.type) : `${p.name}: ${p.value ?? p.type}`))
      .join(", ")
    return preview.subtype === "array"
      ? `[${inner}${preview.overflow ? ", …" : ""}]`
      : `{${inner}${preview.overflow ? ", …" : ""}}`
  }
  return arg.description ?? arg.type
}

const at = (url: string | undefined, line: number | undefined, column: number | undefined) =>
  url === undefined || url === "" ? undefined : `${url}:${(line ?? 0) + 1}:${(column ?? 0) + 1}`

/** A message as the ring keeps it: with the browser's own timestamp, to the microsecond, that tells a replay apart. */
interface Kept extends Message {
  readonly stamp: number
}

export const make = (capacity: number): Effect.Effect<Console> =>
  Effect.gen(function* () {
    // Mutated in place, one message at a time: a page that logs in a loop costs a push and a shift per message.
    const messages: Array<Kept> = []
    let seq = 0
    /** Per tab, the last message before its page's last navigation. */
    const loaded = new Map<string, number>()
    // A page attached again (the link reconnected) reports its console's earlier messages again, with the timestamps
    // they had: kept once. The same text written twice within a millisecond (a warning per item) is two messages, so
    // the replay is told by the browser's exact timestamp, not the millisecond the answer shows.
    const keep = (message: Omit<Message, "seq" | "at">, stamp: number) =>
      Effect.sync(() => {
        const again = messages.some(
          (m) => m.stamp === stamp && m.tab === message.tab && m.text === message.text && m.kind === message.kind
        )
        if (again) return
        messages.push({ ...message, at: Math.round(stamp), stamp, seq: ++seq })
        if (messages.length > capacity) messages.shift()
      })

    const observe = (event: Protocol.Event, targetId: string | undefined): Effect.Effect<void> => {
      if (targetId === undefined) return Effect.void
      switch (event.method) {
        case "Page.frameNavigated":
          if (event.params.frame.parentId === undefined) return Effect.sync(() => void loaded.set(targetId, seq))
          return Effect.void
        case "Runtime.consoleAPICalled": {
          const { type, args, stackTrace, timestamp } = event.params
          const frame = stackTrace?.callFrames[0]
          const source = at(frame?.url, frame?.lineNumber, frame?.columnNumber)
          return keep(
            {
              level: levelOf(type),
              kind: "console",
              text: args.map(shown).join(" ").slice(0, maxText),
              ...(source === undefined ? {} : { source }),
              tab: targetId
            },
            timestamp
          )
        }
        case "Runtime.exceptionThrown": {
          const details = event.params.exceptionDetails
          const frame = details.stackTrace?.callFrames[0]
          const source =
            at(details.url, details.lineNumber, details.columnNumber) ??
            at(frame?.url, frame?.lineNumber, frame?.columnNumber)
          const text = details.exception?.description ?? details.text
          return keep(
            {
              level: "error",
              kind: "error",
              text: text.slice(0, maxText),
              ...(source === undefined ? {} : { source }),
              tab: targetId
            },
            event.params.timestamp
          )
        }
        case "Log.entryAdded": {
          const { entry } = event.params
          const source = at(entry.url, entry.lineNumber, undefined)
          return keep(
            {
              level: levelOf(entry.level),
              kind: "browser",
              text: entry.text.slice(0, maxText),
              ...(source === undefined ? {} : { source }),
              tab: targetId
            },
            entry.timestamp
          )
        }
        default:
          return Effect.void
      }
    }

    const read = (query: Query) =>
      Effect.sync((): Answer => {
        const since = Math.max(query.since ?? 0, query.page === undefined ? 0 : (loaded.get(query.page) ?? 0))
        const tab = query.page ?? query.tab
        const oldest = messages[0]?.seq ?? seq + 1
        const chosen = messages.filter(
          (m) =>
            m.seq > since &&
            severity[m.level] >= severity[query.level ?? "debug"] &&
            (tab === undefined || m.tab === tab)
        )
        const limited = query.limit === undefined ? chosen : chosen.slice(-query.limit)
        const redact = defaultRedactor
        return {
          messages: limited.map(
            ({ stamp: _stamp, ...m }): Message => ({
              ...m,
              text: redact.text(m.text),
              ...(m.source === undefined ? {} : { source: redact.url(m.source) })
            })
          ),
          last: seq,
          ...(since < oldest - 1 && oldest > 1 ? { dropped: oldest - 1 - since } : {})
        }
      })

    return { observe, read } satisfies Console
  })
