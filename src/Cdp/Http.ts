/**
 * The DevTools HTTP endpoints of a browser: `/json/version` (which browser answers, and its WebSocket URL) and
 * `/json/list` (its targets). Cheap checks that need no WebSocket; no page semantics.
 */
import { Effect } from "effect"
import { EndpointUnreachable, InvalidEndpoint } from "../Errors/Browser.ts"

export interface TargetInfo {
  readonly id: string
  readonly type: string
  readonly url: string
  readonly title: string
}

export interface VersionInfo {
  readonly Browser: string
  readonly webSocketDebuggerUrl: string
  readonly "User-Agent"?: string
}

/** Parses a CDP endpoint (`ws://host:port/devtools/browser/<id>` or `http://host:port`) into its HTTP origin. */
export const httpOrigin = (endpoint: string): Effect.Effect<string, InvalidEndpoint> =>
  Effect.suspend(() => {
    const url = URL.parse(endpoint)
    if (url === null) {
      return Effect.fail(
        new InvalidEndpoint({
          endpoint,
          message: `"${endpoint}" is not a URL; expected ws://host:port/devtools/browser/<id> or http://host:port`
        })
      )
    }
    const scheme = url.protocol.replace(/:$/, "")
    if (!["ws", "wss", "http", "https"].includes(scheme) || url.hostname === "") {
      return Effect.fail(
        new InvalidEndpoint({
          endpoint,
          message: `"${endpoint}" is not a CDP endpoint: the scheme must be ws, wss, http or https and a host is required`
        })
      )
    }
    const http = scheme === "wss" || scheme === "https" ? "https" : "http"
    return Effect.succeed(`${http}://${url.host}`)
  })

const getJson = <A>(origin: string, path: string, timeoutMs: number): Effect.Effect<A, EndpointUnreachable> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`${origin}${path}`, {
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
      })
      if (!response.ok) throw new Error(`HTTP ${response.status} from ${path}`)
      return (await response.json()) as A
    },
    catch: (cause) =>
      new EndpointUnreachable({
        endpoint: origin,
        message: `CDP endpoint ${origin} did not answer ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  })

/** `GET /json/version`: doubles as the browser-alive check of the switch protocol (step 5). */
export const version = (origin: string, timeoutMs = 2_000) => getJson<VersionInfo>(origin, "/json/version", timeoutMs)

/** `GET /json/list`: the browser's targets, pages first in most-recently-used order. */
export const listTargets = (origin: string, timeoutMs = 2_000) =>
  getJson<ReadonlyArray<TargetInfo>>(origin, "/json/list", timeoutMs)
