/**
 * A local Chromium's profile directory: where a temp one goes, the WebRTC preference set in it before launch, the
 * owner file that marks it live, and the removal of what a crashed run left behind. Plain code, no effect: the early
 * launch (EarlyBrowser.ts) runs it before the service's modules load.
 */
import { readFileSync, readlinkSync } from "node:fs"
import { chown, mkdir, readdir, readFile, readlink, rm, stat, writeFile } from "node:fs/promises"
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
 * Removes a temp profile, and the directory of Chromium's singleton socket when that lies outside it (a TMPDIR too
 * long for the socket's path): a killed browser leaves it behind. Chromium's helpers can hold files in the profile
 * for a moment after the browser exits.
 */
export const removeProfile = async (dir: string): Promise<void> => {
  const socket = await readlink(join(dir, "SingletonSocket")).catch(() => "")
  const socketDir = dirname(socket)
  if (basename(socketDir).startsWith("org.chromium.Chromium.") && !socketDir.startsWith(`${dir}/`))
    await rm(socketDir, { recursive: true, force: true }).catch(() => undefined)
  await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => undefined)
}

/** Whether a process runs; a zombie (dead, waiting for its reaper) does not. */
const running = (pid: number) => {
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
const pidNamespace = (() => {
  try {
    return readlinkSync("/proc/self/ns/pid")
  } catch {
    return ""
  }
})()

/** The owner file's text for the Chromium `pid` this process started: the pid, and the namespace it is one in. */
export const ownerText = (pid: number) => `${pid} ${pidNamespace}`

/** An owner file's Chromium is gone: it names a pid of this namespace that no longer runs (another's cannot be told). */
const ownerGone = (text: string) => {
  const [pid, namespace] = text.trim().split(" ")
  return (namespace === undefined || namespace === pidNamespace) && !running(Number(pid))
}

/**
 * Removes temp profiles whose Chromium is gone: what a SIGKILLed service leaves behind (its browser dies with it,
 * but nobody is left to delete the profile). A profile is stale when its owner file names a dead process of this pid
 * namespace, or when it has none and is over a minute old (a launch that never got that far).
 */
export const reapStaleProfiles = async (dir: string = tmpdir()) => {
  const reaped: Array<string> = []
  const entries = await readdir(dir).catch(() => [] as Array<string>)
  for (const name of entries.filter((n) => n.startsWith(profilePrefix))) {
    const path = join(dir, name)
    const owner = await readFile(join(path, ownerFile), "utf8").catch(() => undefined)
    const stale =
      owner !== undefined
        ? ownerGone(owner)
        : Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now()) > 60_000
    if (!stale) continue
    await removeProfile(path)
    reaped.push(path)
  }
  return reaped
}
