/**
 * The way into a VNC stack, one takeover at a time: x11vnc rereads its password file when a new connection comes, so
 * each takeover gets a fresh password and its end replaces it with one nobody knows and disconnects every viewer.
 */
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdir, mkdtemp, readdir, rename, rm, symlink, utimes, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Redacted } from "effect"
import { BrowserLaunchFailed } from "../../../Errors/Browser.ts"

/** VNC authentication uses the first 8 characters of a password; these are random letters and digits. */
export const newPassword = () => {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
  return Array.from(randomBytes(8), (b) => alphabet[b % alphabet.length]).join("")
}

/**
 * The page at the web root: noVNC connecting at once, scaled to the window, with whatever the link's fragment adds
 * (`#password=…`). A fragment never reaches a server, so the password is in no request and no server's log.
 */
const indexPage = `<!doctype html>
<meta charset="utf-8">
<title>Switchyard: take over the browser</title>
<script>
  const extra = location.hash.length > 1 ? "&" + location.hash.slice(1) : ""
  location.replace("vnc.html#autoconnect=true&resize=scale&reconnect=false" + extra)
</script>
`

export interface Files {
  /** The private directory (mode 0700): removed with the scope. */
  readonly dir: string
  /** x11vnc's password file, given as `read:<path>`. */
  readonly passwordFile: string
  /** websockify's `--web`: noVNC's files, linked, and the page that connects at once. */
  readonly webRoot: string
  /** Replaces the password x11vnc accepts (atomically: x11vnc never reads half a file). */
  readonly setPassword: (password: string) => Effect.Effect<void>
}

const failed = (message: string) => (cause: unknown) =>
  new BrowserLaunchFailed({ engine: "human", retryable: false, message: `${message}: ${cause}`, cause })

/** The stack's private directory for the current scope, with a password nobody knows yet. */
export const files = (noVncRoot: string) =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => mkdtemp(join(tmpdir(), "switchyard-vnc-")),
        catch: failed("cannot create a temp dir")
      }),
      (path) => Effect.promise(() => rm(path, { recursive: true, force: true }).catch(() => undefined))
    )
    const passwordFile = join(dir, "passwd")
    const webRoot = join(dir, "web")
    let writes = 0
    // x11vnc rereads the file when its modification time changed, to the second, and every password has the same
    // length: a file written within the second of the last read would keep the old password. Each write is dated a
    // second after the one before at least.
    let dated = 0
    const setPassword = (password: string) =>
      Effect.promise(async () => {
        const next = `${passwordFile}.${++writes}`
        await writeFile(next, `${password}\n`, { mode: 0o600 })
        dated = Math.max(Math.floor(Date.now() / 1000), dated + 1)
        await utimes(next, dated, dated)
        await rename(next, passwordFile)
      })
    yield* Effect.tryPromise({
      try: async () => {
        await mkdir(webRoot, { mode: 0o700 })
        for (const entry of await readdir(noVncRoot)) {
          if (entry !== "index.html") await symlink(join(noVncRoot, entry), join(webRoot, entry))
        }
        await writeFile(join(webRoot, "index.html"), indexPage)
      },
      catch: failed(`cannot prepare noVNC's pages from ${noVncRoot}`)
    })
    yield* setPassword(newPassword())
    return { dir, passwordFile, webRoot, setPassword } satisfies Files
  })

/** Asks the x11vnc on `display` to do `command` (remote control over the display), waiting until it has. */
export const remote = (x11vnc: string, display: string, command: string, timeoutMs = 5_000) =>
  Effect.callback<boolean>((resume) => {
    const child = execFile(
      x11vnc,
      ["-display", display, "-sync", "-remote", command],
      { timeout: timeoutMs, killSignal: "SIGKILL" },
      (error) => resume(Effect.succeed(error === null))
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** What a person gets for one takeover: the link to the page that connects at once, and the password alone. */
export const accessTo = (url: string, password: string) => ({
  link: Redacted.make(`${url}#password=${encodeURIComponent(password)}`),
  password: Redacted.make(password)
})
