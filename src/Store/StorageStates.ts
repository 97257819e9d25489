/**
 * Named storage states — cookies (HttpOnly ones too), localStorage and sessionStorage per origin — kept in the store
 * (the embedded SQLite file, or the fleet's PostgreSQL), sealed with AES-256-GCM under a key from the environment:
 * without a key nothing is saved or read back, and a state's contents never reach a log or a listing.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto"
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { InvalidInput } from "../Errors/Page.ts"
import { PolicyRejected, StepFailed } from "../Errors/Service.ts"
import * as Client from "./Client.ts"
import { describe, type StoreOptions } from "./Location.ts"

/** A cookie as the browser reports it (CDP `Network.Cookie`). */
export interface Cookie {
  readonly name: string
  readonly value: string
  readonly domain: string
  readonly path: string
  readonly expires: number
  readonly httpOnly: boolean
  readonly secure: boolean
  readonly session: boolean
  readonly sameSite?: string
  /** A partitioned cookie's partition (CHIPS), as CDP reports it: it is put back in it. */
  readonly partitionKey?: { readonly topLevelSite: string; readonly hasCrossSiteAncestor: boolean }
}

export interface OriginStorage {
  readonly origin: string
  readonly localStorage: ReadonlyArray<readonly [string, string]>
  readonly sessionStorage: ReadonlyArray<readonly [string, string]>
}

/** What a browser holds for a person who logged in: what `save` keeps and `load` puts back. */
export interface StorageState {
  readonly cookies: ReadonlyArray<Cookie>
  readonly origins: ReadonlyArray<OriginStorage>
  /** The page it was saved on. */
  readonly url?: string
}

/** A state as listings show it: counts, never contents. */
export interface Summary {
  readonly name: string
  readonly savedAt: string
  readonly cookies: number
  readonly origins: number
}

export interface StorageStatesOptions {
  /** The key states are sealed with; absent, saving and loading are refused. */
  readonly key: Redacted.Redacted<string> | undefined
  readonly location: StoreOptions
}

const namePattern = /^[A-Za-z0-9._-]{1,64}$/

const noKey = (doing: string) =>
  new PolicyRejected({
    field: "SWITCHYARD_STORAGE_KEY",
    message: `cannot ${doing} a storage state: states are kept encrypted with SWITCHYARD_STORAGE_KEY (storage.key), which is not set on this service`
  })

const checkName = (name: string) =>
  namePattern.test(name)
    ? Effect.void
    : Effect.fail(
        new InvalidInput({
          field: "name",
          message: `a storage state's name is 1-64 letters, digits, ".", "_" or "-", not ${JSON.stringify(name)}`
        })
      )

/** `v1.<iv>.<tag>.<ciphertext>`, base64: AES-256-GCM under a key derived from the configured secret. */
const seal = (key: Buffer, plain: string) => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
  return ["v1", iv, cipher.getAuthTag(), data].map((p) => (typeof p === "string" ? p : p.toString("base64"))).join(".")
}

const open = (key: Buffer, sealed: string): string | undefined => {
  const [version, iv, tag, data] = sealed.split(".")
  if (version !== "v1" || iv === undefined || tag === undefined || data === undefined) return undefined
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"))
    decipher.setAuthTag(Buffer.from(tag, "base64"))
    return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}

/** The table the states are kept in. */
const migrate = (sql: SqlClient.SqlClient) =>
  sql`CREATE TABLE IF NOT EXISTS storage_states (
    name TEXT PRIMARY KEY,
    sealed TEXT NOT NULL,
    cookies INTEGER NOT NULL,
    origins INTEGER NOT NULL,
    saved_at TEXT NOT NULL)`

export class StorageStates extends Context.Service<
  StorageStates,
  {
    /** Whether a key is configured: without one, save and load are refused. */
    readonly keyed: boolean
    readonly save: (
      name: string,
      state: StorageState
    ) => Effect.Effect<Summary, PolicyRejected | InvalidInput | StepFailed>
    readonly load: (
      name: string
    ) => Effect.Effect<
      { readonly state: StorageState; readonly summary: Summary },
      PolicyRejected | InvalidInput | StepFailed
    >
    readonly list: Effect.Effect<ReadonlyArray<Summary>, StepFailed>
    /** Whether there was one to delete. */
    readonly remove: (name: string) => Effect.Effect<boolean, InvalidInput | StepFailed>
  }
