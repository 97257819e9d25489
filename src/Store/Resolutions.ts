/**
 * The resolutions the replay level replays, kept per deployment in the store (the embedded SQLite file or the fleet's
 * PostgreSQL): for a site, the shape of a route and an instruction, the target a level acted on — by its role, name
 * and what it sits in, never a reference that dies with the page — with the method and arguments (a value taken from
 * the instruction is kept as a placeholder, a secret as its reference). Entries expire; hits, misses and the time
 * replays saved are counted per site for `switchyard status`.
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer, Option, type Scope } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { StepFailed } from "../Errors/Service.ts"
import * as Client from "./Client.ts"
import { describe, type StoreOptions } from "./Location.ts"

/** Where a resolution applies: a site (its origin), the shape of a route on it, the tool and the instruction. */
export interface Key {
  /** `https://jobs.example.com`: two sites never share an entry. */
  readonly site: string
  /** The path with its ids left out, and the query's names: `/jobs/:id/apply?source`. */
  readonly route: string
  readonly tool: "act" | "observe"
  /** The instruction, a value it carries written as `{{value}}` (so another applicant's name replays too). */
  readonly instruction: string
}

/** A part of what a target sits in: `group "Are you 18 or older?"`, `form "Apply"`. */
export interface Around {
  readonly kind: string
  readonly name: string
}

/** What was acted on, as a person names it: found again on a new page load only if all of it is the same. */
export interface Target {
  readonly role: string
  readonly name: string
  /** Innermost first. */
  readonly around: ReadonlyArray<Around>
  /** The frame it is in, by its iframe, absent for the page itself. */
  readonly frame?: string
}

export interface Step {
  readonly target: Target
  readonly method: string
  /** `{{value}}` stands for the value the instruction carries; `{{secret:NAME}}` stays a reference. */
  readonly arguments: ReadonlyArray<string>
}

export interface Resolution {
  /** One for an act; the elements found, for an observe. */
  readonly steps: ReadonlyArray<Step>
  /** The act submits, pays, deletes or sends: replayed only on the same role, name and context (as every act is). */
  readonly destructive: boolean
  /**
   * Nothing to replay yet (`steps` is empty): the act's target went with the navigation it started, so the next
   * time the element this selector names is identified before the cascade acts, and kept if the act names it again.
   * Only ever read to identify an element, never acted through.
   */
  readonly learning?: string
}

export interface Entry {
  readonly id: string
  readonly key: Key
  readonly resolution: Resolution
  /** The level that resolved it: `stagehand dom`, `playwright`. */
  readonly resolvedBy: string
  /** What resolving it on that level took, in ms: a replay saves this less its own time. */
  readonly costMs: number
  readonly createdAt: number
  readonly usedAt: number
  readonly expiresAt: number
  readonly hits: number
  readonly misses: number
}

export type Lookup =
  | { readonly _tag: "absent" }
  | { readonly _tag: "expired"; readonly entry: Entry }
  | { readonly _tag: "found"; readonly entry: Entry }

/** Counts for a site (or every site): replays that held, replays that missed, calls with nothing to replay. */
export interface Stats {
  readonly entries: number
  readonly sites: number
  readonly hits: number
  readonly misses: number
  readonly absent: number
  /** What the hits' levels would have taken, less what the replays took. */
  readonly savedMs: number
}

export interface ResolutionsOptions {
  readonly location: StoreOptions
  /** How long an entry lives after it was recorded or last replayed; default 14 days. */
  readonly ttlMs?: number
}

export const defaultTtlMs = 14 * 24 * 3_600_000

/** The entry's id: the key hashed, so a long instruction makes no long primary key. */
export const idOf = (key: Key) =>
  createHash("sha256")
    .update(JSON.stringify([key.site, key.route, key.tool, key.instruction]))
    .digest("hex")
    .slice(0, 32)

