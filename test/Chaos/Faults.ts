/**
 * The faults the chaos suite injects into a running service, each done the way it happens for real: a browser
 * killed with SIGKILL, CDP connections reset at the socket, the session's tab closed, an unwritable log root.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import * as CdpConnection from "../../src/Cdp/Connection.ts"
import * as CdpHttp from "../../src/Cdp/Http.ts"

export const faultKinds = [
  "kill_chromium",
  "cdp_socket",
  "close_target",
  "hang_page",
  "llm_500",
  "llm_429",
  "llm_garbage",
  "llm_hang",
  "log_unwritable"
] as const
export type FaultKind = (typeof faultKinds)[number]

/** SIGKILL of the session's browser process: the next call finds it gone. */
export const killChromium = (pid: number) => process.kill(pid, "SIGKILL")

/**
 * Resets every TCP connection to the browser's DevTools port from the client side (`ss -K`, a socket destroy in
 * the kernel): the engine's CDP WebSocket drops as on a network fault while the browser keeps running. Returns how
 * many sockets were closed, or `undefined` when `ss -K` cannot run here (no socket-destroy support or privilege).
 */
export const resetCdpSockets = (port: number): number | undefined => {
  try {
    const out = execFileSync("ss", ["-K", "-t", "dst", "127.0.0.1", "dport", "=", String(port)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    })
    return out.split("\n").filter((line) => /ESTAB/.test(line)).length
  } catch {
    return undefined
  }
}

/** `Target.closeTarget` on every page of the browser, from a separate CDP client: the agent's tab is closed. */
export const closePageTargets = (wsEndpoint: string) =>
  Effect.gen(function* () {
    const origin = yield* CdpHttp.httpOrigin(wsEndpoint)
    const pages = (yield* CdpHttp.listTargets(origin)).filter((t) => t.type === "page")
    yield* Effect.scoped(
      CdpConnection.connect(wsEndpoint).pipe(
        Effect.flatMap((cdp) =>
          Effect.forEach(pages, (page) => cdp.send("Target.closeTarget", { targetId: page.id }), { discard: true })
        )
      )
    )
    return pages.length
  })

export interface Unwritable {
  /** What was done, for the report. */
  readonly how: string
  readonly restore: () => void
}

/** Mount points at or below `dir`, from this process's mount table (octal escapes such as \040 decoded). */
export const mountsUnder = (dir: string) =>
  readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) =>
      (line.split(" ")[4] ?? "").replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)))
    )
    .filter((point) => point === dir || point.startsWith(`${dir}/`))

const isMountPoint = (dir: string) => mountsUnder(dir).includes(dir)

/**
 * Makes the log root unwritable. As root, permissions do not stop writes, so: a read-only bind mount of the root
 * over itself (EROFS) where mounting is allowed, else the `browser-automation` tree swapped for a plain file
 * (ENOTDIR for every trace). Files the service already holds open (the system log) keep working either way.
 */
export const makeUnwritable = (root: string): Unwritable => {
  try {
    execFileSync("mount", ["--bind", root, root], { stdio: "ignore" })
    try {
      execFileSync("mount", ["-o", "remount,bind,ro", root], { stdio: "ignore" })
    } catch (error) {
      execFileSync("umount", [root], { stdio: "ignore" })
      throw error
    }
    return {
      how: "read-only bind mount over the log root (EROFS)",
      // A shared mount propagates the bind to its peers, which can stack a second one at the same point: all go.
      restore: () => {
        execFileSync("umount", ["-l", root], { stdio: "ignore" })
        for (let i = 0; i < 5 && isMountPoint(root); i++) execFileSync("umount", ["-l", root], { stdio: "ignore" })
      }
    }
  } catch {
    const tree = join(root, "browser-automation")
    const saved = `${tree}.chaos-saved`
    mkdirSync(tree, { recursive: true })
    renameSync(tree, saved)
    writeFileSync(tree, "")
    return {
      how: "browser-automation/ replaced by a plain file (ENOTDIR)",
      restore: () => {
        rmSync(tree, { force: true })
        renameSync(saved, tree)
      }
    }
  }
}
