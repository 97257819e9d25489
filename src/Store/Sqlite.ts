/**
 * An Effect `SqlClient` over Node's built-in `node:sqlite`: the embedded store a single machine uses for the cluster's
 * message storage, the workflows and the step events when no PostgreSQL is configured. One connection, shared through
 * a semaphore, in WAL mode so another process may read while the service writes.
 *
 * Why not `@effect/sql-sqlite-node`: its 4.x releases import `effect/unstable/*`, which `effect` 4.1 no longer has.
 */
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { DatabaseSync, type StatementSync } from "node:sqlite"
import { Context, Effect, Layer, Semaphore, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlConnection from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"

export interface SqliteOptions {
  /** The database file (created when missing). */
  readonly filename: string
}

/** node:sqlite reports its code as `errcode`; Effect's classifier reads `errno`. */
const failure = (cause: unknown, message: string, operation: string) => {
  if (typeof cause === "object" && cause !== null && "errcode" in cause && !("errno" in cause)) {
    Object.assign(cause, { errno: (cause as { errcode: unknown }).errcode })
  }
  return new SqlError({ reason: classifySqliteError(cause, { message, operation }) })
}

/** Rows as the connection hands them on: the client's callers give them their types. */
type Rows = ReadonlyArray<never>

const connect = (filename: string) =>
  Effect.gen(function* () {
    // A file that cannot be made or opened (its folder is a file, or not writable) is the store's failure, not a crash.
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          mkdirSync(dirname(filename), { recursive: true })
          const opened = new DatabaseSync(filename)
          try {
            // A second process (a restarted service, a command, a status query) may hold the file briefly: wait rather
            // than fail, from the first statement on, as turning on WAL needs the file to itself.
            opened.exec("PRAGMA busy_timeout = 5000")
            opened.exec("PRAGMA journal_mode = WAL")
          } catch (cause) {
            opened.close()
            throw cause
          }
          return opened
        },
        catch: (cause) => failure(cause, `Failed to open ${filename}`, "connect")
      }),
      (opened) => Effect.sync(() => opened.close())
    )
    const prepared = new Map<string, StatementSync>()
    const prepare = (sql: string) =>
      Effect.try({
        try: () => {
          let statement = prepared.get(sql)
          if (statement === undefined) {
            statement = db.prepare(sql)
            prepared.set(sql, statement)
          }
          return statement
        },
        catch: (cause) => failure(cause, "Failed to prepare statement", "prepare")
      })
    const runOn = (statement: StatementSync, params: ReadonlyArray<unknown>, arrays: boolean, raw: boolean) =>
      Effect.withFiber<Rows, SqlError>((fiber) =>
        Effect.try({
          try: () => {
            statement.setReadBigInts(Context.get(fiber.context, SqlClient.SafeIntegers))
            statement.setReturnArrays(arrays)
            const values = params as Array<never>
            if (statement.columns().length > 0) return statement.all(...values) as unknown as Rows
            const result = statement.run(...values)
            return raw ? (result as never) : []
          },
          catch: (cause) => failure(cause, "Failed to execute statement", "execute")
        })
      )
    const connection: SqlConnection.Connection = {
      execute: (sql, params, transformRows) =>
        prepare(sql).pipe(
          Effect.flatMap((s) => runOn(s, params, false, false)),
          Effect.map((rows) => (transformRows ? transformRows(rows) : rows))
        ),
      executeRaw: (sql, params) => prepare(sql).pipe(Effect.flatMap((s) => runOn(s, params, false, true))),
      executeValues: (sql, params) => prepare(sql).pipe(Effect.flatMap((s) => runOn(s, params, true, false))),
      executeValuesUnprepared: (sql, params) =>
        Effect.suspend(() => runOn(db.prepare(sql), params, true, false)) as never,
      executeUnprepared: (sql, params, transformRows) =>
        Effect.suspend(() => runOn(db.prepare(sql), params ?? [], false, false)).pipe(
          Effect.map((rows) => (transformRows ? transformRows(rows) : rows))
        ),
      executeStream: () => Stream.die("executeStream is not supported on node:sqlite")
    }
    return connection
  })

export const make = (options: SqliteOptions) =>
  Effect.gen(function* () {
    const connection = yield* connect(options.filename)
    const semaphore = yield* Semaphore.make(1)
    const acquirers = SqlClient.makeSqliteAcquirers({ connection: Effect.succeed(connection), semaphore })
    return yield* SqlClient.make({
      ...acquirers,
      compiler: Statement.makeCompilerSqlite(),
      driver: "node:sqlite",
      spanAttributes: [["db.system.name", "sqlite"]]
    })
  })

/** `SqlClient` on a SQLite file. */
export const layer = (options: SqliteOptions): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.effect(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
