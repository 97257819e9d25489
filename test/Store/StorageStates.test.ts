/**
 * Named storage states in the embedded store and on the fleet's PostgreSQL alike: sealed under the configured key, read
 * back whole (HttpOnly and partitioned cookies, both storages), listed, replaced, removed, and unreadable under another key.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import type { StoreOptions } from "../../src/Store/Location.ts"
import * as StorageStates from "../../src/Store/StorageStates.ts"

/** Where one test keeps its states: a store of its own. */
type Place = Effect.Effect<{ readonly location: StoreOptions; readonly file?: string }, never, Scope.Scope>

const embedded: Place = Effect.gen(function* () {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-states-"))),
    (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
  )
  const file = join(dir, "store.db")
  return { location: { kind: "embedded", file }, file }
})

/** One PostgreSQL for the file, a fresh database in it for each test. */
const pg = { scope: undefined as Scope.Closeable | undefined, url: "", databases: 0 }
const postgres: Place = Effect.sync(() => {
  const name = `states_${++pg.databases}`
  execFileSync("psql", [pg.url, "-q", "-c", `CREATE DATABASE ${name}`])
  return { location: { kind: "postgres", url: Redacted.make(pg.url.replace(/\/postgres$/, `/${name}`)) } }
})

const state: StorageStates.StorageState = {
  cookies: [
    {
      name: "sid",
      value: "s3cr3t-session",
      domain: "127.0.0.1",
      path: "/",
      expires: -1,
      httpOnly: true,
      secure: false,
      session: true,
      sameSite: "Lax"
    },
    {
      name: "widget",
      value: "w1",
      domain: "127.0.0.1",
      path: "/",
      expires: 2_000_000_000,
      httpOnly: false,
      secure: true,
      session: false,
      sameSite: "None",
      partitionKey: { topLevelSite: "https://shop.example", hasCrossSiteAncestor: false }
    }
  ],
  origins: [
    {
      origin: "http://127.0.0.1:4100",
      localStorage: [["draft", '{"step":2}']],
      sessionStorage: [["tab", "1"]]
    }
  ],
  url: "http://127.0.0.1:4100/apply"
}

const suite = (place: Place) => {
  it.effect("a saved state reads back whole, is listed, replaced and removed", () =>
    Effect.gen(function* () {
      const { location } = yield* place
      const states = yield* StorageStates.make({ key: Redacted.make("the operator's key"), location })
      const saved = yield* states.save("acme", state)
      assert.deepInclude(saved, { name: "acme", cookies: 2, origins: 1 })
      const loaded = yield* states.load("acme")
      assert.deepStrictEqual(loaded.state, state)
      assert.deepStrictEqual(
        (yield* states.list).map((s) => s.name),
        ["acme"]
      )
      // Saving again under the name replaces it.
      yield* states.save("acme", { cookies: [], origins: [] })
      assert.deepStrictEqual((yield* states.load("acme")).state, { cookies: [], origins: [] })
      assert.isTrue(yield* states.remove("acme"))
      assert.isFalse(yield* states.remove("acme"))
      const gone = yield* Effect.flip(states.load("acme"))
      assert.strictEqual(gone.type, "invalid_input")
      assert.include(gone.message, "none is saved yet")
    })
  )

  it.effect("under another key a state cannot be read, and without a key nothing is saved or loaded", () =>
    Effect.gen(function* () {
      const { location } = yield* place
      const first = yield* StorageStates.make({ key: Redacted.make("key one"), location })
      yield* first.save("acme", state)
      const other = yield* StorageStates.make({ key: Redacted.make("key two"), location })
      const refused = yield* Effect.flip(other.load("acme"))
      assert.strictEqual(refused.type, "rejected_by_policy")
      assert.include(refused.message, "another key")
      const none = yield* StorageStates.make({ key: undefined, location })
      assert.strictEqual((yield* Effect.flip(none.save("b", state))).type, "rejected_by_policy")
      assert.strictEqual((yield* Effect.flip(none.load("acme"))).type, "rejected_by_policy")
      const badName = yield* Effect.flip(first.save("../etc", state))
      assert.deepInclude(badName, { type: "invalid_input", field: "name" })
    })
  )
}

describe("storage states in the embedded store", () => {
  suite(embedded)

  it.effect("the file holds no cookie value or storage in the clear", () =>
    Effect.gen(function* () {
      const { location, file } = yield* embedded
      const states = yield* StorageStates.make({ key: Redacted.make("the operator's key"), location })
      yield* states.save("acme", state)
      // The store's file and its write-ahead log, whichever holds the row now.
      const raw = readdirSync(dirname(file!))
        .map((f) => readFileSync(join(dirname(file!), f)).toString("latin1"))
        .join("")
      assert.include(raw, "acme", "the row is on disk")
      for (const secret of ["s3cr3t-session", "draft", '"step"']) assert.notInclude(raw, secret)
    })
  )
})

describe.skipIf(Postgres.binDir() === undefined)("storage states on PostgreSQL", () => {
  beforeAll(async () => {
    const scope = await Effect.runPromise(Scope.make())
    pg.scope = scope
    pg.url = Redacted.value((await Effect.runPromise(Scope.provide(Postgres.start, scope))).url)
  }, 60_000)
  afterAll(async () => {
    if (pg.scope !== undefined) await Effect.runPromise(Scope.close(pg.scope, Exit.void))
  })
  suite(postgres)

  it.effect("a state saved on one runner is read on another (its own connection)", () =>
    Effect.gen(function* () {
      const { location } = yield* postgres
      const key = Redacted.make("the fleet's key")
      const one = yield* StorageStates.make({ key, location })
      const two = yield* StorageStates.make({ key, location })
      yield* one.save("acme", state)
      assert.deepStrictEqual((yield* two.load("acme")).state, state)
    })
  )
})
