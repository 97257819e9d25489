/** The real service process for the bench: `node <entry> serve --jsonrpc` with its own log root, and its RSS. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { defaults } from "../src/Server/Defaults.ts"
import { type Service, startService } from "../test/support/Service.ts"
import * as Entry from "./Entry.ts"

export type { Service } from "../test/support/Service.ts"

/** A service with the log root it writes to. */
export type Started = Service & { readonly logs: string }

/**
 * Starts a service with a fresh log root from `entry` (default: the bundled entry bin/switchyard runs); stopped (stdin
 * closed, then SIGKILL after 15 s) and cleaned with the scope.
 */
export const start = (env: Record<string, string> = {}, entry: string = Entry.bundled()) =>
  Effect.acquireRelease(
    Effect.sync((): Started => {
      const logs = mkdtempSync(join(tmpdir(), "switchyard-bench-service-"))
      // The shipped configuration unless a part says otherwise (the tests' support turns the warm pool off).
      const warm = String(defaults.sessions.warmBrowsers)
      const started = startService(
        { SWITCHYARD_LOG_DIR: logs, SWITCHYARD_WARM_BROWSERS: warm, ...env },
        undefined,
        entry
      )
      return Object.assign(started, { logs })
    }),
    (service) =>
      Effect.promise(async () => {
        await stop(service)
        rmSync(service.logs, { recursive: true, force: true })
      })
  )

/** The service's system log lines (`system/*.log` under its log root), parsed. */
export const systemLog = (service: Started): Array<{ ts: string; level: string; message: unknown }> => {
  const dir = join(service.logs, "system")
  return readdirSync(dir)
    .flatMap((file) => readFileSync(join(dir, file), "utf8").split("\n"))
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line))
}

/** Ends the service as an agent host would (stdin closed) and waits for it; SIGKILL if it takes over 15 s. */
export const stop = async (service: Service) => {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return
  service.child.stdin.end()
  const timer = setTimeout(() => service.child.kill("SIGKILL"), 15_000)
  await service.exited
  clearTimeout(timer)
}

/** A JSON-RPC call that must succeed; returns its `result`. */
export const call = async (service: Service, method: string, params: Record<string, unknown> = {}) => {
  const answer = await service.call(method, params)
  if (answer.result === undefined) throw new Error(`${method} failed: ${JSON.stringify(answer.error).slice(0, 500)}`)
  return answer.result as Record<string, unknown>
}

/** Resident set size of a process in MiB, from /proc/<pid>/status (VmRSS). */
export const rssMiB = (pid: number) => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match ? Number(match[1]) / 1024 : Number.NaN
}

/** The session's browser, from `browserStatus`. */
export const browserOf = async (service: Service, session?: string) => {
  const status = await call(service, "browserStatus", session === undefined ? {} : { session })
  return { pid: status.browserPid as number, wsEndpoint: status.wsEndpoint as string }
}
