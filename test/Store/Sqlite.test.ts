/**
 * The embedded store's SQL client on node:sqlite: statements, parameters, transactions, a second reader, and a file
 * another process holds as this one opens it.
 */

import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Sqlite from "../../src/Store/Sqlite.ts"

const withStore = <A, E>(f: (file: string) => Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-sqlite-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    const file = join(dir, "nested", "store.db")
    return yield* f(file).pipe(Effect.provide(Sqlite.layer({ filename: file })))
  })

describe("Sqlite", () => {
  it.effect("runs parameterized statements and rolls a failed transaction back", () =>
    withStore((file) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`
        yield* sql`INSERT INTO t ${sql.insert([{ name: "a" }, { name: "b" }])}`
        const failed = yield* sql`INSERT INTO t (name) VALUES (${"c"})`.pipe(
          Effect.andThen(Effect.fail("stop" as const)),
          sql.withTransaction,
          Effect.flip
        )
        assert.strictEqual(failed, "stop")
        const rows = yield* sql<{ name: string }>`SELECT name FROM t WHERE name <> ${"z"} ORDER BY id`
        assert.deepStrictEqual(
          rows.map((r) => r.name),
          ["a", "b"]
        )
        // Another process reads the file while this one holds it (WAL).
        const other = new DatabaseSync(file, { readOnly: true })
        const count = other.prepare("SELECT count(*) AS n FROM t").get() as { n: number }
        other.close()
        assert.strictEqual(count.n, 2)
        assert.strictEqual(sql.onDialectOrElse({ sqlite: () => "sqlite", orElse: () => "other" }), "sqlite")
      })
    )
  )

  it.live("opening a file another process is writing waits for it rather than failing", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "switchyard-sqlite-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const file = join(dir, "store.db")
      // Another process creates the store and holds it for a moment, as a second service or command opening the same
      // fresh store does; turning on WAL needs the file to itself.
      const holder = spawn(
        process.execPath,
        [
          "-e",
          `const { DatabaseSync } = require("node:sqlite")
const db = new DatabaseSync(process.argv[1])
db.exec("BEGIN EXCLUSIVE; CREATE TABLE steps (id INTEGER PRIMARY KEY)")
process.stdout.write("holding\\n")
setTimeout(() => { db.exec("INSERT INTO steps (id) VALUES (1); COMMIT"); db.close() }, 700)`,
          file
        ],
        { stdio: ["ignore", "pipe", "inherit"] }
      )
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill("SIGKILL")))
      yield* Effect.promise(() => new Promise((resolve) => holder.stdout.once("data", resolve)))
      const rows = yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ id: number }>`SELECT id FROM steps`
      }).pipe(Effect.provide(Layer.fresh(Sqlite.layer({ filename: file }))))
      assert.deepStrictEqual(
        rows.map((r) => r.id),
        [1]
      )
    })
  )
})
