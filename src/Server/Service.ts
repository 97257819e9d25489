/**
 * The long-lived service: builds every layer from the configuration (logging, engines, sessions) and reaps what a
 * crashed run left. Startup.ts serves a surface over it and shuts it down gracefully (calls in flight answer
 * `shutting_down`, engines disconnect, browsers close, logs flush).
 */
import { readFile } from "node:fs/promises"
import { networkInterfaces } from "node:os"
import { Deferred, Effect, Layer, Logger } from "effect"
import * as Policy from "../Cascade/Policy.ts"
import * as Address from "../Egress/Address.ts"
import type * as Egress from "../Egress/Egress.ts"
import * as Relay from "../Egress/Relay.ts"
import { NotConfigured } from "../Errors/Engine.ts"
import { InvalidInput } from "../Errors/Page.ts"
import * as Secrets from "../Logging/Secrets.ts"
import * as SystemLog from "../Logging/SystemLog.ts"
import * as Telemetry from "../Logging/Telemetry.ts"
import * as Folders from "../Sandbox/Folders.ts"
import * as AdsPower from "../Sandbox/Provider/AdsPower.ts"
import { BrowserProvider } from "../Sandbox/Provider/Browser.ts"
import * as CdpEndpoint from "../Sandbox/Provider/CdpEndpoint.ts"
import * as EarlyBrowser from "../Sandbox/Provider/EarlyBrowser.ts"
import * as Process from "../Sandbox/Provider/LocalChromium/Process.ts"
import * as LocalChromium from "../Sandbox/Provider/LocalChromium.ts"
import * as WarmPool from "../Sandbox/Provider/WarmPool.ts"
import * as Location from "../Store/Location.ts"
import * as Resolutions from "../Store/Resolutions.ts"
import * as StorageStates from "../Store/StorageStates.ts"
import { make as makeTakeovers, Takeovers } from "../Takeover/Takeovers.ts"
import type * as Config from "./Config.ts"
import * as Reaper from "./Reaper.ts"
import * as SessionStack from "./SessionStack.ts"
import { Sessions } from "./Sessions.ts"

type Registry = Effect.Success<ReturnType<typeof Reaper.register>>

/**
 * Each session's browser provider: a layer built per session, or one built here once (a warm pool's). The browser the
 * entry started early (EarlyBrowser.ts) becomes the pool's first when this configuration would launch the same one;
 * otherwise it is stopped.
 */
const provider = (config: Config.ServiceConfig, registry: Registry) =>
  Effect.gen(function* () {
    const early = EarlyBrowser.take()
    const taken = early === undefined ? undefined : yield* Effect.promise(() => early)
    let adopted = false
    const built = yield* providerOf(config, registry, (options) => {
      if (taken === undefined || Process.identity(options) !== taken.identity) return undefined
      adopted = true
      return Relay.adopt(taken.relay).pipe(
        Effect.flatMap((relay) =>
          LocalChromium.adopt(taken.launched, options).pipe(Effect.map((browser) => ({ browser, relay })))
        )
      )
    })
    if (taken !== undefined && !adopted) yield* Effect.forkDetach(Effect.promise(() => EarlyBrowser.close(taken)))
    return built
  })

const providerOf = (
  config: Config.ServiceConfig,
  registry: Registry,
  early: (options: LocalChromium.LocalChromiumOptions) => WarmPool.WarmPoolOptions["adopt"]
) =>
  Effect.gen(function* () {
    const browser = config.browser
    if (browser.provider === "cdp" && browser.cdpUrl) return CdpEndpoint.layer({ endpoint: browser.cdpUrl })
    if (browser.provider === "adspower") {
      const a = browser.adspower
      return AdsPower.layer({
        baseUrl: a.url,
        ...(a.userId ? { userId: a.userId } : {}),
        ...(a.serialNumber ? { serialNumber: a.serialNumber } : {}),
        ...(a.apiKey ? { apiKey: a.apiKey } : {})
      })
    }
    const options = {
      ...(browser.chromePath ? { executablePath: browser.chromePath } : {}),
      ...(browser.profileDir ? { profileDir: browser.profileDir } : {}),
      headless: browser.headless,
      user: browser.user,
      noSandbox: browser.noSandbox,
      heapLimitMb: config.limits.pageHeapMb,
      registry
    }
    // Each session's browser is launched through that session's egress proxy (LocalChromium.layer reads it); a browser
    // started ahead (sessions.warmBrowsers) goes through a relay its session binds to that proxy when it takes it. One
    // profile directory cannot serve two browsers: a configured one is never started ahead.
    // With human takeover on, every session's browser is a headed one on its own display: none is started ahead.
    const { warmBrowsers, maxBrowsers } = config.sessions
    if (warmBrowsers === 0 || browser.profileDir || config.human.enabled) return LocalChromium.layer(options)
    const adopt = early(options)
    const pool = yield* WarmPool.make(
      (egressProxy) => LocalChromium.make(egressProxy === undefined ? options : { ...options, egressProxy }).acquire,
      { size: warmBrowsers, maxBrowsers, ...(adopt === undefined ? {} : { adopt }) }
    )
    return Layer.succeed(BrowserProvider, pool)
  })