/** `https://a.example` or `a.example` (any port, either scheme): which sites a listing or a clear names. */
const siteMatches = (site: string | undefined) => (stored: string) => {
  if (site === undefined || site === "") return true
  if (URL.canParse(site) && /^[a-z]+:\/\//i.test(site)) return new URL(site).origin === stored
  return URL.canParse(stored) && new URL(stored).hostname === site.toLowerCase().replace(/^\.+|\.+$/g, "")
}

/** The tables: created in a fleet's schema migration (Cluster/Store.ts) and when the store is first opened. */
export const tables = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    yield* sql`CREATE TABLE IF NOT EXISTS replay_entries (
      id TEXT PRIMARY KEY,
      site TEXT NOT NULL,
      route TEXT NOT NULL,
      tool TEXT NOT NULL,
      instruction TEXT NOT NULL,
      resolution TEXT NOT NULL,
      resolved_by TEXT NOT NULL,
      cost_ms BIGINT NOT NULL,
      created_ms BIGINT NOT NULL,
      used_ms BIGINT NOT NULL,
      expires_ms BIGINT NOT NULL,
      hits BIGINT NOT NULL,
      misses BIGINT NOT NULL)`
    yield* sql`CREATE INDEX IF NOT EXISTS replay_entries_site ON replay_entries (site)`
    yield* sql`CREATE TABLE IF NOT EXISTS replay_counts (
      site TEXT PRIMARY KEY,
      hits BIGINT NOT NULL,
      misses BIGINT NOT NULL,
      absent BIGINT NOT NULL,
      saved_ms BIGINT NOT NULL)`
  })

interface Row {
  readonly id: string
  readonly site: string
  readonly route: string
  readonly tool: string
  readonly instruction: string
  readonly resolution: string
  readonly resolved_by: string
  readonly cost_ms: number | string
  readonly created_ms: number | string
  readonly used_ms: number | string
  readonly expires_ms: number | string
  readonly hits: number | string
  readonly misses: number | string
}

const entryOf = (row: Row): Entry => ({
  id: row.id,
  key: {
    site: row.site,
    route: row.route,
    tool: row.tool === "observe" ? "observe" : "act",
    instruction: row.instruction
  },
  resolution: JSON.parse(row.resolution) as Resolution,
  resolvedBy: row.resolved_by,
  costMs: Number(row.cost_ms),
  createdAt: Number(row.created_ms),
  usedAt: Number(row.used_ms),
  expiresAt: Number(row.expires_ms),
  hits: Number(row.hits),
  misses: Number(row.misses)
})

export class Resolutions extends Context.Service<
  Resolutions,
  {
    readonly lookup: (key: Key) => Effect.Effect<Lookup, StepFailed>
    /** Keeps what a level resolved (replacing what was kept for the key), for `ttlMs` from now. */
    readonly record: (
      key: Key,
      resolution: Resolution,
      by: { readonly resolvedBy: string; readonly costMs: number }
    ) => Effect.Effect<void, StepFailed>
    /** A replay held: counted, and the entry lives on for `ttlMs` from now. */
    readonly hit: (key: Key, timing: { readonly replayMs: number }) => Effect.Effect<void, StepFailed>
    /** A replay missed (`failed`), or there was nothing to replay (`absent`). */
    readonly miss: (key: Key, why: "failed" | "absent") => Effect.Effect<void, StepFailed>
    /** Entries, newest use first; of one site when named (an origin, or a host name). */
    readonly list: (site?: string) => Effect.Effect<ReadonlyArray<Entry>, StepFailed>
    /** Removes the entries (and counts) of one site, or of every site; answers how many entries went. */
    readonly clear: (site?: string) => Effect.Effect<number, StepFailed>
    readonly stats: (site?: string) => Effect.Effect<Stats, StepFailed>
  }
>()("switchyard/Resolutions") {
  static readonly layer = (options: ResolutionsOptions) => Layer.effect(Resolutions, make(options))
}

