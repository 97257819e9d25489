/**
 * The first warm browser, spawned by the entry before the service's modules load (on MCP's stdio front, once
 * `initialize` is answered), so Chromium's own start runs beside them; the warm pool adopts it when the configuration would have launched the same browser, and closes it otherwise.
 * Plain Node with no effect (the entry loads nothing heavier): the launch is LocalChromium/Process.ts's, through a
 * relay (Egress/RelayServer.ts) that refuses every connection until a session takes the browser, at a lower CPU
 * weight until the service reads requests.
 */
import { readFileSync, writeFileSync } from "node:fs"
import * as RelayServer from "../../Egress/RelayServer.ts"
import * as Setting from "../../Setting.ts"
import * as Process from "./LocalChromium/Process.ts"
import { removeProfile, removeProfileNow } from "./LocalChromium/Profile.ts"
import { setpriv } from "./LocalChromium/Sandboxing.ts"

export interface Early {
  /** What it was launched as (Process.identity): adopted only by a service that would launch the same. */
  readonly identity: string
  readonly relay: RelayServer.RelayServer
  readonly launched: Promise<Process.Launched>
}

interface Spawned {
  readonly pid: number
  readonly profileDir: string
}

let early: Promise<Early | undefined> | undefined
let spawned: Spawned | undefined

/** `serve`'s flags that leave the browser as configured (`--headed` does not, a `--config` file may not). */
const keepsBrowser = ["--jsonrpc", "--http", "--host", "--port", "--token", "--log-dir", "--max-browsers"]

/**
 * Whether a person may take over, as Config.ts's `human.enabled` will say, read by the configuration's rules
 * (Setting.ts) from the environment and the file it names. Read here because with takeover on every session gets a
 * headed browser of its own, so a headless one started now would only be closed again.
 */
const takeoverOn = (env: Setting.Env) =>
  Setting.onOff(Setting.word({ key: "human.enabled", env: ["SWITCHYARD_HUMAN"] }, env, configFile(env))) === true

/** The configuration file's JSON, when one is named and can be read. */
const configFile = (env: Setting.Env): unknown => {
  if (!env.SWITCHYARD_CONFIG) return undefined
  try {
    return JSON.parse(readFileSync(env.SWITCHYARD_CONFIG, "utf8"))
  } catch {
    // A file that cannot be read or parsed is the service's to report; the browser is closed if it is not taken.
    return undefined
  }
}

/**
 * The browser options `serve` would start its warm browser with, given its flags (ServeArgs.flags; undefined: not a
 * `serve`), read from the environment as the configuration reads them; undefined when this process will run no local
 * warm browser, or when it could outlive a SIGKILLed service (without setpriv nothing kills it with this process). A
 * configuration file can still say otherwise (only its takeover setting is read here): the service then closes the
 * browser (`take`).
 */
export const optionsFor = (
  flags: ReadonlySet<string> | undefined,
  env: Record<string, string | undefined>
): Process.LocalChromiumOptions | undefined => {
  if (setpriv === undefined) return undefined
  if (env.SWITCHYARD_DATABASE_URL || env.DATABASE_URL) return undefined
  if (env.SWITCHYARD_WARM_BROWSERS === "0" || takeoverOn(env) || env.SWITCHYARD_PROFILE_DIR) return undefined
  if (env.SWITCHYARD_BROWSER !== undefined && env.SWITCHYARD_BROWSER !== "local") return undefined
  if (flags === undefined || ![...flags].every((flag) => keepsBrowser.includes(flag))) return undefined
  const heap = Number(env.SWITCHYARD_PAGE_HEAP_MB)
  return {
    headless: Setting.onOff(env.SWITCHYARD_HEADLESS) ?? true,
    user: env.SWITCHYARD_BROWSER_USER ?? "nobody",
    noSandbox: Setting.onOff(env.SWITCHYARD_NO_SANDBOX) ?? false,
    ...(Number.isInteger(heap) && heap > 0 ? { heapLimitMb: heap } : {})
  }
}

/**
 * Chromium's start shares the two cores with this process's module load, which the first answer waits for. Spawned
 * detached, the browser is a session of its own, so Linux schedules it as a group apart (an autogroup): that group's
 * CPU weight is lowered from the spawn until the service reads requests, when it gets its share back. Nothing changes
 * where autogroups do not apply (no /proc/<pid>/autogroup, or a cgroup's CPU controller in charge).
 */
