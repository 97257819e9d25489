/**
 * The long-lived service: builds every layer from the configuration (logging, engines, sessions), reaps what a
 * crashed run left, serves one surface, and shuts down gracefully on SIGTERM, SIGINT or stdin close (calls in
 * flight answer `shutting_down`, engines disconnect, browsers close, logs flush); a second signal forces exit.
 */
import { Deferred, Effect, Layer, Logger, Redacted } from "effect"
import { Cascade } from "../Cascade/Cascade.ts"
import { Engines } from "../Cascade/Engines.ts"
import * as Policy from "../Cascade/Policy.ts"
import { Router } from "../Cascade/Router.ts"
import * as HumanEngine from "../Engine/HumanEngine.ts"
import * as AttemptLog from "../Logging/AttemptLog.ts"
import * as SystemLog from "../Logging/SystemLog.ts"
import * as Telemetry from "../Logging/Telemetry.ts"
import * as AdsPower from "../Sandbox/Provider/AdsPower.ts"
import type { BrowserProvider } from "../Sandbox/Provider/Browser.ts"
import * as CdpEndpoint from "../Sandbox/Provider/CdpEndpoint.ts"
import * as LocalChromium from "../Sandbox/Provider/LocalChromium.ts"
import { Vnc } from "../Sandbox/Provider/Vnc.ts"
import { Sandbox } from "../Sandbox/Sandbox.ts"
import { Handoff } from "../Takeover/Handoff.ts"
import { Occupant } from "../Takeover/Occupant.ts"
import * as Config from "./Config.ts"
import * as Reaper from "./Reaper.ts"
import { Sessions } from "./Sessions.ts"

type Registry = Effect.Success<ReturnType<typeof Reaper.register>>

const provider = (config: Config.ServiceConfig, registry: Registry): Layer.Layer<BrowserProvider> => {
  const browser = config.browser ?? {}
  const kind = browser.provider ?? (browser.cdpUrl ? "cdp" : "local")
  if (kind === "cdp" && browser.cdpUrl) return CdpEndpoint.layer({ endpoint: browser.cdpUrl })
  if (kind === "adspower" && browser.adspower) {
    const a = browser.adspower
    return AdsPower.layer({
      ...(a.url ? { baseUrl: a.url } : {}),
      ...(a.userId ? { userId: a.userId } : {}),
      ...(a.serialNumber ? { serialNumber: a.serialNumber } : {}),
      ...(a.apiKey ? { apiKey: Redacted.make(a.apiKey) } : {})
    })
  }
  return LocalChromium.layer({
    ...(browser.chromePath ? { executablePath: browser.chromePath } : {}),
    ...(browser.profileDir ? { profileDir: browser.profileDir } : {}),
    headless: browser.headless ?? true,
    registry
  })
}

const policyOf = (config: Config.ServiceConfig) =>
  typeof config.cascade === "string"
    ? Policy.load(config.cascade)
    : Effect.succeed(config.cascade ?? Policy.defaultPolicy)

