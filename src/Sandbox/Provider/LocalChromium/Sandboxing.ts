/**
 * Who Chromium runs as and with what sandbox: as root, an unprivileged user through setpriv with Chromium's own
 * sandbox on; the accounts and directory permissions that decide whether that user can reach its profile.
 */
import { existsSync, readFileSync, statSync } from "node:fs"

// setpriv makes the kernel SIGKILL Chromium when this process dies, however it dies, and drops root for it.
export const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find(existsSync)

export interface Account {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

/** A user named in /etc/passwd, or `uid[:gid]`. */
export const account = (user: string): Account | undefined => {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(user)
  if (numeric) return { name: user, uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) }
  const passwd = (() => {
    try {
      return readFileSync("/etc/passwd", "utf8")
    } catch {
      return ""
    }
  })()
  for (const line of passwd.split("\n")) {
    const [name, , uid, gid] = line.split(":")
    if (name === user && uid !== undefined && gid !== undefined) return { name, uid: Number(uid), gid: Number(gid) }
  }
  return undefined
}

/**
 * How Chromium is sandboxed: as root, it runs as an unprivileged user with its own sandbox (Chromium refuses to
 * sandbox itself as root); `--no-sandbox` only when configured; not root, it runs as this user, sandboxed.
 */
export type Sandboxing =
  | { readonly kind: "user"; readonly account: Account }
  | { readonly kind: "self" }
  | { readonly kind: "off" }

/** How Chromium is sandboxed under `options`, or why it cannot run (a message that says what to set). Plain code, no
 * effect: the early launch (EarlyBrowser.ts) decides it before the service's modules load. */
export const decide = (options: {
  readonly user?: string | undefined
  readonly noSandbox?: boolean | undefined
}): Sandboxing | { readonly kind: "refused"; readonly message: string } => {
  if (options.noSandbox === true) return { kind: "off" }
  if (process.getuid?.() !== 0) return { kind: "self" }
  const user = options.user ?? "nobody"
  const found = account(user)
  if (found === undefined || found.uid === 0 || setpriv === undefined)
    return {
      kind: "refused",
      message:
        found === undefined || found.uid === 0
          ? `as root, Chromium runs sandboxed as an unprivileged user, and "${user}" is none (set browser.user / SWITCHYARD_BROWSER_USER, or SWITCHYARD_NO_SANDBOX=true to run it without its sandbox)`
          : "as root, Chromium runs sandboxed as an unprivileged user through setpriv (util-linux), which is not installed (or set SWITCHYARD_NO_SANDBOX=true)"
    }
  return { kind: "user", account: found }
}

/** Whether another user may reach `dir`: the first directory above it that lets no other user through, if any. */
export const reachable = (dir: string) => {
  const parts = dir.split("/").filter((p) => p !== "")
  for (let i = 0; i < parts.length; i++) {
    const path = `/${parts.slice(0, i).join("/")}`
    try {
      if ((statSync(path).mode & 0o001) === 0) return path
    } catch {
      return path
    }
  }
  return undefined
}
