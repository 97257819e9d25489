/**
 * Browser provider for an AdsPower profile: the Local API starts the profile's browser for the scope and stops it
 * when the scope closes. AdsPower owns the process, so there is no pid and no relaunch from here.
 */
import { Effect, Layer, Redacted, Schema } from "effect"
import * as CdpHttp from "../../Cdp/Http.ts"
import { EndpointUnreachable, InvalidEndpoint, ProviderError } from "../../Errors/Browser.ts"
import { InvalidInput } from "../../Errors/Page.ts"
import { BrowserProvider, type RunningBrowser } from "./Browser.ts"

export interface AdsPowerOptions {
  /** The Local API address; default `http://127.0.0.1:50325`. */
  readonly baseUrl?: string
  /** The profile to open, by AdsPower's user id; exactly one of `userId` and `serialNumber`. */
  readonly userId?: string
  /** The profile to open, by its serial number. */
  readonly serialNumber?: string
  /** Local API key, sent as `Authorization: Bearer <key>` (never logged). */
  readonly apiKey?: Redacted.Redacted<string>
  /** Limit for one start request (opening a profile can take a while); default 30 s. */
  readonly requestTimeoutMs?: number
}

export const defaultBaseUrl = "http://127.0.0.1:50325"

const provider = "adspower"
const stopTimeoutMs = 10_000
const activeTimeoutMs = 2_000

const Envelope = Schema.fromJsonString(
  Schema.Struct({ code: Schema.Number, msg: Schema.optional(Schema.String), data: Schema.optional(Schema.Unknown) })
)

const StartData = Schema.Struct({
  ws: Schema.Struct({ puppeteer: Schema.String }),
  debug_port: Schema.optional(Schema.Union([Schema.String, Schema.Number]))
})

const ActiveData = Schema.Struct({ status: Schema.String })

/** AdsPower answers its rate limit ("Too many request per second") with the same code as every other refusal. */
const isTransient = (msg: string) => /too many|rate limit|frequen|busy|try again/i.test(msg)

interface Api {
  readonly base: string
  readonly headers: Record<string, string>
  /** `user_id=…` or `serial_number=…`: the profile every call names. */
  readonly profile: Readonly<Record<string, string>>
  readonly label: string
}

const api = (options: AdsPowerOptions): Effect.Effect<Api, InvalidEndpoint | InvalidInput> =>
  Effect.suspend((): Effect.Effect<Api, InvalidEndpoint | InvalidInput> => {
    const base = (options.baseUrl ?? defaultBaseUrl).replace(/\/+$/, "")
    const url = URL.parse(base)
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return Effect.fail(
        new InvalidEndpoint({
          endpoint: base,
          message: `AdsPower Local API address "${base}" is not an http(s) URL (default ${defaultBaseUrl})`
        })
      )
    }
    const { userId, serialNumber } = options
    if ((userId === undefined) === (serialNumber === undefined)) {
      return Effect.fail(
        new InvalidInput({
          field: "userId",
          message: "an AdsPower profile needs exactly one of userId and serialNumber"
        })
      )
    }
    const profile: Record<string, string> =
      userId === undefined ? { serial_number: serialNumber ?? "" } : { user_id: userId }
    return Effect.succeed({
      base,
      headers: options.apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(options.apiKey)}` },
      profile,
      label: userId === undefined ? `profile #${serialNumber}` : `profile ${userId}`
    })
  })

