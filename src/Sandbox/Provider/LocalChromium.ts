/**
 * Browser provider that launches a local Chromium for the session: offline-safe flags, a fresh temp profile, the
 * DevTools URL read from stderr, and a process that dies with the service even when the service is SIGKILLed. The
 * launch itself lives in LocalChromium/Process.ts (shared with the early launch), who it runs as in
 * LocalChromium/Sandboxing.ts, its profile directory in LocalChromium/Profile.ts.
 */
import { Deferred, Effect, Layer, Option } from "effect"
import * as CdpConnection from "../../Cdp/Connection.ts"
import * as CdpHttp from "../../Cdp/Http.ts"
import { Egress } from "../../Egress/Egress.ts"
import { BrowserLaunchFailed } from "../../Errors/Browser.ts"
import { BrowserProvider, type RunningBrowser } from "./Browser.ts"
import * as Process from "./LocalChromium/Process.ts"
import * as Profile from "./LocalChromium/Profile.ts"
import * as Sandboxing from "./LocalChromium/Sandboxing.ts"

export {
  baseArgs,
  isExecutable,
  type Launched,
  type LocalChromiumOptions
} from "./LocalChromium/Process.ts"
export { profilePrefix } from "./LocalChromium/Profile.ts"
export { type Account, account, reachable, type Sandboxing } from "./LocalChromium/Sandboxing.ts"

type Launched = Process.Launched
type LocalChromiumOptions = Process.LocalChromiumOptions

const failure = (cause: unknown) =>
  cause instanceof Process.LaunchFailure
    ? new BrowserLaunchFailed({
        retryable: cause.retryable,
        message: cause.message,
        ...(cause.executable === undefined ? {} : { executable: cause.executable }),
        ...(cause.cause === undefined ? {} : { cause: cause.cause })
      })
    : new BrowserLaunchFailed({ retryable: true, message: `Chromium did not start: ${String(cause)}`, cause })

/** The Chromium binary to run, or a launch error that says how to get one. */
export const findExecutable = (explicit?: string): Effect.Effect<string, BrowserLaunchFailed> =>
  Effect.try({ try: () => Process.findExecutable(explicit), catch: failure })

/** How Chromium is sandboxed under `options`, or a launch error that says what to set. */
export const sandboxing = (options: { readonly user?: string | undefined; readonly noSandbox?: boolean | undefined }) =>
  Effect.suspend((): Effect.Effect<Sandboxing.Sandboxing, BrowserLaunchFailed> => {
    const sandbox = Sandboxing.decide(options)
    return sandbox.kind === "refused"
      ? Effect.fail(new BrowserLaunchFailed({ retryable: false, message: sandbox.message }))
      : Effect.succeed(sandbox)
  })

/** Removes temp profiles whose Chromium is gone (LocalChromium/Profile.ts). */
export const reapStaleProfiles = (dir?: string) => Effect.promise(() => Profile.reapStaleProfiles(dir))

/** Told to the registry once the launch is the service's: a configured (persistent) profile is never reported, so a
 * later reaper does not remove it. */
const register = (launched: Launched, options: LocalChromiumOptions) =>
  Effect.sync(
    () =>
      launched.child.pid &&
      options.registry?.started(launched.child.pid, launched.ownsProfile ? launched.profileDir : "")
  )

const launch = (options: LocalChromiumOptions) =>
  Effect.tryPromise({ try: () => Process.launch(options), catch: failure }).pipe(
    Effect.tap((launched) => register(launched, options))
  )

const waitExit = (launched: Launched, ms: number) =>
  Effect.promise(
    () =>
      new Promise<void>((done) => {
        const timer = setTimeout(done, ms)
        void launched.exit.then(() => {
          clearTimeout(timer)
          done()
        })
      })
  )

/**
 * Graceful `Browser.close` for a configured profile (what it keeps is written out), then SIGKILL of the whole process
 * group, then a temp profile is removed: nothing in one is kept, so its browser is killed at once.
 */
const close = (launched: Launched, closeTimeoutMs: number) =>
  Effect.gen(function* () {
    if (!launched.exited() && !launched.ownsProfile) {
      yield* Effect.scoped(
        CdpConnection.connect(launched.wsEndpoint, 1_000).pipe(Effect.flatMap((cdp) => cdp.send("Browser.close")))
      ).pipe(Effect.timeoutOption(1_000), Effect.ignore)
      yield* waitExit(launched, closeTimeoutMs)
    }
    Process.killGroup(launched.child) // renderers and helpers too, even when the browser itself went first
    yield* waitExit(launched, 2_000)
    if (launched.ownsProfile) yield* Effect.promise(() => Profile.removeProfile(launched.profileDir))
  })

/** A launched Chromium as a running browser, closed with the scope (a graceful close first for a configured profile). */
const running = (launched: Effect.Effect<Launched, BrowserLaunchFailed>, options: LocalChromiumOptions) =>
  Effect.acquireRelease(launched, (l) => close(l, options.closeTimeoutMs ?? 3_000)).pipe(
    Effect.map((launched): RunningBrowser => {
      const httpEndpoint = `http://${new URL(launched.wsEndpoint).host}`
      const exit = Deferred.makeUnsafe<void>()
      void launched.exit.then(() => Deferred.doneUnsafe(exit, Effect.void))
      return {
        exit,
        wsEndpoint: launched.wsEndpoint,
        httpEndpoint,
        pid: launched.child.pid ?? null,
        ...(launched.user === undefined ? {} : { user: { uid: launched.user.uid, gid: launched.user.gid } }),
        ...(launched.tempDir === undefined ? {} : { tempDir: launched.tempDir }),
        alive: Effect.suspend(() =>
          launched.exited()
            ? Effect.succeed(false)
            : CdpHttp.version(httpEndpoint, 2_000).pipe(
                Effect.as(true),
                Effect.orElseSucceed(() => false)
              )
        )
      }
    })
  )

/** A Chromium launched before the service's modules loaded (EarlyBrowser.ts), made the service's like one it launched. */
export const adopt = (launched: Promise<Launched>, options: LocalChromiumOptions) =>
  running(
    Effect.tryPromise({ try: () => launched, catch: failure }).pipe(Effect.tap((l) => register(l, options))),
    options
  )

export const make = (options: LocalChromiumOptions = {}): BrowserProvider["Service"] =>
  BrowserProvider.of({ name: "local", canRelaunch: true, acquire: running(launch(options), options) })

/** The session's egress proxy, when the session has one and the options name none. */
export const throughEgress = (options: LocalChromiumOptions) =>
  Effect.serviceOption(Egress).pipe(
    Effect.map((egress) =>
      options.egressProxy !== undefined || Option.isNone(egress)
        ? options
        : { ...options, egressProxy: egress.value.proxyUrl }
    )
  )

/** A Chromium per session, launched through the session's egress proxy when it has one (SessionStack gives each). */
export const layer = (options: LocalChromiumOptions = {}) =>
  Layer.effect(BrowserProvider, throughEgress(options).pipe(Effect.map(make)))