const policyOf = (config: Config.ServiceConfig) =>
  typeof config.cascade === "string" ? Policy.load(config.cascade) : Effect.succeed(config.cascade)

/** Where the service listens for HTTP clients, when it does (stdio otherwise). */
export interface Listening {
  readonly host: string
  /** The port configured; 0 lets the system pick one when the server binds, which the server sets in `bound`. */
  readonly port: number
  /** The port the server listens on, once it does: a session's egress, made as the session opens, refuses it (a
   * session opened before, as a fleet's runner may open one, waits for it). Required with port 0. */
  readonly bound?: Deferred.Deferred<number> | undefined
}

/**
 * Each session's egress: the configured lists, loopback and private ranges allowed on stdio and on a loopback HTTP
 * bind unless configured, refused beyond loopback; the service's own HTTP port refused always (a page must not
 * drive the service that drives its browser).
 */
export const egressOf = (config: Config.ServiceConfig, http?: Listening): Egress.EgressOptions => {
  const own =
    http === undefined || http.port === 0
      ? []
      : [
          `127.0.0.0/8:${http.port}`,
          `[::1]:${http.port}`,
          ...(Address.isLoopbackHost(http.host) ? [] : wildcard(http.host) ? localAddresses() : [http.host]).map((a) =>
            a.includes(":") ? `[${a.replace(/^\[|\]$/g, "")}]:${http.port}` : `${a}:${http.port}`
          )
        ]
  return {
    config: { ...config.egress, deny: [...config.egress.deny, ...own] },
    privateNetworks: config.urls.privateNetworks ?? (http === undefined || Address.isLoopbackHost(http.host)),
    schemes: config.urls.schemes
  }
}

const wildcard = (host: string) => host === "0.0.0.0" || host === "::" || host === "[::]" || host === ""

/** Every address of this machine's interfaces: a wildcard bind listens on each. */
const localAddresses = () =>
  Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address.replace(/%.*$/, "")))

/**
 * The secrets tools may refer to: `SWITCHYARD_SECRET_<NAME>` from the environment, then the secrets file (a JSON
 * object of name → value), which wins for a name both set.
 */
export const loadSecrets = (config: Config.ServiceConfig, env: Record<string, string | undefined> = process.env) =>
  Effect.gen(function* () {
    const found = Secrets.fromEnvironment(env)
    const path = config.secretsFile
    if (path !== undefined) {
      const json = yield* Effect.tryPromise({
        try: async () => JSON.parse(await readFile(path, "utf8")) as unknown,
        catch: (cause) =>
          new InvalidInput({
            field: "secretsFile",
            message: `configuration secretsFile: cannot read ${path} as JSON: ${(cause as Error).message}`
          })
      })
      if (typeof json !== "object" || json === null || Array.isArray(json))
        return yield* new InvalidInput({
          field: "secretsFile",
          message: `configuration secretsFile: ${path} is not a JSON object of name → value`
        })
      for (const [name, value] of Object.entries(json))
        if (typeof value === "string" && /^[A-Za-z][A-Za-z0-9_]*$/.test(name)) found.set(name.toUpperCase(), value)
    }
    Secrets.register(found)
    return Secrets.names()
  })

/**
 * Every layer the surfaces need, from one validated configuration; `http` when the service listens for HTTP.
 * `events`, when given, wraps the events sink the sessions emit to (`Logging/Events.ts`; a fleet also stores engine
 * events beside its workflows' steps).
 */
