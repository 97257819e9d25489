/**
 * The requests of the session's pages, kept in a bounded ring: method, URL, status, type, timing and sizes, with the
 * headers and a capped start of the request body kept for a detailed read; everything redacted as the logs are when
 * read (query values, cookies, authorization, secrets in bodies).
 */
import { Effect } from "effect"
import type * as Protocol from "../../Cdp/Protocol.ts"
import { defaultRedactor } from "../../Logging/Redact.ts"

export interface Request {
  readonly seq: number
  readonly method: string
  readonly url: string
  /** Document, XHR, Fetch, Script, Image, … as the browser classifies it. */
  readonly type: string
  readonly status?: number
  readonly mimeType?: string
  /** Why it failed (`net::ERR_CONNECTION_REFUSED`, `blocked`, `canceled`). */
  readonly failed?: string
  /** Milliseconds from sending to the last byte (or the failure). */
  readonly ms?: number
  /** Bytes received over the network, headers included. */
  readonly bytes?: number
  readonly tab: string
}

export interface Details extends Request {
  readonly requestHeaders: Record<string, string>
  readonly requestBody?: string
  readonly responseHeaders?: Record<string, string>
  readonly responseBody?: string
}

export interface Query {
  /** Only URLs containing this text, or matching it when written `/regex/flags`. */
  readonly filter?: string
  readonly since?: number
  readonly tab?: string
  /** Only this tab's requests since its page started loading (its last navigation, the document's request included). */
  readonly page?: string
  /** Include images, fonts, stylesheets, scripts and media that loaded fine (left out by default). */
  readonly all?: boolean
  readonly limit?: number
}

export interface Answer {
  readonly requests: ReadonlyArray<Request>
  readonly last: number
  readonly dropped?: number
}

/** Where a request's body can still be read: its tab and the browser's id for it. */
export interface Stored extends Details {
  readonly requestId: string
  readonly sessionId?: string
  readonly started: number
}

export interface Network {
  readonly observe: (event: Protocol.Event, targetId: string | undefined) => Effect.Effect<void>
  readonly read: (query: Query) => Effect.Effect<Answer>
  /** One request as kept (unredacted, for the caller to fetch its body and redact), if still in the ring. */
  readonly find: (seq: number) => Effect.Effect<Stored | undefined>
}

const maxBody = 4_096
const statics = new Set(["Image", "Font", "Stylesheet", "Script", "Media", "Manifest", "Ping", "Other"])

/** Headers and bodies as a log would show them: cookies, authorization and secrets marked, URLs' values too. */
export const redactDetails = (d: Details): Details => {
  const redact = defaultRedactor
  const headers = (h: Record<string, string>) => redact.value(h) as Record<string, string>
  return {
    ...redacted(d),
    requestHeaders: headers(d.requestHeaders),
    ...(d.requestBody === undefined ? {} : { requestBody: redact.text(d.requestBody) }),
    ...(d.responseHeaders === undefined ? {} : { responseHeaders: headers(d.responseHeaders) }),
    ...(d.responseBody === undefined ? {} : { responseBody: redact.text(d.responseBody) })
  }
}

const redacted = <R extends Request>(r: R): R => ({ ...r, url: defaultRedactor.url(r.url) })

const summary = ({ seq, method, url, type, status, mimeType, failed, ms, bytes, tab }: Stored): Request => ({
  seq,
  method,
  url,
  type,
  ...(status === undefined ? {} : { status }),
  ...(mimeType === undefined ? {} : { mimeType }),
  ...(failed === undefined ? {} : { failed }),
  ...(ms === undefined ? {} : { ms }),
  ...(bytes === undefined ? {} : { bytes }),
  tab
})

const matcher = (filter: string | undefined) => {
  if (filter === undefined || filter === "") return () => true
  const regex = /^\/(.+)\/([a-z]*)$/.exec(filter)
  if (regex !== null) {
    try {
      const re = new RegExp(regex[1]!, regex[2])
      return (url: string) => re.test(url)
    } catch {
      // Not a valid expression: taken as text.
    }
  }
  return (url: string) => url.includes(filter)
}

