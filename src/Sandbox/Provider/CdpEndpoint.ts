/**
 * Browser provider that attaches to a browser someone else runs, by its CDP endpoint. Closing the scope only
 * detaches: the browser keeps running, and a dead one cannot be relaunched from here.
 */
import { Config, Effect, Layer, Schema } from "effect"
import * as CdpHttp from "../../Cdp/Http.ts"
import { BrowserUnavailable, EndpointUnreachable, InvalidEndpoint } from "../../Errors/Browser.ts"
import { BrowserProvider, type RunningBrowser } from "./Browser.ts"

export interface CdpEndpointOptions {
  /**
   * `ws://host:port/devtools/browser/<id>` (used as is once the browser answers) or `http(s)://host:port` (and
   * `ws://host:port`), resolved to the full WebSocket URL through `/json/version`.
   */
  readonly endpoint: string
  /** How long the endpoint may take to answer `/json/version` when attaching; default 5 s. */
  readonly connectTimeoutMs?: number
}

const VersionInfo = Schema.Struct({ Browser: Schema.String, webSocketDebuggerUrl: Schema.String })

const browserPath = /^\/devtools\/browser\/([^/]+)$/

/** The browser id at the end of a `…/devtools/browser/<id>` URL, if it is one. */
const browserIdOf = (wsUrl: string): string | undefined => {
  try {
    return browserPath.exec(new URL(wsUrl).pathname)?.[1]
  } catch {
    return undefined
  }
}

interface Target {
  readonly url: URL
  readonly origin: string
  /** Set when the endpoint names one browser; absent when it only names the host. */
  readonly browserId: string | undefined
}

const parse = (endpoint: string): Effect.Effect<Target, InvalidEndpoint> =>
  CdpHttp.httpOrigin(endpoint).pipe(
    Effect.flatMap((origin): Effect.Effect<Target, InvalidEndpoint> => {
      const url = new URL(endpoint) // httpOrigin has already parsed it
      const isWs = url.protocol === "ws:" || url.protocol === "wss:"
      if (!isWs || url.pathname === "/" || url.pathname === "") {
        return Effect.succeed({ url, origin, browserId: undefined })
      }
      const browserId = browserPath.exec(url.pathname)?.[1]
      return browserId === undefined
        ? Effect.fail(
            new InvalidEndpoint({
              endpoint,
              message: `"${endpoint}" is not a browser endpoint: expected ws://host:port/devtools/browser/<id> or http://host:port (a /devtools/page/ URL names one tab, not the browser)`
            })
          )
        : Effect.succeed({ url, origin, browserId })
    })
  )

const attach = Effect.fn("CdpEndpoint.attach")(function* (options: CdpEndpointOptions) {
  const { endpoint } = options
  const target = yield* parse(endpoint)
  const raw = yield* CdpHttp.version(target.origin, options.connectTimeoutMs ?? 5_000).pipe(
    Effect.mapError(
      (error) =>
        new EndpointUnreachable({ endpoint, message: `cannot attach to ${endpoint}: ${error.message}`, cause: error })
    )
  )
  const notCdp = (cause?: unknown) =>
    new InvalidEndpoint({
      endpoint,
      message: `${target.origin} answered /json/version without a browser WebSocket URL: "${endpoint}" is not a Chromium DevTools endpoint`,
      ...(cause === undefined ? {} : { cause })
    })
  const info = yield* Schema.decodeUnknownEffect(VersionInfo)(raw).pipe(Effect.mapError(notCdp))
  const runningId = browserIdOf(info.webSocketDebuggerUrl)
  if (runningId === undefined) return yield* notCdp()
  if (target.browserId !== undefined && target.browserId !== runningId) {
    return yield* new BrowserUnavailable({
      message: `the browser named by ${endpoint} is gone: ${target.origin} now runs browser ${runningId}, not ${target.browserId} (attach with ${target.origin} to take whichever browser runs there)`
    })
  }
  // Keep the host the caller reached the browser by: behind a proxy or port mapping, Chromium's own idea of its
  // address can be unreachable from here.
  const secure = target.url.protocol === "https:" || target.url.protocol === "wss:"
  const wsEndpoint =
    target.browserId === undefined
      ? `${secure ? "wss" : "ws"}://${target.url.host}/devtools/browser/${runningId}`
      : endpoint
  return {
    wsEndpoint,
    httpEndpoint: target.origin,
    pid: null,
    // Alive only while the same browser answers: a browser restarted on the port has a new id and other targets.
    alive: CdpHttp.version(target.origin, 2_000).pipe(
      Effect.map((v) => browserIdOf(v.webSocketDebuggerUrl) === runningId),
      Effect.orElseSucceed(() => false)
    )
  } satisfies RunningBrowser
})

export const make = (options: CdpEndpointOptions): BrowserProvider["Service"] =>
  BrowserProvider.of({
    name: "cdp",
    canRelaunch: false,
    // Nothing to release: the browser is not ours, and every connection to it belongs to an engine.
    acquire: attach(options)
  })

export const layer = (options: CdpEndpointOptions) => Layer.succeed(BrowserProvider, make(options))

/** Reads the endpoint from `SWITCHYARD_CDP_URL` unless other config is given. */
export const layerConfig = (
  options: Config.Wrap<CdpEndpointOptions> = { endpoint: Config.String("SWITCHYARD_CDP_URL") }
) => Layer.effect(BrowserProvider, Config.unwrap(options).pipe(Effect.map(make)))