export const make: (options: ResolutionsOptions) => Effect.Effect<Resolutions["Service"], never, Scope.Scope> =
  Effect.fnUntraced(function* (options: ResolutionsOptions) {
    const ttlMs = options.ttlMs ?? defaultTtlMs
    const scope = yield* Effect.scope
    const failed = (doing: string) => (cause: unknown) =>
      new StepFailed({
        step: "replay store",
        retryable: true,
        message: `cannot ${doing} in the store (${describe(options.location)}): ${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}`
      })
    const sql = (yield* Client.lazy(options.location, scope, (db) =>
      // In the embedded store's write-ahead log, a commit need not wait for the disk: what a commit wrote survives the
      // service's crash (the log is in the system's cache), only a crash of the machine may lose the last entries and
      // counts, which are a convenience no answer depends on. A replayed act's count is then no disk sync on its path.
      Effect.andThen(
        db.onDialectOrElse({ sqlite: () => Effect.asVoid(db`PRAGMA synchronous = NORMAL`), orElse: () => Effect.void }),
        Client.locked(db, tables(db))
      )
    )).pipe(Effect.mapError(failed("open the store")))
    /** A statement on the store, its failure named by what it was doing. */
    const run = <A>(doing: string, statement: (db: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
      sql.pipe(
        Effect.flatMap((db) => statement(db)),
        Effect.mapError(failed(doing))
      )

    /** Adds to a site's counts, making its row when it has none. */
    const count = (
      db: SqlClient.SqlClient,
      site: string,
      add: { hits?: number; misses?: number; absent?: number; savedMs?: number }
    ) =>
      db`INSERT INTO replay_counts (site, hits, misses, absent, saved_ms)
        VALUES (${site}, ${add.hits ?? 0}, ${add.misses ?? 0}, ${add.absent ?? 0}, ${Math.round(add.savedMs ?? 0)})
        ON CONFLICT (site) DO UPDATE SET hits = replay_counts.hits + excluded.hits,
        misses = replay_counts.misses + excluded.misses, absent = replay_counts.absent + excluded.absent,
        saved_ms = replay_counts.saved_ms + excluded.saved_ms`

    const lookup = (key: Key) =>
      run("read a replay entry", (db) =>
        Effect.gen(function* () {
          const rows = yield* db<Row>`SELECT * FROM replay_entries WHERE id = ${idOf(key)}`
          const row = rows[0]
          if (row === undefined) return { _tag: "absent" } as const
          const entry = entryOf(row)
          const now = yield* Clock.currentTimeMillis
          if (entry.expiresAt <= now) {
            yield* db`DELETE FROM replay_entries WHERE id = ${entry.id}`
            return { _tag: "expired", entry } as const
          }
          return { _tag: "found", entry } as const
        })
      )

    const record = (key: Key, resolution: Resolution, by: { readonly resolvedBy: string; readonly costMs: number }) =>
      run("keep a replay entry", (db) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          yield* db`INSERT INTO replay_entries (id, site, route, tool, instruction, resolution, resolved_by, cost_ms,
            created_ms, used_ms, expires_ms, hits, misses)
            VALUES (${idOf(key)}, ${key.site}, ${key.route}, ${key.tool}, ${key.instruction},
            ${JSON.stringify(resolution)}, ${by.resolvedBy}, ${Math.round(by.costMs)}, ${now}, ${now}, ${now + ttlMs}, 0, 0)
            ON CONFLICT (id) DO UPDATE SET resolution = excluded.resolution, resolved_by = excluded.resolved_by,
            cost_ms = excluded.cost_ms, created_ms = excluded.created_ms, used_ms = excluded.used_ms,
            expires_ms = excluded.expires_ms`
        })
      )

    const hit = (key: Key, timing: { readonly replayMs: number }) =>
      // One transaction: one commit (a disk sync on the embedded store) where each statement alone made its own.
      run("count a replay", (db) =>
        db.withTransaction(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const rows = yield* db<{
              cost_ms: number | string
            }>`SELECT cost_ms FROM replay_entries WHERE id = ${idOf(key)}`
            const costMs = Number(rows[0]?.cost_ms ?? 0)
            yield* db`UPDATE replay_entries SET hits = hits + 1, used_ms = ${now}, expires_ms = ${now + ttlMs}
            WHERE id = ${idOf(key)}`
            yield* count(db, key.site, { hits: 1, savedMs: Math.max(0, costMs - timing.replayMs) })
          })
        )
      )

    const miss = (key: Key, why: "failed" | "absent") =>
      run("count a replay miss", (db) =>
        db.withTransaction(
          Effect.gen(function* () {
            if (why === "failed") yield* db`UPDATE replay_entries SET misses = misses + 1 WHERE id = ${idOf(key)}`
            yield* count(db, key.site, why === "failed" ? { misses: 1 } : { absent: 1 })
          })
        )
      )

    const list = (site?: string) =>
      run("list the replay entries", (db) =>
        db<Row>`SELECT * FROM replay_entries ORDER BY used_ms DESC`.pipe(
          Effect.map((rows) => rows.map(entryOf).filter((e) => siteMatches(site)(e.key.site)))
        )
      )

    const clear = (site?: string) =>
      run("clear the replay entries", (db) =>
        Effect.gen(function* () {
          const rows = yield* db<{
            site: string
          }>`SELECT DISTINCT site FROM replay_counts UNION SELECT DISTINCT site FROM replay_entries`
          const sites = rows.map((r) => r.site).filter(siteMatches(site))
          let removed = 0
          for (const s of sites) {
            const n = yield* db<{ n: number | string }>`SELECT COUNT(*) AS n FROM replay_entries WHERE site = ${s}`
            removed += Number(n[0]?.n ?? 0)
            yield* db`DELETE FROM replay_entries WHERE site = ${s}`
            yield* db`DELETE FROM replay_counts WHERE site = ${s}`
          }
          return removed
        })
      )

    const stats = (site?: string) =>
      run("read the replay counts", (db) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const entries = (yield* db<{
            site: string
            expires_ms: number | string
          }>`SELECT site, expires_ms FROM replay_entries`).filter(
            (r) => siteMatches(site)(r.site) && Number(r.expires_ms) > now
          )
          const counts = (yield* db<{
            site: string
            hits: number | string
            misses: number | string
            absent: number | string
            saved_ms: number | string
          }>`SELECT * FROM replay_counts`).filter((r) => siteMatches(site)(r.site))
          const sum = (field: "hits" | "misses" | "absent" | "saved_ms") =>
            counts.reduce((n, r) => n + Number(r[field]), 0)
          return {
            entries: entries.length,
            sites: new Set(entries.map((r) => r.site)).size,
            hits: sum("hits"),
            misses: sum("misses"),
            absent: sum("absent"),
            savedMs: sum("saved_ms")
          }
        })
      )

    return Resolutions.of({ lookup, record, hit, miss, list, clear, stats })
  })

/** Nothing kept: for a service or a test without a store. */
export const none: Resolutions["Service"] = Resolutions.of({
  lookup: () => Effect.succeed({ _tag: "absent" }),
  record: () => Effect.void,
  hit: () => Effect.void,
  miss: () => Effect.void,
  list: () => Effect.succeed([]),
  clear: () => Effect.succeed(0),
  stats: () => Effect.succeed({ entries: 0, sites: 0, hits: 0, misses: 0, absent: 0, savedMs: 0 })
})

export const isNone = (service: Resolutions["Service"]) => service === none

/** Whether a lookup found something to replay. */
export const found = (lookup: Lookup): Option.Option<Entry> =>
  lookup._tag === "found" ? Option.some(lookup.entry) : Option.none()