>()("switchyard/StorageStates") {
  static readonly layer = (options: StorageStatesOptions) => Layer.effect(StorageStates, make(options))
}

export const make = Effect.fnUntraced(function* (options: StorageStatesOptions) {
  const scope = yield* Effect.scope
  const key =
    options.key === undefined ? undefined : scryptSync(Redacted.value(options.key), "switchyard storage states", 32)
  const failed = (doing: string) => (cause: unknown) =>
    new StepFailed({
      step: "storage state",
      retryable: true,
      message: `cannot ${doing} in the store (${describe(options.location)}): ${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}`
    })
  /** The client, opened once; a failed open is tried again on the next use. */
  const sql = (yield* Client.lazy(options.location, scope, migrate)).pipe(Effect.mapError(failed("open the store")))

  const save = (name: string, state: StorageState) =>
    Effect.gen(function* () {
      yield* checkName(name)
      if (key === undefined) return yield* noKey("save")
      const db = yield* sql
      const summary: Summary = {
        name,
        savedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
        cookies: state.cookies.length,
        origins: state.origins.length
      }
      yield* db`INSERT INTO storage_states (name, sealed, cookies, origins, saved_at)
        VALUES (${name}, ${seal(key, JSON.stringify(state))}, ${summary.cookies}, ${summary.origins}, ${summary.savedAt})
        ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, cookies = excluded.cookies,
        origins = excluded.origins, saved_at = excluded.saved_at`.pipe(Effect.mapError(failed(`save ${name}`)))
      return summary
    })

  const load = (name: string) =>
    Effect.gen(function* () {
      yield* checkName(name)
      if (key === undefined) return yield* noKey("load")
      const db = yield* sql
      const rows = yield* db<{
        sealed: string
        cookies: number
        origins: number
        saved_at: string
      }>`SELECT sealed, cookies, origins, saved_at FROM storage_states WHERE name = ${name}`.pipe(
        Effect.mapError(failed(`read ${name}`))
      )
      const row = rows[0]
      if (row === undefined) {
        const names = (yield* list).map((s) => s.name)
        return yield* new InvalidInput({
          field: "name",
          message: `no storage state named ${JSON.stringify(name)}; ${names.length === 0 ? 'none is saved yet (browser.storage {action: "save"})' : `saved: ${names.join(", ")}`}`
        })
      }
      const plain = open(key, row.sealed)
      if (plain === undefined) {
        return yield* new PolicyRejected({
          field: "SWITCHYARD_STORAGE_KEY",
          message: `the storage state ${JSON.stringify(name)} was saved under another key than SWITCHYARD_STORAGE_KEY holds now: it cannot be read`
        })
      }
      return {
        state: JSON.parse(plain) as StorageState,
        summary: {
          name,
          savedAt: row.saved_at,
          cookies: Number(row.cookies),
          origins: Number(row.origins)
        }
      }
    })

  const list: Effect.Effect<ReadonlyArray<Summary>, StepFailed> = Effect.gen(function* () {
    const db = yield* sql
    const rows = yield* db<{
      name: string
      cookies: number
      origins: number
      saved_at: string
    }>`SELECT name, cookies, origins, saved_at FROM storage_states ORDER BY name`.pipe(
      Effect.mapError(failed("list the storage states"))
    )
    return rows.map((r) => ({
      name: r.name,
      savedAt: r.saved_at,
      cookies: Number(r.cookies),
      origins: Number(r.origins)
    }))
  })

  const remove = (name: string) =>
    Effect.gen(function* () {
      yield* checkName(name)
      const db = yield* sql
      const before = yield* db<{ n: number }>`SELECT COUNT(*) AS n FROM storage_states WHERE name = ${name}`.pipe(
        Effect.mapError(failed(`delete ${name}`))
      )
      yield* db`DELETE FROM storage_states WHERE name = ${name}`.pipe(Effect.mapError(failed(`delete ${name}`)))
      return Number(before[0]?.n ?? 0) > 0
    })

  return StorageStates.of({ keyed: key !== undefined, save, load, list, remove })
})
