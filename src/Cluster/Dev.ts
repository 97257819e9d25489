/**
 * `switchyard cluster dev --runners N`: a fleet on one machine for a person to try — a throwaway PostgreSQL (from
 * Debian's `postgresql` package, installed with apt-get when missing and allowed) on 127.0.0.1 in a temp dir, and N
 * runner processes sharing it, each serving MCP over HTTP on its own port. Ctrl-C stops the runners, then the
 * database, and removes its directory; the runners die with this process if it is killed.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { Effect, Redacted } from "effect"
import { NotConfigured } from "../Errors/Engine.ts"
import * as Postgres from "./Postgres.ts"

export interface DevOptions {
  readonly runners: number
  /** The first runner's MCP port; the others follow. */
  readonly port: number
  readonly maxBrowsers?: number | undefined
  readonly installPostgres: boolean
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

export const run = (options: DevOptions) =>
  Effect.gen(function* () {
    if (options.installPostgres) yield* install
    const pg = yield* Postgres.start
    const url = Redacted.value(pg.url)
    const names = Array.from({ length: options.runners }, (_, i) => `r${i + 1}`)
    const main = process.argv[1]!
    // Runners die with this process even when it is killed (parent-death signal through setpriv when present).
    const setpriv = existsSync("/usr/bin/setpriv")
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
      const child = setpriv
        ? spawn("setpriv", ["--pdeathsig", "SIGTERM", process.execPath, ...args], {
            env: { ...process.env, DATABASE_URL: url, SWITCHYARD_RUNNERS: names.join(",") },
            stdio: ["ignore", "inherit", "pipe"]
          })
        : spawn(process.execPath, args, {
            env: { ...process.env, DATABASE_URL: url, SWITCHYARD_RUNNERS: names.join(",") },
            stdio: ["ignore", "inherit", "pipe"]
          })
      child.stderr?.on("data", (chunk: Buffer) => {
        for (const line of String(chunk).split("\n").filter(Boolean)) process.stderr.write(`[${name}] ${line}\n`)
      })
      yield* Effect.addFinalizer(() => stop(child))
    }
    process.stderr.write(
      [
        `switchyard: fleet of ${names.length} runners on PostgreSQL at 127.0.0.1:${pg.port} (data in ${pg.dir})`,
        ...names.map((name, i) => `  ${name}: MCP at http://127.0.0.1:${options.port + i}/mcp`),
        `  any runner answers for any session; see the fleet with: DATABASE_URL=${url} switchyard status`,
        "  Ctrl-C stops the runners and the database.",
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
