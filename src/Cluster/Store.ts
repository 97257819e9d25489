/**
 * Where the cluster keeps what must outlive a process: its messages and shard locks, the workflows' progress, the
 * sessions' saved state and the step and engine events. PostgreSQL when a URL names one (a fleet shares it), else an
 * embedded SQLite file for one machine. Both speak the same `SqlClient`, so everything above is written once.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { StoreOptions } from "../Store/Location.ts"
import * as Resolutions from "../Store/Resolutions.ts"
import * as Sqlite from "../Store/Sqlite.ts"

export { describe, flagFor, fromEnv, type StoreOptions } from "../Store/Location.ts"

/** The `SqlClient` for `options`, with the tables this project adds beside the cluster's own. */
export const layer = (options: StoreOptions): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.effectDiscard(migrate).pipe(
    Layer.provideMerge(
      options.kind === "postgres"
        ? PgClient.layer({ url: options.url, applicationName: "switchyard" })
        : Sqlite.layer({ filename: options.file })
    )
  )

/**
 * The step and engine events (seed 001 §10's `task_events`, so its dashboard queries run as written on PostgreSQL),
 * each session's saved page state, the fleet's runners and placements, and the replay level's kept resolutions.
 * Created when missing; the cluster creates its own tables itself. Runners starting together on a fresh PostgreSQL would race: two `CREATE TABLE IF NOT EXISTS`
 * of one table at once fail with a unique violation in the catalog, so the creation runs in one transaction holding an
 * advisory lock, and the second runner finds the tables made.
 */
const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const create = Effect.gen(function* () {
    yield* sql.onDialectOrElse({
      pg: () => sql`SELECT pg_advisory_xact_lock(hashtext('switchyard.schema'))`,
      orElse: () => Effect.void
    })
    yield* sql.onDialectOrElse({
      pg: () =>
        sql`CREATE TABLE IF NOT EXISTS task_events (
          id BIGSERIAL PRIMARY KEY,
          workflow_run_id TEXT NOT NULL,
          event_type TEXT NOT NULL,
          data JSONB NOT NULL,
          created_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      orElse: () =>
        sql`CREATE TABLE IF NOT EXISTS task_events (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          workflow_run_id TEXT NOT NULL,
          event_type TEXT NOT NULL,
          data TEXT NOT NULL,
          created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))`
    })
    yield* sql`CREATE INDEX IF NOT EXISTS task_events_run ON task_events (workflow_run_id, event_type)`
    yield* sql`CREATE TABLE IF NOT EXISTS session_state (
      session TEXT PRIMARY KEY,
      url TEXT NOT NULL,
      state TEXT NOT NULL,
      updated_at TEXT NOT NULL)`
    yield* sql`CREATE TABLE IF NOT EXISTS fleet_runners (
      name TEXT PRIMARY KEY,
      address TEXT NOT NULL,
      capacity INTEGER NOT NULL,
      open_sessions INTEGER NOT NULL,
      heartbeat_ms BIGINT NOT NULL)`
    yield* sql`CREATE TABLE IF NOT EXISTS fleet_sessions (
      session TEXT PRIMARY KEY,
      runner TEXT NOT NULL,
      assigned_ms BIGINT NOT NULL)`
    // The replay level's kept resolutions, shared by every runner.
    yield* Resolutions.tables(sql)
  })
  yield* sql.withTransaction(create)
})