export const make = (capacity: number): Effect.Effect<Network> =>
  Effect.gen(function* () {
    // Mutated in place: a page that fetches in a loop costs a push and a shift per request.
    const requests: Array<Stored> = []
    let seq = 0
    /** Per tab, the last request before its page's last navigation. */
    const loaded = new Map<string, number>()
    /** Updates the newest request the browser knows by `requestId` (a redirect reuses it for the next hop). */
    const update = (requestId: string, f: (r: Stored) => Stored) =>
      Effect.sync(() => {
        const index = requests.findLastIndex((r) => r.requestId === requestId)
        if (index >= 0) requests[index] = f(requests[index]!)
      })

    const observe = (event: Protocol.Event, targetId: string | undefined): Effect.Effect<void> => {
      if (targetId === undefined) return Effect.void
      switch (event.method) {
        case "Network.requestWillBeSent": {
          const { requestId, request, type, redirectResponse, timestamp, frameId } = event.params
          return Effect.sync(() => {
            // A page target's main frame has the target's id: a document for it is a new page.
            if (type === "Document" && frameId === targetId && redirectResponse === undefined) loaded.set(targetId, seq)
            if (redirectResponse) {
              // The hop before ends here: its status is the redirect's.
              const index = requests.findLastIndex((r) => r.requestId === requestId && r.status === undefined)
              const before = requests[index]
              if (before !== undefined) {
                requests[index] = {
                  ...before,
                  status: redirectResponse.status,
                  responseHeaders: redirectResponse.headers as Record<string, string>,
                  ms: Math.round((timestamp - before.started) * 1000)
                }
              }
            }
            const body = request.postData
            requests.push({
              seq: ++seq,
              requestId,
              ...(event.sessionId === undefined ? {} : { sessionId: event.sessionId }),
              started: timestamp,
              method: request.method,
              url: request.url,
              type: type ?? "Other",
              tab: targetId,
              requestHeaders: request.headers as Record<string, string>,
              ...(body === undefined ? {} : { requestBody: body.slice(0, maxBody) })
            })
            if (requests.length > capacity) requests.shift()
          })
        }
        case "Network.responseReceived": {
          const { requestId, response } = event.params
          return update(requestId, (r) => ({
            ...r,
            status: response.status,
            mimeType: response.mimeType,
            responseHeaders: response.headers as Record<string, string>
          }))
        }
        case "Network.loadingFinished": {
          const { requestId, encodedDataLength, timestamp } = event.params
          return update(requestId, (r) => ({
            ...r,
            bytes: Math.round(encodedDataLength),
            ms: Math.round((timestamp - r.started) * 1000)
          }))
        }
        case "Network.loadingFailed": {
          const { requestId, errorText, canceled, blockedReason, timestamp } = event.params
          return update(requestId, (r) => ({
            ...r,
            failed: canceled ? "canceled" : blockedReason !== undefined ? `blocked: ${blockedReason}` : errorText,
            ms: Math.round((timestamp - r.started) * 1000)
          }))
        }
        default:
          return Effect.void
      }
    }

    const read = (query: Query) =>
      Effect.sync((): Answer => {
        const since = Math.max(query.since ?? 0, query.page === undefined ? 0 : (loaded.get(query.page) ?? 0))
        const tab = query.page ?? query.tab
        const matches = matcher(query.filter)
        const oldest = requests[0]?.seq ?? seq + 1
        const chosen = requests.filter(
          (r) =>
            r.seq > since &&
            (tab === undefined || r.tab === tab) &&
            (query.all === true ||
              !statics.has(r.type) ||
              r.failed !== undefined ||
              (r.status !== undefined && r.status >= 400)) &&
            matches(r.url)
        )
        const limited = query.limit === undefined ? chosen : chosen.slice(-query.limit)
        return {
          requests: limited.map((r) => redacted(summary(r))),
          last: seq,
          ...(since < oldest - 1 && oldest > 1 ? { dropped: oldest - 1 - since } : {})
        }
      })

    return {
      observe,
      read,
      find: (wanted) => Effect.sync(() => requests.find((r) => r.seq === wanted))
    } satisfies Network
  })
