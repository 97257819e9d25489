/**
 * The store's schema on a fresh PostgreSQL shared by runners that start at the same instant: each creates the
 * tables it needs, and none of them may fail because another is creating the same table (PostgreSQL's
 * `CREATE TABLE IF NOT EXISTS` is not safe against itself).
 */
import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import * as Store from "../../src/Cluster/Store.ts"

describe.skipIf(Postgres.binDir() === undefined)("store schema on PostgreSQL", () => {
  it.live(
    "runners starting together on a fresh database all create their tables",
    () =>
      Effect.gen(function* () {
        const pg = yield* Postgres.start
        const base = Redacted.value(pg.url)
        const failures: Array<string> = []
        // Each round a fresh database and six runners' stores built at once: the race shows within a few rounds.
        for (let round = 0; round < 8; round++) {
          execFileSync("psql", [base, "-q", "-c", `CREATE DATABASE fresh_${round}`])
          const url = Redacted.make(base.replace(/\/postgres$/, `/fresh_${round}`))
          const exits = yield* Effect.forEach(
            Array.from({ length: 6 }),
            () => Effect.exit(Layer.build(Store.layer({ kind: "postgres", url })).pipe(Effect.scoped)),
            { concurrency: "unbounded" }
          )
          for (const exit of exits) if (Exit.isFailure(exit)) failures.push(String(exit.cause))
        }
        assert.deepStrictEqual(failures, [])
        const tables = execFileSync(
          "psql",
          [
            base.replace(/\/postgres$/, "/fresh_0"),
            "-At",
            "-c",
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
          ],
          { encoding: "utf8" }
        )
        assert.deepStrictEqual(tables.trim().split("\n"), [
          "fleet_runners",
          "fleet_sessions",
          "replay_counts",
          "replay_entries",
          "session_state",
          "task_events"
        ])
      }).pipe(Effect.scoped),
    120_000
  )
})