// Nice 10 weighs about a tenth of the service's group (110 against 1024): the module load keeps nearly all of a core
// that Chromium's threads share with it, while Chromium still runs on what is left.
const startNice = 10
let lowered: { readonly pid: number; readonly nice: string } | undefined
/** The service reads requests: the browser keeps its whole share from now on. */
let shared = false

/**
 * The scheduling group a process is in and its nice value, from `/proc/<pid>/autogroup` (`/autogroup-7 nice 0`). The
 * file is empty for a process in no autogroup of its own (one whose session began before autogroups, as under a
 * supervisor that never calls setsid): it is then scheduled with the machine's root group, `root` here.
 */
const autogroup = (pid: number | "self") => {
  try {
    const text = readFileSync(`/proc/${pid}/autogroup`, "utf8")
    if (text.trim() === "") return { group: "root", nice: "0" }
    const match = /^(\S+) nice (-?\d+)/.exec(text)
    return match === null ? undefined : { group: match[1] as string, nice: match[2] as string }
  } catch {
    return undefined
  }
}

const lower = (pid: number) => {
  const own = autogroup("self")
  const its = autogroup(pid)
  if (own === undefined || its === undefined || its.group === "root" || its.group === own.group) return
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(startNice))
    lowered = { pid, nice: its.nice }
  } catch (error) {
    // The kernel takes one autogroup change per 100 ms, machine-wide: tried again unless its share came back meanwhile.
    // Anything else leaves it at its share.
    if ((error as NodeJS.ErrnoException).code === "EAGAIN" && !shared)
      setTimeout(() => shared || lower(pid), 110).unref()
  }
}

const restore = (to: { readonly pid: number; readonly nice: string }) => {
  try {
    writeFileSync(`/proc/${to.pid}/autogroup`, to.nice)
  } catch (error) {
    // Without CAP_SYS_ADMIN the kernel takes one autogroup change per 100 ms, machine-wide.
    if ((error as NodeJS.ErrnoException).code === "EAGAIN") setTimeout(() => restore(to), 110)
  }
}

/** Gives the early browser its whole share of the CPU back: once the service reads requests, or when it is taken. */
export const fullShare = () => {
  shared = true
  const was = lowered
  lowered = undefined
  if (was !== undefined) restore(was)
}

/** Kills what was spawned and removes its profile, at once: what is left when this process exits without taking it. */
const dropNow = () => {
  const left = spawned
  spawned = undefined
  if (left === undefined) return
  try {
    process.kill(-left.pid, "SIGKILL")
  } catch {
    // gone already
  }
  removeProfileNow(left.profileDir)
}

/**
 * Starts the first browser when `flags` and `env` are a `serve` that will keep one warm; resolves once Chromium is
 * spawned (or nothing is), not when it is up. Until the service takes it, it goes with this process, however the
 * process ends.
 */
export const begin = (
  flags: ReadonlySet<string> | undefined,
  env: Record<string, string | undefined>
): Promise<void> => {
  const options = optionsFor(flags, env)
  const identity = options === undefined ? undefined : Process.identity(options)
  if (options === undefined || identity === undefined) return Promise.resolve()
  process.once("exit", dropNow)
  let started!: () => void
  const spawning = new Promise<void>((resolve) => {
    started = resolve
  })
  early = RelayServer.listen().then(
    (relay) => {
      const launched = Process.launch({ ...options, egressProxy: relay.url }, (pid, profileDir) => {
        spawned = { pid, profileDir }
        if (!shared) lower(pid)
        started()
      })
      // A launch that failed is the service's to report when it takes it; a start that failed ends the wait.
      launched.catch(() => started())
      return { identity, relay, launched }
    },
    () => {
      started()
      return undefined
    }
  )
  return spawning
}

/**
 * Hands the early browser to the service, once: undefined when there is none. It is the caller's from then on: the
 * warm pool adopts it, or `close` stops it.
 */
export const take = (): Promise<Early | undefined> | undefined => {
  const taken = early
  early = undefined
  fullShare()
  if (taken !== undefined) process.removeListener("exit", dropNow)
  return taken
}

/** Stops a browser taken and not adopted: its process group killed, its profile removed, its relay closed. */
export const close = async (taken: Early) => {
  const pid = spawned?.pid
  if (pid !== undefined) {
    try {
      process.kill(-pid, "SIGKILL")
    } catch {
      // gone already
    }
  }
  const launched = await taken.launched.catch(() => undefined)
  if (launched !== undefined) {
    Process.killGroup(launched.child)
    await launched.exit
    if (launched.ownsProfile) await removeProfile(launched.profileDir)
  }
  await taken.relay.close()
}
