/**
 * Starting a local Chromium process, in plain Node with no effect: the binary, who it runs as, its temp profile, its
 * flags, the DevTools URL read from stderr. LocalChromium.ts launches through it, and so does the early launch
 * (EarlyBrowser.ts) before the service's modules load: one launch, the same flags and guarantees for both.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { accessSync, constants } from "node:fs"
import { chown, mkdir, mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { chromiumArgs as egressArgs } from "../../../Egress/ProxyFlags.ts"
import { profileParent, profilePrefix, removeProfile, webrtcThroughProxy, writeOwner } from "./Profile.ts"
import { type Account, decide, reachable, type Sandboxing, setpriv } from "./Sandboxing.ts"

/** The JavaScript heap each page's renderer may use by default, in MiB (`limits.pageHeapMb`'s default). */
export const defaultPageHeapMb = 512

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
    `--js-flags=--max-old-space-size=${options.heapLimitMb ?? defaultPageHeapMb}`,
    `--window-size=${size.width},${size.height}`,
    `--user-data-dir=${profileDir}`,
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    ...(options.extraArgs ?? []),
    ...(options.egressProxy === undefined ? [] : egressArgs(options.egressProxy)),
    "about:blank"
  ]
}

export interface Launched {
  readonly child: ChildProcess
  readonly wsEndpoint: string
  readonly profileDir: string
  readonly ownsProfile: boolean
  /** The temp directory inside a temp profile (RunningBrowser.tempDir), when there is one. */
  readonly tempDir: string | undefined
  /** The user Chromium runs as, when it is not this process's. */
  readonly user: Account | undefined
  readonly exited: () => boolean
  readonly exit: Promise<void>
}

/** Why a launch failed, as BrowserLaunchFailed says it (LocalChromium.ts makes one of it). */
export class LaunchFailure extends Error {
  readonly retryable: boolean
  readonly executable: string | undefined
  constructor(message: string, retryable: boolean, executable?: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.retryable = retryable
    this.executable = executable
  }
}

/** The Chromium binary to run, or a launch failure that says how to get one. */
export const findExecutable = (explicit?: string): string => {
  const configured = explicit ?? process.env.CHROME_PATH
  if (configured !== undefined && configured !== "") {
    if (isExecutable(configured)) return configured
    throw new LaunchFailure(
      `Chromium binary "${configured}" does not exist or is not executable (set CHROME_PATH to a Chromium or Chrome binary)`,
      false,
      configured
    )
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of candidates) {
      const path = join(dir, name)
      if (dir !== "" && isExecutable(path)) return path
    }
  }
  throw new LaunchFailure(
    "no Chromium found: set CHROME_PATH, or install one (Debian/Ubuntu: apt-get install chromium)",
    false
  )
}

/** Who Chromium runs as under `options`, or a launch failure that says what to set. */
export const sandboxingOf = (options: LocalChromiumOptions): Sandboxing => {
  const sandbox = decide(options)
  if (sandbox.kind === "refused") throw new LaunchFailure(sandbox.message, false)
  return sandbox
}

/**
 * What a launch under `options` runs, but for its profile and its proxy: two launches with the same identity are
 * interchangeable (the early browser is adopted only when it has the configured one). Undefined when it cannot launch.
 */
export const identity = (options: LocalChromiumOptions): string | undefined => {
  try {
    const executable = findExecutable(options.executablePath)
    const sandbox = sandboxingOf(options)
    const { egressProxy: _, profileDir: __, ...rest } = options
    return JSON.stringify([executable, sandbox, options.display ?? null, baseArgs(rest, "")])
  } catch {
    return undefined
  }
}

/**
 * Launches Chromium: its binary, its sandbox, a temp profile (unless one is configured) with WebRTC held to the
 * proxy, the process started in a group of its own that dies with this process; resolves once DevTools listens.
 * A temp profile is removed when the launch fails.
 */
