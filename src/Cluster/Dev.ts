/**
 * `switchyard cluster dev --runners N`: a fleet on one machine for a person to try — a throwaway PostgreSQL (from
 * Debian's `postgresql` package, installed with apt-get when missing and allowed) on 127.0.0.1 in a temp dir, and N
 * runner processes sharing it, each serving MCP over HTTP on its own port. A runner that dies is reported and started
 * again (its sessions move to the others meanwhile). Ctrl-C stops the runners, then the database, and removes its
 * directory; the runners die with this process if it is killed.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { Effect, Redacted } from "effect"
import { NotConfigured } from "../Errors/Engine.ts"
import * as Postgres from "./Postgres.ts"

export interface DevOptions {
  readonly runners: number
  /** The first runner's MCP port; the others follow. */
  readonly port: number
  readonly maxBrowsers?: number | undefined
  readonly installPostgres: boolean
  /** Folders the runners may upload files from (`SWITCHYARD_UPLOAD_ROOTS`). */
  readonly uploadRoots?: ReadonlyArray<string> | undefined
  /** Waits before a died runner starts again: the first death waits the first, then each the next (the last repeats). */
  readonly restartDelaysMs?: ReadonlyArray<number> | undefined
}

const install = Effect.gen(function* () {
  if (Postgres.binDir() !== undefined) return
  if (process.getuid?.() !== 0) {
    return yield* new NotConfigured({
      message: "PostgreSQL is not installed: run `sudo apt-get install -y postgresql`, then try again"
    })
  }
  process.stderr.write("switchyard: installing PostgreSQL from Debian (apt-get install -y postgresql)\n")
  yield* Effect.try({
    try: () =>
      execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], { stdio: "inherit" }),
    catch: (cause) => new NotConfigured({ message: `apt-get install postgresql failed: ${String(cause)}` })
  })
})

const stop = (child: ChildProcess) =>
  Effect.promise(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))])
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })

/**
 * Keeps one runner process running: started at once, and started again after it dies (reported on stderr with how it
 * ended and its last lines) until the scope closes, which stops it.
 */
const supervise = (name: string, start: () => ChildProcess, delaysMs: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    let stopping = false
    let current: ChildProcess | undefined
    let deaths = 0
    let timer: NodeJS.Timeout | undefined
    const launch = () => {
      const child = start()
      current = child
      let tail: Array<string> = []
      child.stderr?.on("data", (chunk: Buffer) => {
        for (const line of String(chunk).split("\n").filter(Boolean)) {
          process.stderr.write(`[${name}] ${line}\n`)
          tail = [...tail, line].slice(-3)
        }
      })
      child.once("exit", (code, signal) => {
        if (stopping) return
        const delay = delaysMs[Math.min(deaths, delaysMs.length - 1)] ?? 1_000
        deaths++
        const how = signal === null ? `exit code ${code}` : `signal ${signal}`
        process.stderr.write(
          `switchyard: runner ${name} died (${how}${tail.length > 0 ? `; last said: ${tail.at(-1)}` : ""}); its sessions move to the live runners; starting it again in ${(delay / 1000).toFixed(1)} s (restart ${deaths})\n`
        )
        timer = setTimeout(() => {
          if (!stopping) launch()
        }, delay)
      })
    }
    launch()
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        stopping = true
        if (timer !== undefined) clearTimeout(timer)
        return current === undefined ? Effect.void : stop(current)
      })
    )
  })

export const run = (options: DevOptions) =>
  Effect.gen(function* () {
    if (options.installPostgres) yield* install
    const pg = yield* Postgres.start
    const url = Redacted.value(pg.url)
    const names = Array.from({ length: options.runners }, (_, i) => `r${i + 1}`)
    const main = process.argv[1]!
    // Runners die with this process even when it is killed (parent-death signal through setpriv when present).
    const setpriv = existsSync("/usr/bin/setpriv")
    const env = {
      ...process.env,
      DATABASE_URL: url,
      SWITCHYARD_RUNNERS: names.join(","),
      ...(options.uploadRoots !== undefined && options.uploadRoots.length > 0
        ? { SWITCHYARD_UPLOAD_ROOTS: options.uploadRoots.map((root) => resolve(root)).join(",") }
        : {})
    }
    for (const [i, name] of names.entries()) {
      const args = [
        ...process.execArgv,
        main,
        "serve",
        "--http",
        "--port",
        String(options.port + i),
        "--runner",
        name,
        ...(options.maxBrowsers === undefined ? [] : ["--max-browsers", String(options.maxBrowsers)])
      ]
      const start = () =>
        setpriv
          ? spawn("setpriv", ["--pdeathsig", "SIGTERM", process.execPath, ...args], {
              env,
              stdio: ["ignore", "inherit", "pipe"]
            })
          : spawn(process.execPath, args, { env, stdio: ["ignore", "inherit", "pipe"] })
      yield* supervise(name, start, options.restartDelaysMs ?? [1_000, 2_000, 5_000, 10_000])
    }
    process.stderr.write(
      [
        `switchyard: fleet of ${names.length} runners on PostgreSQL at 127.0.0.1:${pg.port} (data in ${pg.dir})`,
        ...names.map((name, i) => `  ${name}: MCP at http://127.0.0.1:${options.port + i}/mcp`),
        `  uploads from: ${env.SWITCHYARD_UPLOAD_ROOTS ?? "each runner's working directory"} (--upload-root adds a folder)`,
        `  any runner answers for any session; see the fleet with: DATABASE_URL=${url} switchyard status`,
        "  a runner that dies is started again; Ctrl-C stops the runners and the database.",
        ""
      ].join("\n")
    )
    yield* Effect.callback<void>((resume) => {
      const done = () => resume(Effect.void)
      process.once("SIGINT", done)
      process.once("SIGTERM", done)
    })
    process.stderr.write("switchyard: stopping the fleet\n")
  }).pipe(Effect.scoped)
