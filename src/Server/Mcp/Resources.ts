/**
 * What an MCP session's calls made — screenshots, PDFs, whole snapshots the budget cut, downloads — as MCP resources of
 * that session only, so a client on another machine can read them (`resources/list`, `resources/read`, subscriptions
 * for `notifications/resources/updated`). Bounded: the oldest go first past a count and a size in memory.
 */
import { readFile } from "node:fs/promises"
import { basename, extname } from "node:path"
import type { Resource as Made } from "../../Cascade/Tool.ts"
import type { Download } from "../../Sandbox/Sandbox.ts"

export interface Entry {
  readonly uri: string
  readonly name: string
  readonly title: string
  readonly mimeType: string
  readonly description?: string
  /** Bytes of the content, when known. */
  readonly size?: number
  readonly text?: string
  readonly blob?: string
  /** A file on the service's machine (a download), read when the resource is. */
  readonly path?: string
  /** A download still under way: listed, not yet readable. */
  readonly pending?: boolean
}

export type Contents = { readonly uri: string; readonly mimeType: string } & (
  | { readonly text: string }
  | { readonly blob: string }
)

const types: Record<string, string> = {
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".txt": "text/plain",
  ".csv": "text/csv",
  ".json": "application/json",
  ".html": "text/html",
  ".zip": "application/zip",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
}
const typeOf = (name: string) => types[extname(name).toLowerCase()] ?? "application/octet-stream"
const textual = (mimeType: string) => mimeType.startsWith("text/") || mimeType === "application/json"

export interface Limits {
  /** Resources kept per MCP session. */
  readonly count: number
  /** Bytes of content held in memory per MCP session (downloads are files, not counted). */
  readonly bytes: number
}

export const defaultLimits: Limits = { count: 200, bytes: 256 * 1024 * 1024 }

export interface Store {
  /** Adds what a call made; answers its entry. */
  readonly add: (made: Made) => Entry
  /**
   * The `index`th download of a browser session (the state block's order): a new resource, or its entry updated;
   * answers the entry, whether it is new and whether it just finished.
   */
  readonly download: (
    session: string | undefined,
    index: number,
    download: Download
  ) => { readonly entry: Entry; readonly added: boolean; readonly finished: boolean }
  readonly list: () => ReadonlyArray<Entry>
  readonly read: (uri: string) => Promise<Contents | undefined>
  readonly subscribe: (uri: string) => void
  readonly unsubscribe: (uri: string) => void
  readonly subscribed: (uri: string) => boolean
  /** Downloads still under way, by the browser session they belong to. */
  readonly pending: () => ReadonlyArray<{ readonly session: string | undefined; readonly entry: Entry }>
}

const sizeOf = (e: Entry) => Buffer.byteLength(e.text ?? "") + (e.blob === undefined ? 0 : (e.blob.length * 3) / 4)

export const make = (limits: Limits = defaultLimits): Store => {
  const entries = new Map<string, Entry>()
  /** A download's resource by its browser session and place among that session's downloads. */
  const downloads = new Map<string, { readonly session: string | undefined; readonly uri: string }>()
  const subscriptions = new Set<string>()
  let next = 0

  const keep = (entry: Entry) => {
    entries.set(entry.uri, entry)
    let held = [...entries.values()].reduce((n, e) => n + sizeOf(e), 0)
    for (const [uri, old] of entries) {
      if (entries.size <= limits.count && held <= limits.bytes) break
      if (uri === entry.uri) continue
      entries.delete(uri)
      held -= sizeOf(old)
    }
    return entry
  }

  const add = (made: Made): Entry => {
    const n = ++next
    return keep({
      uri: `switchyard://${made.kind}/${n}/${made.name}`,
      name: made.name,
      title: `${made.kind} ${n}`,
      mimeType: made.mimeType,
      ...(made.description === undefined ? {} : { description: made.description }),
      ...(made.text === undefined ? {} : { text: made.text, size: Buffer.byteLength(made.text) }),
      ...(made.blob === undefined ? {} : { blob: made.blob, size: Math.floor((made.blob.length * 3) / 4) }),
      ...(made.path === undefined ? {} : { path: made.path })
    })
  }

  const download = (session: string | undefined, index: number, d: Download) => {
    const key = `${session ?? ""}#${index}`
    const known = downloads.get(key)
    const uri = known?.uri ?? `switchyard://download/${++next}/${encodeURIComponent(basename(d.name))}`
    if (known === undefined) downloads.set(key, { session, uri })
    const before = entries.get(uri)
    const entry = keep({
      uri,
      name: basename(d.name),
      title: `download ${basename(d.name)}`,
      mimeType: typeOf(d.name),
      description:
        d.state === "completed"
          ? `Downloaded from ${d.url} (${d.bytes} bytes)`
          : d.state === "canceled"
            ? `The download from ${d.url} was cancelled${d.error === undefined ? "" : `: ${d.error.message}`}`
            : `Downloading from ${d.url}: ${d.bytes} bytes so far`,
      size: d.bytes,
      ...(d.state === "completed" && d.path !== undefined ? { path: d.path } : {}),
      ...(d.state === "in_progress" ? { pending: true } : {})
    })
    return { entry, added: before === undefined, finished: d.state !== "in_progress" && before?.pending === true }
  }

  const read = async (uri: string): Promise<Contents | undefined> => {
    const entry = entries.get(uri)
    if (entry === undefined || entry.pending === true) return undefined
    if (entry.text !== undefined) return { uri, mimeType: entry.mimeType, text: entry.text }
    if (entry.blob !== undefined) return { uri, mimeType: entry.mimeType, blob: entry.blob }
    if (entry.path === undefined) return undefined
    const file = await readFile(entry.path).catch(() => undefined)
    if (file === undefined) return undefined
    return textual(entry.mimeType)
      ? { uri, mimeType: entry.mimeType, text: file.toString("utf8") }
      : { uri, mimeType: entry.mimeType, blob: file.toString("base64") }
  }

  return {
    add,
    download,
    list: () => [...entries.values()],
    read,
    subscribe: (uri) => void subscriptions.add(uri),
    unsubscribe: (uri) => void subscriptions.delete(uri),
    subscribed: (uri) => subscriptions.has(uri),
    pending: () =>
      [...downloads.values()].flatMap(({ session, uri }) => {
        const entry = entries.get(uri)
        return entry?.pending === true ? [{ session, entry }] : []
      })
  }
}
