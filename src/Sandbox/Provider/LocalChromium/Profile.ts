/**
 * A local Chromium's profile directory: where a temp one goes, the WebRTC preference set in it before launch, the
 * owner file that marks it live, and the removal of what a crashed run left behind. Plain code, no effect: the early
 * launch (EarlyBrowser.ts) runs it before the service's modules load.
 */
import { existsSync, lstatSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { chown, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { type Account, reachable, type Sandboxing } from "./Sandboxing.ts"

/** Temp profiles carry this prefix so a later run (or a test) can find what a crashed run left behind. */
export const profilePrefix = "switchyard-profile-"

/**
 * Where a temp profile goes: TMPDIR, unless Chromium runs as another user who cannot get through to it (a private
 * TMPDIR, mode 0700): then /tmp, where every user can. Either way the reaper knows it from the registry.
 */
export const profileParent = (sandbox: Sandboxing) =>
  sandbox.kind === "user" && reachable(join(tmpdir(), "profile")) !== undefined ? "/tmp" : tmpdir()

/**
 * WebRTC only through the proxy: the profile's `webrtc.ip_handling_policy` set to `disable_non_proxied_udp` before
 * launch, merged into what the profile already holds. Chromium then sends no UDP of its own (no STUN, no TURN over
 * UDP, no host candidates) and reaches a TURN server only over TCP through the egress proxy, which checks it like any
 * other connection. The command-line switch of the same name does not hold (packets still left); the preference does.
 */
export const webrtcThroughProxy = async (profileDir: string, owner: Account | undefined) => {
  const dir = join(profileDir, "Default")
  const file = join(dir, "Preferences")
  await mkdir(dir, { recursive: true })
  const before = await readFile(file, "utf8")
    .then((text) => JSON.parse(text) as Record<string, unknown>)
    .catch(() => ({}) as Record<string, unknown>)
  const webrtc = typeof before.webrtc === "object" && before.webrtc !== null ? before.webrtc : {}
  const prefs = {
    ...before,
    webrtc: { ...webrtc, ip_handling_policy: "disable_non_proxied_udp", multiple_routes_enabled: false }
  }
  await writeFile(file, JSON.stringify(prefs))
  if (owner !== undefined) {
    await chown(dir, owner.uid, owner.gid)
    await chown(file, owner.uid, owner.gid)
  }
}

/**
 * The directory of Chromium's singleton socket when it lies outside the profile `dir` (a TMPDIR too long for the
 * socket's path inside it): a killed browser leaves it behind. The link is the browser's user's to point anywhere, so
 * only a real directory of the profile's owner, right under TMPDIR or /tmp, named as Chromium names it.
 */
const socketDirOutside = (dir: string): string | undefined => {
  try {
    const socketDir = dirname(readlinkSync(join(dir, "SingletonSocket")))
    if (!/^(org\.chromium\.Chromium|com\.google\.Chrome)\.\w+$/.test(basename(socketDir))) return undefined
    if (![tmpdir(), "/tmp"].includes(dirname(socketDir))) return undefined
    const found = lstatSync(socketDir)
    return found.isDirectory() && found.uid === lstatSync(dir).uid ? socketDir : undefined
  } catch {
    return undefined
  }
}

/**
 * Removes a temp profile, and the directory of its singleton socket outside it; whether the profile is gone.
 * Chromium's helpers can hold files in the profile for a moment after the browser exits.
 */
export const removeProfile = async (dir: string): Promise<boolean> => {
  const outside = socketDirOutside(dir)
  if (outside !== undefined) await rm(outside, { recursive: true, force: true }).catch(() => undefined)
  await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => undefined)
  return !existsSync(dir)
}

/** `removeProfile` for a process that is exiting, when nothing asynchronous runs any more. */
export const removeProfileNow = (dir: string) => {
  const outside = socketDirOutside(dir)
  if (outside !== undefined) rmSync(outside, { recursive: true, force: true })
  rmSync(dir, { recursive: true, force: true })
}

/** Whether a process runs; a zombie (dead, waiting for its reaper) does not. */
export const running = (pid: number) => {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))
  } catch {
    return false
  }
}

/** Written into each temp profile: the Chromium that uses it, so a later run can tell a live profile from a stale one. */
export const ownerFile = ".switchyard-owner"

/** This process's pid namespace: a pid names a process only within one (a container sharing /tmp has its own). */
export const pidNamespace = (() => {
  try {
    return readlinkSync("/proc/self/ns/pid")
  } catch {
    return ""
  }
})()

/** Whether `namespace` (as written beside a pid; none in files older than it) is this process's, where the pid can be
 * looked up. */
export const sameNamespace = (namespace: string | undefined) => namespace === undefined || namespace === pidNamespace

/**
 * Writes the owner file of `profileDir` for the Chromium `pid`: the pid and the namespace it is one in, whole at once
 * (written beside, then renamed), so a reaper never reads it half written. At once, in the spawn's own turn: the early
 * browser's spawn comes while the service's modules load, which may hold the event loop until a SIGKILL.
 */
export const writeOwner = (profileDir: string, pid: number) => {
  const file = join(profileDir, ownerFile)
  try {
    writeFileSync(`${file}.new`, `${pid} ${pidNamespace}`)
    renameSync(`${file}.new`, file)
  } catch {
    // Without it the profile is reaped only once it is a minute old.
  }
}

/** An owner file's Chromium is gone: it names a pid of this namespace that no longer runs (another's cannot be told);
 * undefined when it names no pid. */
const ownerGone = (text: string) => {
  const [pid, namespace] = text.trim().split(" ")
  const n = Number(pid)
  if (!Number.isInteger(n) || n <= 0) return undefined
  return sameNamespace(namespace) && !running(n)
}

/**
 * Removes temp profiles whose Chromium is gone: what a SIGKILLed service leaves behind (its browser dies with it,
 * but nobody is left to delete the profile). A profile is stale when its owner file names a dead process of this pid
 * namespace, or when it names none and the profile is over a minute old (a launch that never got that far).
 */
export const reapStaleProfiles = async (dir: string = tmpdir()) => {
  const reaped: Array<string> = []
  const entries = await readdir(dir).catch(() => [] as Array<string>)
  for (const name of entries.filter((n) => n.startsWith(profilePrefix))) {
    const path = join(dir, name)
    const owner = await readFile(join(path, ownerFile), "utf8").catch(() => undefined)
    const stale =
      (owner === undefined ? undefined : ownerGone(owner)) ??
      Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now()) > 60_000
    if (stale && (await removeProfile(path))) reaped.push(path)
  }
  return reaped
}