export const layer = <R = never>(
  config: Config.ServiceConfig,
  http?: Listening,
  events?: Layer.Layer<never, never, R>,
  /** The store replayed resolutions are kept in, when not the environment's (`switchyard apply --store`). */
  store?: Location.StoreOptions
) =>
  Layer.unwrap(
    Effect.gen(function* () {
      // Without it no session could refuse the service's own port to its pages.
      if (http?.port === 0 && http.bound === undefined)
        return yield* new NotConfigured({ message: "an HTTP service on a port the system picks (0) needs `bound`" })
      yield* loadSecrets(config)
      const root = config.logDir
      // Before this run's own run file is written (a crashed run's may have had this pid), logged where the service's
      // logs go; the sweep of unnamed temp profiles in the background.
      const reaped = yield* Reaper.reap(root)
      const reaping = Layer.effectDiscard(
        (reaped.length > 0
          ? Effect.logWarning(`reaped what a crashed run left: ${reaped.join(", ")}`)
          : Effect.void
        ).pipe(Effect.andThen(Effect.forkScoped(Reaper.sweep([config.downloads.dir, Folders.sharedRoot]))))
      )
      const registry = yield* Reaper.register(root)
      // One store of named storage states for every session, opened on its first use.
      const storage = yield* StorageStates.make({ key: config.storage.key, location: Location.fromEnv() })
      // One store of replayed resolutions for every session (and every runner of a fleet), opened on its first use.
      const resolutions = yield* Resolutions.make({ location: store ?? Location.fromEnv(), ttlMs: config.replay.ttlMs })
      const policy = yield* policyOf(config)
      const sessions = config.sessions
      const idle = sessions.idleTimeoutMs
      const human = config.human
      // Only a service whose sessions a person may take over lists takeovers (and answers `POST /resume` with them).
      const takeovers = human.enabled ? yield* makeTakeovers({ root }) : undefined
      const stack: SessionStack.SessionStackOptions = {
        router: {
          policy,
          fallback: config.fallback,
          maxArgumentBytes: config.limits.maxArgumentBytes,
          uploadRoots: config.uploads.roots,
          features: { evaluate: config.tools.evaluate },
          ...(config.storage.state === undefined ? {} : { storageState: config.storage.state }),
          screenshot: config.screenshot
        },
        storage,
        replay: { enabled: config.replay.enabled, store: resolutions },
        sandbox: {
          idleTimeoutMs: idle === 0 ? null : idle,
          leaseTimeoutMs: sessions.leaseTimeoutMs,
          dialogs: config.dialogs,
          downloads: { root: config.downloads.dir, maxBytes: config.downloads.maxBytes },
          limits: { maxPages: config.limits.maxPages, maxNavigationsPerCall: config.limits.maxNavigationsPerCall }
        },
        engines: { model: config.model, playwright: { elementWaitMs: config.waits.elementMs } },
        browser: yield* provider(config, registry),
        egress: egressOf(config, http),
        ...(human.enabled
          ? {
              human: {
                timeoutMs: human.timeoutMs,
                ...(takeovers === undefined ? {} : { registry: takeovers }),
                vnc: { host: human.host, ...(human.publicHost ? { publicHost: human.publicHost } : {}), registry },
                chromium: {
                  ...(config.browser.chromePath ? { executablePath: config.browser.chromePath } : {}),
                  user: config.browser.user,
                  noSandbox: config.browser.noSandbox,
                  heapLimitMb: config.limits.pageHeapMb,
                  registry
                }
              }
            }
          : {})
      }
      // A session a person may take over knows its name, which the takeover gives to resume it; others share one layer
      // (unless the system picks the HTTP port: each then learns it as it opens).
      const shared = SessionStack.layer(stack)
      const layerOf = (name: string, options: SessionStack.SessionStackOptions) =>
        options.human === undefined
          ? SessionStack.layer(options)
          : SessionStack.layer({ ...options, human: { ...options.human, session: name } })
      // A port the system picked is known once the server listens: a session opened before (a fleet's runner opens
      // some before its front door binds) waits for it.
      const picked = http?.port === 0 ? http.bound : undefined
      const session = (name: string) =>
        picked === undefined || http === undefined
          ? stack.human === undefined
            ? shared
            : layerOf(name, stack)
          : Layer.unwrap(
              Deferred.await(picked).pipe(
                Effect.map((port) => layerOf(name, { ...stack, egress: egressOf(config, { host: http.host, port }) }))
              )
            )
      const logging = SessionStack.attemptLog(root, config.artifacts).pipe(
        // OTLP's logger joins the system log's, so it is built where that logger is already in place.
        Layer.merge(Telemetry.layer(config.telemetry).pipe(Layer.provideMerge(SystemLog.layer({ root })))),
        // Whatever still logs to the console writes to stderr: stdout carries the protocol.
        Layer.merge(Layer.succeed(Logger.LogToStderr, true))
      )
      return Sessions.layer({
        maxBrowsers: sessions.maxBrowsers,
        queue: sessions.queue,
        maxPendingPerSession: sessions.maxPendingPerSession,
        slotTimeoutMs: sessions.leaseTimeoutMs,
        idleTimeoutMs: idle === 0 ? null : idle,
        session
      }).pipe(
        Layer.provideMerge(takeovers === undefined ? Layer.empty : Layer.succeed(Takeovers, takeovers)),
        Layer.provide(reaping),
        Layer.provideMerge(events === undefined ? logging : events.pipe(Layer.provideMerge(logging)))
      )
    })
  )
