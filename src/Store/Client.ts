/**
 * The store's SQL client opened on first use, for what the service keeps beside its sessions (named storage states,
 * replayed resolutions): PostgreSQL or the embedded SQLite file as `Location.ts` chose, its driver loaded only then,
 * its tables made when missing, and a failed open tried again on the next use.
 */
import { Context, Effect, Layer, Option, type Scope, SynchronizedRef } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { StoreOptions } from "./Location.ts"

/** Makes the tables a user of the store needs, when missing; it runs once, right after the store is opened. */
export type Migration = (sql: SqlClient.SqlClient) => Effect.Effect<void, unknown>

/** The client for `location`, opened within `scope` when first asked for; each later ask gets the same one. */
export const lazy = (
  location: StoreOptions,
  scope: Scope.Scope,
  migrate: Migration
): Effect.Effect<Effect.Effect<SqlClient.SqlClient, unknown>> =>
  Effect.gen(function* () {
    const client = yield* SynchronizedRef.make<Option.Option<SqlClient.SqlClient>>(Option.none())
    const open = Effect.gen(function* () {
      const { SqlClient: Tag } = yield* Effect.promise(() => import("effect/sql/SqlClient"))
      const layer =
        location.kind === "postgres"
          ? (yield* Effect.promise(() => import("@effect/sql-pg/PgClient"))).layer({
              url: location.url,
              applicationName: "switchyard"
            })
          : (yield* Effect.promise(() => import("./Sqlite.ts"))).layer({ filename: location.file })
      const context = yield* Layer.buildWithScope(layer as Layer.Layer<SqlClient.SqlClient, unknown>, scope)
      const sql = Context.get(context, Tag)
      yield* migrate(sql)
      return sql
    })
    return SynchronizedRef.modifyEffect(client, (known) =>
      Option.isSome(known)
        ? Effect.succeed([known.value, known] as const)
        : open.pipe(Effect.map((opened) => [opened, Option.some(opened)] as const))
    )
  })

/**
 * Runs table creation so that runners starting together on a fresh PostgreSQL do not race (two `CREATE TABLE IF NOT
 * EXISTS` of one table at once fail in the catalog): one transaction holding the schema's advisory lock.
 */
export const locked = <E>(sql: SqlClient.SqlClient, create: Effect.Effect<void, E>) =>
  sql.withTransaction(
    Effect.gen(function* () {
      yield* sql.onDialectOrElse({
        pg: () => sql`SELECT pg_advisory_xact_lock(hashtext('switchyard.schema'))`,
        orElse: () => Effect.void
      })
      yield* create
    })
  )
