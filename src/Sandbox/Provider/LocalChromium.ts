/**
 * Browser provider that launches a local Chromium for the session: offline-safe flags, a fresh temp profile, the
 * DevTools URL read from stderr, and a process that dies with the service even when the service is SIGKILLed. Who it
 * runs as lives in LocalChromium/Sandboxing.ts, its profile directory in LocalChromium/Profile.ts.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { accessSync, constants } from "node:fs"
import { chown, mkdtemp, writeFile } from "node:fs/promises"
import { delimiter, join } from "node:path"
import { Deferred, Effect, Layer, Option } from "effect"
import * as CdpConnection from "../../Cdp/Connection.ts"
import * as CdpHttp from "../../Cdp/Http.ts"
import { Egress } from "../../Egress/Egress.ts"
import { chromiumArgs as egressArgs } from "../../Egress/Proxy.ts"
import { BrowserLaunchFailed } from "../../Errors/Browser.ts"
import * as Limits from "../Limits.ts"
import { BrowserProvider, type RunningBrowser } from "./Browser.ts"
import { ownerFile, profileParent, profilePrefix, removeProfile, webrtcThroughProxy } from "./LocalChromium/Profile.ts"
import { type Account, reachable, type Sandboxing, sandboxing, setpriv } from "./LocalChromium/Sandboxing.ts"

export { profilePrefix, reapStaleProfiles } from "./LocalChromium/Profile.ts"
export { type Account, account, reachable, type Sandboxing, sandboxing } from "./LocalChromium/Sandboxing.ts"

export interface LocalChromiumOptions {
  /** Chromium binary; default `$CHROME_PATH`, else the first of chromium/chrome found on PATH. */
  readonly executablePath?: string
  readonly headless?: boolean
  /** A persistent profile directory; when absent each launch gets a fresh temp profile that is removed on close. */
  readonly profileDir?: string
  readonly windowSize?: { readonly width: number; readonly height: number }
  /** X display for a headed browser (the VNC display). */
  readonly display?: string
  readonly extraArgs?: ReadonlyArray<string>
  /** The egress proxy (`Egress.proxyUrl`): every request of the browser, loopback included, goes through it. */
  readonly egressProxy?: string
  /** When the service runs as root: the unprivileged user Chromium runs as, with its sandbox on (a name from
   * /etc/passwd or `uid[:gid]`); default `nobody`. */
  readonly user?: string
  /** Chromium without its sandbox (`--no-sandbox`): only when configured, e.g. a kernel without user namespaces. */
  readonly noSandbox?: boolean
  /** The JavaScript heap each page's renderer may use, in MiB (V8's old space); default 512. A page that allocates
   * without end crashes its own renderer at this size instead of exhausting the machine. */
  readonly heapLimitMb?: number
  readonly launchTimeoutMs?: number
  /** How long a graceful close may take before the process group is killed. */
  readonly closeTimeoutMs?: number
  /** Told about each browser started and stopped, so a later run can reap what a crashed one left. */
  readonly registry?: {
    /** `profileDir` is "" for a configured profile, which is not ours to remove. */
    readonly started: (pid: number, profileDir: string) => void
    readonly stopped: (pid: number) => void
  }
}

const candidates = ["chromium", "chromium-browser", "google-chrome-stable", "google-chrome"]

/** Whether `path` is a file this process may run. */
export const isExecutable = (path: string) => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The Chromium binary to run, or a launch error that says how to get one. */
export const findExecutable = (explicit?: string): Effect.Effect<string, BrowserLaunchFailed> =>
  Effect.suspend(() => {
    const configured = explicit ?? process.env.CHROME_PATH
    if (configured !== undefined && configured !== "") {
      return isExecutable(configured)
        ? Effect.succeed(configured)
        : Effect.fail(
            new BrowserLaunchFailed({
              executable: configured,
              retryable: false,
              message: `Chromium binary "${configured}" does not exist or is not executable (set CHROME_PATH to a Chromium or Chrome binary)`
            })
          )
    }
    for (const dir of (process.env.PATH ?? "").split(delimiter)) {
      for (const name of candidates) {
        const path = join(dir, name)
        if (dir !== "" && isExecutable(path)) return Effect.succeed(path)
      }
    }
    return Effect.fail(
      new BrowserLaunchFailed({
        retryable: false,
        message: "no Chromium found: set CHROME_PATH, or install one (Debian/Ubuntu: apt-get install chromium)"
      })
    )
  })

