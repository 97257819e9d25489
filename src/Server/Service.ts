/**
 * The long-lived service: builds every layer from the configuration (logging, engines, sessions), reaps what a
 * crashed run left, serves one surface, and shuts down gracefully on SIGTERM, SIGINT or stdin close (calls in
 * flight answer `shutting_down`, engines disconnect, browsers close, logs flush); a second signal forces exit.
 */
import { Context, Deferred, Effect, Layer, Logger } from "effect"
import * as Policy from "../Cascade/Policy.ts"
import * as SystemLog from "../Logging/SystemLog.ts"
import * as Telemetry from "../Logging/Telemetry.ts"
import * as AdsPower from "../Sandbox/Provider/AdsPower.ts"
import { BrowserProvider } from "../Sandbox/Provider/Browser.ts"
import * as CdpEndpoint from "../Sandbox/Provider/CdpEndpoint.ts"
import * as LocalChromium from "../Sandbox/Provider/LocalChromium.ts"
import * as WarmPool from "../Sandbox/Provider/WarmPool.ts"
import type * as Config from "./Config.ts"
import * as Reaper from "./Reaper.ts"
import * as SessionStack from "./SessionStack.ts"
import { Sessions } from "./Sessions.ts"

type Registry = Effect.Success<ReturnType<typeof Reaper.register>>

/** Built once for the service: every session's browser comes from it (and a local one from its warm pool). */
const provider = (config: Config.ServiceConfig, registry: Registry): Layer.Layer<BrowserProvider> => {
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
  const local = LocalChromium.make({
    ...(browser.chromePath ? { executablePath: browser.chromePath } : {}),
    ...(browser.profileDir ? { profileDir: browser.profileDir } : {}),
    headless: browser.headless,
    registry
  })
  // One profile directory cannot serve two browsers: a configured one is never started ahead.
  const { warmBrowsers, maxBrowsers } = config.sessions
  return warmBrowsers > 0 && !browser.profileDir
    ? Layer.effect(BrowserProvider, WarmPool.make(local, { size: warmBrowsers, maxBrowsers }))
    : Layer.succeed(BrowserProvider, local)
}

const policyOf = (config: Config.ServiceConfig) =>
  typeof config.cascade === "string" ? Policy.load(config.cascade) : Effect.succeed(config.cascade)

/** Every layer the surfaces need, from one validated configuration. */
export const layer = (config: Config.ServiceConfig) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const root = config.logDir
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
      const sessions = config.sessions
      const idle = sessions.idleTimeoutMs
      const human = config.human
      const session = SessionStack.layer({
        router: {
          policy,
          fallback: config.fallback,
          urlPolicy: config.urls,
          maxArgumentBytes: config.limits.maxArgumentBytes
        },
        sandbox: { idleTimeoutMs: idle === 0 ? null : idle, leaseTimeoutMs: sessions.leaseTimeoutMs },
        engines: { model: config.model },
        browser: Layer.succeed(
          BrowserProvider,
          Context.get(yield* Layer.build(provider(config, registry)), BrowserProvider)
        ),
        ...(human.enabled
          ? {
              human: {
                timeoutMs: human.timeoutMs,
                vnc: { host: human.host, ...(human.publicHost ? { publicHost: human.publicHost } : {}) },
                chromium: {
                  ...(config.browser.chromePath ? { executablePath: config.browser.chromePath } : {}),
                  registry
                }
              }
            }
          : {})
      })
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
        session: () => session
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
