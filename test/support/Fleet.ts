/**
 * A fleet for tests, as people run it: Debian's PostgreSQL in a temp dir and real `switchyard serve` runner processes
 * sharing it; `runner(name, cap)` starts one more. `stopFleets` (after each test) checks that nothing of it is left.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import { processesMatching } from "./Processes.ts"
import { startService, stopServices } from "./Service.ts"
import { waitFor } from "./Wait.ts"

const dirs: Array<string> = []

/** For `afterEach`: stops the runners and checks no process of the fleets is left. */
export const stopFleets = async () => {
  await stopServices()
  for (const dir of dirs.splice(0)) {
    assert.isTrue(await waitFor(() => processesMatching(dir).length === 0, 10_000), `processes left under ${dir}`)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A directory removed after the test once nothing runs in it. */
export const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

/** A fleet on a fresh PostgreSQL: `runner(name, cap, env?)` starts one more runner process (with `env` its own). */
export const fleet = (extraEnv: Record<string, string> = {}) =>
  Effect.gen(function* () {
    // Finalizers run last-added first: the runners stop, then the database, then nothing of it may be left.
    let pgDir = ""
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        assert.isTrue(
          await waitFor(() => processesMatching(pgDir).length === 0, 10_000),
          "PostgreSQL outlived its test"
        )
        assert.isFalse(existsSync(pgDir), "PostgreSQL's directory was left")
      })
    )
    const pg = yield* Postgres.start
    pgDir = pg.dir
    yield* Effect.addFinalizer(() => Effect.promise(() => stopServices()))
    const dir = tempDir("switchyard-fleet-")
    const env = {
      DATABASE_URL: Redacted.value(pg.url),
      TMPDIR: dir,
      SWITCHYARD_RUNNERS: "r1,r2,r3",
      SWITCHYARD_FAILOVER_MS: "2000",
      // The applicant's résumé lives in the test's directory.
      SWITCHYARD_UPLOAD_ROOTS: dir,
      ...extraEnv
    }
    const runner = (name: string, cap: number, own: Record<string, string> = {}) =>
      Effect.promise(async () => {
        const service = startService({ ...env, ...own }, ["--jsonrpc", "--runner", name, "--max-browsers", String(cap)])
        await service.stderrLine(/ready, JSON-RPC/)
        return service
      })
    const owners = Effect.promise(async () => {
      const { execFileSync } = await import("node:child_process")
      const out = execFileSync(
        "psql",
        [Redacted.value(pg.url), "-At", "-c", "SELECT session, runner FROM fleet_sessions"],
        {
          encoding: "utf8"
        }
      )
      return Object.fromEntries(
        out
          .trim()
          .split("\n")
          .filter(Boolean)
          .map((line) => line.split("|"))
      )
    })
    const query = (sql: string) =>
      Effect.promise(async () => {
        const { execFileSync } = await import("node:child_process")
        return execFileSync("psql", [Redacted.value(pg.url), "-At", "-c", sql], { encoding: "utf8" })
          .trim()
          .split("\n")
          .filter(Boolean)
      })
    return { pg, dir, runner, owners, query }
  })