/** Flags that keep Chromium quiet on a machine with no network beyond loopback. */
export const baseArgs = (options: LocalChromiumOptions, profileDir: string): Array<string> => {
  const size = options.windowSize ?? { width: 1280, height: 800 }
  return [
    ...(options.headless === false ? [] : ["--headless"]),
    // Only when configured; --test-type keeps the warning bar about it off a person's screen.
    ...(options.noSandbox === true ? ["--no-sandbox", "--test-type"] : []),
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-breakpad",
    // The WebUI omnibox popups are preloaded as hidden pages, a renderer of their own (about 40 MiB unique memory per
    // browser): a headless session never opens them, and a headed one falls back to the native popup.
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup",
    "--password-store=basic",
    "--use-mock-keychain",
    "--mute-audio",
    `--js-flags=--max-old-space-size=${options.heapLimitMb ?? Limits.defaults.pageHeapMb}`,
    `--window-size=${size.width},${size.height}`,
    `--user-data-dir=${profileDir}`,
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    ...(options.extraArgs ?? []),
    ...(options.egressProxy === undefined ? [] : egressArgs(options.egressProxy)),
    "about:blank"
  ]
}

interface Launched {
  readonly child: ChildProcess
  readonly wsEndpoint: string
  readonly profileDir: string
  readonly ownsProfile: boolean
  /** The user Chromium runs as, when it is not this process's. */
  readonly user: Account | undefined
  readonly exited: () => boolean
  readonly exit: Promise<void>
}

const launch = (options: LocalChromiumOptions) =>
  Effect.gen(function* () {
    const executable = yield* findExecutable(options.executablePath)
    const sandbox = yield* sandboxing(options)
    const ownsProfile = options.profileDir === undefined
    const profileDir =
      options.profileDir ??
      (yield* Effect.tryPromise({
        try: () => mkdtemp(join(profileParent(sandbox), profilePrefix)),
        catch: (cause) =>
          new BrowserLaunchFailed({
            retryable: false,
            message: `cannot create a temp profile: ${String(cause)}`,
            cause
          })
      }))
    if (sandbox.kind === "user") {
      const { uid, gid, name } = sandbox.account
      const blocked = reachable(profileDir)
      if (blocked !== undefined) {
        if (ownsProfile) yield* removeProfile(profileDir)
        return yield* new BrowserLaunchFailed({
          retryable: false,
          message: `Chromium runs as ${name}, which cannot reach its profile ${profileDir}: ${blocked} lets no other user through (chmod o+x it, or use another TMPDIR)`
        })
      }
      // The profile (and what Chromium keeps under HOME) belongs to the user it runs as; a configured one is left be.
      if (ownsProfile) yield* Effect.promise(() => chown(profileDir, uid, gid).catch(() => undefined))
    }
    if (options.egressProxy !== undefined)
      yield* webrtcThroughProxy(profileDir, sandbox.kind === "user" ? sandbox.account : undefined).pipe(
        Effect.tapError(() => (ownsProfile ? removeProfile(profileDir) : Effect.void))
      )
    const args = baseArgs(options, profileDir)
    const timeoutMs = options.launchTimeoutMs ?? 30_000
    return yield* Effect.tryPromise({
      try: () => start(executable, args, profileDir, ownsProfile, options, timeoutMs, sandbox),
      catch: (cause) =>
        new BrowserLaunchFailed({
          executable,
          retryable: true,
          message: `Chromium at ${executable} did not start: ${(cause as Error).message}`,
          cause
        })
    }).pipe(
      // A configured (persistent) profile is never reported: a later reaper must not remove it.
      Effect.tap((launched) =>
        Effect.sync(
          () => launched.child.pid && options.registry?.started(launched.child.pid, ownsProfile ? profileDir : "")
        )
      ),
      Effect.tap((launched) =>
        ownsProfile && launched.child.pid !== undefined
          ? Effect.promise(() =>
              writeFile(join(profileDir, ownerFile), String(launched.child.pid)).catch(() => undefined)
            )
          : Effect.void
      ),
      Effect.tapError(() => (ownsProfile ? removeProfile(profileDir) : Effect.void))
    )
  })