export const launch = async (
  options: LocalChromiumOptions,
  /** Told as soon as the process is spawned, before DevTools listens. */
  spawned?: (pid: number, profileDir: string) => void
): Promise<Launched> => {
  const executable = findExecutable(options.executablePath)
  const sandbox = sandboxingOf(options)
  const ownsProfile = options.profileDir === undefined
  const profileDir =
    options.profileDir ??
    (await mkdtemp(join(profileParent(sandbox), profilePrefix)).catch((cause) => {
      throw new LaunchFailure(`cannot create a temp profile: ${String(cause)}`, false, undefined, cause)
    }))
  const failed = async (failure: LaunchFailure) => {
    if (ownsProfile) await removeProfile(profileDir)
    return Promise.reject(failure)
  }
  if (sandbox.kind === "user") {
    const { uid, gid, name } = sandbox.account
    const blocked = reachable(profileDir)
    if (blocked !== undefined)
      return failed(
        new LaunchFailure(
          `Chromium runs as ${name}, which cannot reach its profile ${profileDir}: ${blocked} lets no other user through (chmod o+x it, or use another TMPDIR)`,
          false
        )
      )
    // The profile (and what Chromium keeps under HOME) belongs to the user it runs as; a configured one is left be.
    if (ownsProfile) await chown(profileDir, uid, gid).catch(() => undefined)
  }
  const tempDir = ownsProfile ? await ownTempDir(profileDir, sandbox) : undefined
  if (options.egressProxy !== undefined) {
    const owner = sandbox.kind === "user" ? sandbox.account : undefined
    const set = await webrtcThroughProxy(profileDir, owner).then(
      () => undefined,
      (cause) =>
        new LaunchFailure(
          `cannot set WebRTC to go through the egress proxy in the profile ${profileDir}: ${String(cause)}`,
          false,
          undefined,
          cause
        )
    )
    if (set !== undefined) return failed(set)
  }
  const args = baseArgs(options, profileDir)
  const timeoutMs = options.launchTimeoutMs ?? 30_000
  const onSpawn = (pid: number) => {
    // The owner file marks the profile live from the spawn on: a later run reaps it only once this pid is gone.
    if (ownsProfile) writeOwner(profileDir, pid)
    spawned?.(pid, profileDir)
  }
  return start(executable, args, profileDir, ownsProfile, tempDir, options, timeoutMs, sandbox, onSpawn).catch(
    (cause) =>
      failed(
        new LaunchFailure(
          `Chromium at ${executable} did not start: ${(cause as Error).message}`,
          true,
          executable,
          cause
        )
      )
  )
}

/**
 * A temp directory inside a temp profile, its user's, gone with the profile: for the copies of files the browser is
 * to read, and for Chromium's own temp files (`socketFits`). Undefined when it cannot be made.
 */
const ownTempDir = async (profileDir: string, sandbox: Sandboxing) => {
  const dir = join(profileDir, ".tmp")
  try {
    await mkdir(dir, { mode: 0o700 })
    if (sandbox.kind === "user") await chown(dir, sandbox.account.uid, sandbox.account.gid)
    return dir
  } catch {
    return undefined
  }
}

/**
 * Whether Chromium's TMPDIR can be `dir`: its singleton socket goes in a directory of its own there, removed only by a
 * browser that exits cleanly (a temp profile's is killed), so under /tmp one would stay behind per session; the
 * socket's path must fit in 107 bytes. Where it does not, the directory is removed with the profile (Profile.ts).
 */
const socketFits = (dir: string) => `${dir}/org.chromium.Chromium.XXXXXX/SingletonSocket`.length <= 107

/** Chromium's TMPDIR: the profile's own where the socket fits; else TMPDIR, or /tmp for another user (who may write
 * there) and wherever TMPDIR is too long. */
const chromiumTemp = (tempDir: string | undefined, sandbox: Sandboxing) => {
  if (tempDir !== undefined && socketFits(tempDir)) return tempDir
  const inherited = sandbox.kind === "user" ? "/tmp" : tmpdir()
  return socketFits(inherited) ? inherited : "/tmp"
}

const start = (
  executable: string,
  args: ReadonlyArray<string>,
  profileDir: string,
  ownsProfile: boolean,
  tempDir: string | undefined,
  options: LocalChromiumOptions,
  timeoutMs: number,
  sandbox: Sandboxing,
  onSpawn: (pid: number) => void
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
            XDG_CONFIG_HOME: join(profileDir, ".config"),
            XDG_CACHE_HOME: join(profileDir, ".cache")
          }
        : {}),
      TMPDIR: chromiumTemp(tempDir, sandbox)
    }
    // Own process group, so release can kill renderers and helpers along with the browser.
    const child = spawn(command, argv, { detached: true, stdio: ["ignore", "ignore", "pipe"], env })
    if (child.pid !== undefined) onSpawn(child.pid)
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
          resolve({
            child,
            wsEndpoint: match[1],
            profileDir,
            ownsProfile,
            tempDir,
            user,
            exited: () => exited,
            exit
          })
          return
        }
      }
    })
  })

export const killGroup = (child: ChildProcess) => {
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