/** One Local API call: `data` of a `code: 0` answer, or the refusal as a typed error. */
const call = (
  config: Api,
  path: string,
  extra: Readonly<Record<string, string>>,
  timeoutMs: number
): Effect.Effect<unknown, ProviderError | EndpointUnreachable> =>
  Effect.gen(function* () {
    const url = `${config.base}${path}?${new URLSearchParams({ ...config.profile, ...extra })}`
    const response = yield* Effect.tryPromise({
      try: async (signal) => {
        const res = await fetch(url, {
          headers: config.headers,
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
        })
        return { status: res.status, body: await res.text() }
      },
      catch: (cause) =>
        cause instanceof Error && cause.name === "TimeoutError"
          ? new ProviderError({
              provider,
              retryable: true,
              message: `AdsPower Local API at ${config.base} did not answer ${path} for ${config.label} within ${timeoutMs} ms`,
              cause
            })
          : new EndpointUnreachable({
              endpoint: config.base,
              message: `AdsPower Local API at ${config.base} is unreachable (is AdsPower running and logged in?): ${describe(cause)}`,
              cause
            })
    })
    if (response.status < 200 || response.status > 299) {
      const hint = response.status === 401 || response.status === 403 ? " (check the API key)" : ""
      return yield* new ProviderError({
        provider,
        retryable: response.status >= 500 || response.status === 429 || response.status === 408,
        message: `AdsPower Local API answered HTTP ${response.status} to ${path} for ${config.label}${hint}: ${response.body.slice(0, 200)}`
      })
    }
    const envelope = yield* Schema.decodeUnknownEffect(Envelope)(response.body).pipe(
      Effect.mapError(
        (cause) =>
          new ProviderError({
            provider,
            retryable: false,
            message: `AdsPower Local API sent a malformed answer to ${path} for ${config.label}: ${response.body.slice(0, 200)}`,
            cause
          })
      )
    )
    if (envelope.code !== 0) {
      const msg = envelope.msg ?? "no message"
      return yield* new ProviderError({
        provider,
        code: envelope.code,
        retryable: isTransient(msg),
        message: `AdsPower refused ${path} for ${config.label}: ${msg} (code ${envelope.code})`
      })
    }
    return envelope.data
  })

const describe = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause)
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : ""
  return `${cause.message}${inner}`
}

/** Best effort and bounded: a failed stop must not fail the scope's release. */
const stop = (config: Api) => call(config, "/api/v1/browser/stop", {}, stopTimeoutMs).pipe(Effect.ignore)

const status = (config: Api) =>
  call(config, "/api/v1/browser/active", {}, activeTimeoutMs).pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(ActiveData)),
    Effect.map((data) => data.status)
  )

/** Starts the profile and checks that its browser answers; a browser that does not is stopped again. */
const start = Effect.fn("AdsPower.start")(function* (config: Api, timeoutMs: number) {
  const data = yield* call(config, "/api/v1/browser/start", { open_tabs: "1" }, timeoutMs)
  return yield* Effect.gen(function* () {
    const started = yield* Schema.decodeUnknownEffect(StartData)(data).pipe(
      Effect.mapError(
        (cause) =>
          new ProviderError({
            provider,
            retryable: false,
            message: `AdsPower started ${config.label} but its answer has no ws.puppeteer endpoint: ${JSON.stringify(data)?.slice(0, 200)}`,
            cause
          })
      )
    )
    const wsEndpoint = started.ws.puppeteer
    const httpEndpoint = yield* CdpHttp.httpOrigin(wsEndpoint).pipe(
      Effect.mapError(
        (error) =>
          new ProviderError({
            provider,
            retryable: false,
            message: `AdsPower started ${config.label}: ${error.message}`,
            cause: error
          })
      )
    )
    yield* CdpHttp.version(httpEndpoint, 5_000).pipe(
      Effect.mapError(
        (error) =>
          new EndpointUnreachable({
            endpoint: wsEndpoint,
            message: `AdsPower started ${config.label} at ${wsEndpoint} but its browser does not answer: ${error.message}`,
            cause: error
          })
      )
    )
    return { wsEndpoint, httpEndpoint }
  }).pipe(Effect.onError(() => stop(config)))
})

export const make = (options: AdsPowerOptions): BrowserProvider["Service"] =>
  BrowserProvider.of({
    name: "adspower",
    canRelaunch: false,
    acquire: Effect.gen(function* () {
      const config = yield* api(options)
      // A profile someone already has open (a person in the AdsPower app) is attached to, never stopped.
      const alreadyOpen = yield* status(config).pipe(
        Effect.map((s) => s === "Active"),
        Effect.orElseSucceed(() => false)
      )
      const { wsEndpoint, httpEndpoint } = yield* Effect.acquireRelease(
        start(config, options.requestTimeoutMs ?? 30_000),
        () => (alreadyOpen ? Effect.void : stop(config))
      )
      return {
        wsEndpoint,
        httpEndpoint,
        pid: null,
        alive: Effect.all([status(config), CdpHttp.version(httpEndpoint, activeTimeoutMs)], { concurrency: 2 }).pipe(
          Effect.map(([s]) => s === "Active"),
          Effect.orElseSucceed(() => false)
        )
      } satisfies RunningBrowser
    })
  })

export const layer = (options: AdsPowerOptions) => Layer.succeed(BrowserProvider, make(options))