/** Every layer the surfaces need, from one validated configuration. */
export const layer = (config: Config.ServiceConfig) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const root = config.logDir ?? AttemptLog.defaultRoot()
      // Before any browser starts, and logged where the service's logs go.
      const reaping = Layer.effectDiscard(
        Reaper.reap(root).pipe(
          Effect.flatMap((reaped) =>
            reaped.length > 0 ? Effect.logWarning(`reaped what a crashed run left: ${reaped.join(", ")}`) : Effect.void
          )
        )
      )
      const registry = yield* Reaper.register(root)
      const policy = yield* policyOf(config)
      const sessions = config.sessions ?? {}
      const idle = sessions.idleTimeoutMs ?? 300_000
      const model = Config.modelConfig(config)
      const human = config.human ?? {}
      const humanTimeoutMs = human.timeoutMs ?? 120_000
      const stack = <R>(engines: Layer.Layer<Engines>, browser: Layer.Layer<BrowserProvider, never, R>) =>
        Router.layer({
          policy,
          fallback: config.fallback ?? true,
          urlPolicy: {
            schemes: config.urls?.schemes ?? ["http", "https"],
            privateNetworks: config.urls?.privateNetworks ?? true
          },
          maxArgumentBytes: config.limits?.maxArgumentBytes ?? Config.defaultMaxArgumentBytes
        }).pipe(
          Layer.provideMerge(Cascade.layer),
          Layer.provideMerge(
            Sandbox.layer({
              idleTimeoutMs: idle === 0 ? null : idle,
              leaseTimeoutMs: sessions.leaseTimeoutMs ?? 30_000
            })
          ),
          Layer.provide(engines),
          Layer.provide(browser)
        )
      const plain = stack(Engines.layer({ model }), provider(config, registry))
      // A session a person may take over: its own VNC display, its Chromium headed on it from the start.
      const withPerson = Layer.unwrap(
        Effect.gen(function* () {
          // The engine gives up a little before the level's own limit, so the caller sees human_timeout.
          const person = yield* HumanEngine.spec({ timeoutMs: Math.max(1_000, humanTimeoutMs - 5_000) })
          return stack(
            Engines.layer({ model, human: person }),
            Vnc.localChromium({
              ...(config.browser?.chromePath ? { executablePath: config.browser.chromePath } : {}),
              registry
            })
          )
        })
      ).pipe(
        Layer.provideMerge(Occupant.layer),
        Layer.provideMerge(Handoff.layer({ timeoutMs: humanTimeoutMs })),
        Layer.provideMerge(Vnc.display),
        Layer.provideMerge(
          Vnc.layer({
            ...(human.host ? { host: human.host } : {}),
            ...(human.publicHost ? { publicHost: human.publicHost } : {})
          })
        )
      )
      const session = () => (human.enabled ? withPerson : plain)
      const logging = Layer.mergeAll(
        AttemptLog.eventsLayer,
        AttemptLog.artifactsLayer({
          screenshots: config.artifacts?.screenshots ?? true,
          snapshots: config.artifacts?.snapshots ?? true
        })
      ).pipe(
        Layer.provideMerge(AttemptLog.AttemptLog.layer({ root })),
        // OTLP's logger joins the system log's, so it is built where that logger is already in place.
        Layer.merge(Telemetry.layerFromEnv().pipe(Layer.provideMerge(SystemLog.layer({ root })))),
        // Whatever still logs to the console writes to stderr: stdout carries the protocol.
        Layer.merge(Layer.succeed(Logger.LogToStderr, true))
      )
      return Sessions.layer({
        maxBrowsers: sessions.maxBrowsers ?? Config.defaultMaxBrowsers(),
        queue: sessions.queue ?? 16,
        maxPendingPerSession: sessions.maxPendingPerSession ?? 64,
        slotTimeoutMs: sessions.leaseTimeoutMs ?? 30_000,
        idleTimeoutMs: idle === 0 ? null : idle,
        session
      }).pipe(Layer.provide(reaping), Layer.provideMerge(logging))
    })
  )

/**
 * Runs `surface` until it ends (stdin closed) or a signal arrives. The surface gets `stop` to watch; on the first
 * SIGINT/SIGTERM it completes, the surface answers what is in flight and returns; a second signal exits at once.
 */
export const run = <E, R>(surface: (stop: Effect.Effect<void>) => Effect.Effect<void, E, R>) =>
  Effect.gen(function* () {
    const stop = yield* Deferred.make<void>()
    let signals = 0
    const onSignal = (signal: NodeJS.Signals) => {
      signals++
      if (signals > 1) {
        process.stderr.write(`switchyard: ${signal} again: exiting now\n`)
        process.exit(130)
      }
      process.stderr.write(`switchyard: ${signal}: shutting down (send it again to exit at once)\n`)
      Deferred.doneUnsafe(stop, Effect.void)
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        process.on("SIGINT", onSignal)
        process.on("SIGTERM", onSignal)
      }),
      () =>
        Effect.sync(() => {
          process.off("SIGINT", onSignal)
          process.off("SIGTERM", onSignal)
        })
    )
    yield* surface(Deferred.await(stop))
  })