const start = (
  executable: string,
  args: ReadonlyArray<string>,
  profileDir: string,
  ownsProfile: boolean,
  options: LocalChromiumOptions,
  timeoutMs: number,
  sandbox: Sandboxing
) =>
  new Promise<Launched>((resolve, reject) => {
    const as =
      sandbox.kind === "user"
        ? [`--reuid=${sandbox.account.uid}`, `--regid=${sandbox.account.gid}`, "--clear-groups"]
        : []
    const [command, argv] = setpriv
      ? [setpriv, [...as, "--pdeathsig", "SIGKILL", "--", executable, ...args]]
      : [executable, [...args]]
    const env = {
      ...process.env,
      ...(options.display ? { DISPLAY: options.display } : {}),
      // Another user's Chromium keeps what it writes under HOME (NSS database, caches) in its own profile.
      ...(sandbox.kind === "user"
        ? {
            HOME: profileDir,
            // Where every user may write, with a path short enough for its singleton socket.
            TMPDIR: "/tmp",
            XDG_CONFIG_HOME: join(profileDir, ".config"),
            XDG_CACHE_HOME: join(profileDir, ".cache")
          }
        : {})
    }
    // Own process group, so release can kill renderers and helpers along with the browser.
    const child = spawn(command, argv, { detached: true, stdio: ["ignore", "ignore", "pipe"], env })
    let exited = false
    const exit = new Promise<void>((done) => {
      child.once("exit", () => {
        exited = true
        done()
      })
    })
    const tail: Array<string> = []
    let buffer = ""
    let found = false
    const timer = setTimeout(() => {
      killGroup(child)
      reject(new Error(`no DevTools endpoint within ${timeoutMs} ms; stderr: ${tail.join(" | ")}`))
    }, timeoutMs)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("exit", (code, signal) => {
      if (found) return
      clearTimeout(timer)
      reject(new Error(`exited (${signal ?? `code ${code}`}) before DevTools was ready; stderr: ${tail.join(" | ")}`))
    })
    // Keep draining stderr for the browser's whole life: a full pipe would block Chromium.
    child.stderr?.setEncoding("utf8")
    child.stderr?.on("data", (chunk: string) => {
      if (found) return
      buffer += chunk
      const lines = buffer.split("\n")
      buffer = lines.pop() ?? ""
      for (const line of lines) {
        tail.push(line.trim())
        if (tail.length > 8) tail.shift()
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(line)
        if (match?.[1]) {
          found = true
          clearTimeout(timer)
          const user = sandbox.kind === "user" ? sandbox.account : undefined
          resolve({ child, wsEndpoint: match[1], profileDir, ownsProfile, user, exited: () => exited, exit })
          return
        }
      }
    })
  })

const killGroup = (child: ChildProcess) => {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, "SIGKILL")
  } catch {
    try {
      child.kill("SIGKILL")
    } catch {
      // already gone
    }
  }
}

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
    killGroup(launched.child) // renderers and helpers too, even when the browser itself went first
    yield* waitExit(launched, 2_000)
    if (launched.ownsProfile) yield* removeProfile(launched.profileDir)
  })

export const make = (options: LocalChromiumOptions = {}): BrowserProvider["Service"] =>
  BrowserProvider.of({
    name: "local",
    canRelaunch: true,
    acquire: Effect.acquireRelease(launch(options), (launched) =>
      close(launched, options.closeTimeoutMs ?? 3_000)
    ).pipe(
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
  })

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
