/**
 * The kept resolutions, in the embedded store and on PostgreSQL alike: per site, expiring on virtual time, counted,
 * listed and cleared.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import * as Resolutions from "../../src/Store/Resolutions.ts"

/** A store of its own for one test. */
type Open = (ttlMs?: number) => Effect.Effect<Resolutions.Resolutions["Service"], never, Scope.Scope>

const embedded: Open = (ttlMs) =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-resolutions-"))),
      (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
    )
    return yield* Resolutions.make({
      location: { kind: "embedded", file: join(dir, "store.db") },
      ...(ttlMs === undefined ? {} : { ttlMs })
    })
  })

/** One PostgreSQL for the file, a fresh database in it for each test. */
const pg = { scope: undefined as Scope.Closeable | undefined, url: "", databases: 0 }
const postgres: Open = (ttlMs) =>
  Effect.gen(function* () {
    const name = `resolutions_${++pg.databases}`
    execFileSync("psql", [pg.url, "-q", "-c", `CREATE DATABASE ${name}`])
    return yield* Resolutions.make({
      location: { kind: "postgres", url: Redacted.make(pg.url.replace(/\/postgres$/, `/${name}`)) },
      ...(ttlMs === undefined ? {} : { ttlMs })
    })
  })

const key = (site: string, instruction = 'fill "Email" with "{{value:1}}"'): Resolutions.Key => ({
  site,
  route: "/jobs/:id/apply",
  tool: "act",
  instruction
})

const resolution: Resolutions.Resolution = {
  steps: [
    {
      target: { role: "textbox", name: "Email", around: [{ kind: "group", name: "Contact" }] },
      method: "fill",
      arguments: ["{{value:1}}"]
    }
  ],
  destructive: false
}

const suite = (store: Open) => {
  it.effect("an entry lives for its time to live after it was kept or last replayed, then is gone", () =>
    Effect.gen(function* () {
      const kept = yield* store(60_000)
      const k = key("https://jobs.example.com")
      yield* kept.record(k, resolution, { resolvedBy: "stagehand dom", costMs: 2_400 })
      assert.strictEqual((yield* kept.lookup(k))._tag, "found")
      yield* TestClock.adjust("50 seconds")
      yield* kept.hit(k, { replayMs: 150 })
      yield* TestClock.adjust("50 seconds")
      const found = yield* kept.lookup(k)
      assert.strictEqual(found._tag, "found", "a replay keeps the entry alive")
      assert.strictEqual(found._tag === "found" ? found.entry.hits : -1, 1)
      yield* TestClock.adjust("61 seconds")
      assert.strictEqual((yield* kept.lookup(k))._tag, "expired")
      assert.strictEqual((yield* kept.lookup(k))._tag, "absent")
      assert.strictEqual((yield* kept.stats()).entries, 0)
    })
  )

  it.effect("keys differ by site, route, tool and instruction; a second record replaces the first", () =>
    Effect.gen(function* () {
      const kept = yield* store()
      const a = key("https://a.example")
      yield* kept.record(a, resolution, { resolvedBy: "stagehand dom", costMs: 1_000 })
      for (const other of [
        key("https://b.example"),
        key("http://a.example"),
        { ...a, route: "/jobs/:id" },
        { ...a, tool: "observe" as const },
        key("https://a.example", 'fill "Email" with "x"')
      ]) {
        assert.strictEqual((yield* kept.lookup(other))._tag, "absent", JSON.stringify(other))
      }
      const moved: Resolutions.Resolution = {
        ...resolution,
        steps: [{ ...resolution.steps[0]!, target: { ...resolution.steps[0]!.target, name: "Work email" } }]
      }
      yield* kept.record(a, moved, { resolvedBy: "playwright", costMs: 300 })
      const found = yield* kept.lookup(a)
      assert.strictEqual(found._tag === "found" ? found.entry.resolution.steps[0]?.target.name : "", "Work email")
      assert.strictEqual(found._tag === "found" ? found.entry.resolvedBy : "", "playwright")
      assert.lengthOf(yield* kept.list(), 1)
    })
  )

  it.effect(
    "counts hits, misses and calls with nothing kept per site; time saved is what the level took less the replay",
    () =>
      Effect.gen(function* () {
        const kept = yield* store()
        const a = key("https://a.example:8443")
        const b = key("https://b.example")
        yield* kept.record(a, resolution, { resolvedBy: "stagehand dom", costMs: 3_000 })
        yield* kept.hit(a, { replayMs: 200 })
        yield* kept.hit(a, { replayMs: 4_000 })
        yield* kept.miss(a, "failed")
        yield* kept.miss(b, "absent")
        assert.deepStrictEqual(yield* kept.stats(), {
          entries: 1,
          sites: 1,
          hits: 2,
          misses: 1,
          absent: 1,
          savedMs: 2_800
        })
        assert.strictEqual((yield* kept.stats("b.example")).absent, 1)
        assert.strictEqual((yield* kept.stats("a.example")).hits, 2, "a host name names the site on any port")
        assert.strictEqual((yield* kept.stats("https://a.example")).hits, 0, "an origin names one site exactly")
      })
  )

  it.effect("lists and clears one site, by origin or host, or every site", () =>
    Effect.gen(function* () {
      const kept = yield* store()
      for (const site of ["https://a.example", "https://b.example", "http://b.example:8080"]) {
        yield* kept.record(key(site), resolution, { resolvedBy: "playwright", costMs: 100 })
        yield* kept.record(key(site, 'click "Send"'), resolution, { resolvedBy: "playwright", costMs: 100 })
      }
      assert.lengthOf(yield* kept.list("b.example"), 4)
      assert.lengthOf(yield* kept.list("https://b.example"), 2)
      assert.strictEqual(yield* kept.clear("https://b.example"), 2)
      assert.deepStrictEqual([...new Set((yield* kept.list()).map((e) => e.key.site))].sort(), [
        "http://b.example:8080",
        "https://a.example"
      ])
      assert.strictEqual(yield* kept.clear(), 4)
      assert.lengthOf(yield* kept.list(), 0)
    })
  )
}

describe("Resolutions in the embedded store", () => {
  suite(embedded)

  it.effect("a store that cannot be opened fails with a typed, retryable error naming it", () =>
    Effect.gen(function* () {
      // Its folder is a file: the store's file can be neither made nor opened.
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-resolutions-"))),
        (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
      )
      writeFileSync(join(dir, "a-file"), "")
      const file = join(dir, "a-file", "store.db")
      const kept = yield* Resolutions.make({ location: { kind: "embedded", file } })
      const error = yield* Effect.flip(kept.lookup(key("https://a.example")))
      assert.strictEqual(error.type, "step_failed")
      assert.isTrue(error.retryable)
      assert.include(error.message, file)
      // The store is tried again on the next use, and fails the same way rather than crashing.
      assert.strictEqual((yield* Effect.flip(kept.stats())).type, "step_failed")
    })
  )
})

/** Runs in a process of its own: keeps an entry, replays it twice, says so, and waits to be killed. */
const keeper = (module: string, file: string) => `
import { Effect } from ${JSON.stringify(import.meta.resolve("effect"))}
import * as Resolutions from ${JSON.stringify(module)}
const key = { site: "https://a.example", route: "/jobs/:id/apply", tool: "act", instruction: "click \\"Send\\"" }
const resolution = { steps: [{ target: { role: "button", name: "Send", around: [] }, method: "click", arguments: [] }], destructive: true }
await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
  const kept = yield* Resolutions.make({ location: { kind: "embedded", file: ${JSON.stringify(file)} } })
  yield* kept.record(key, resolution, { resolvedBy: "playwright", costMs: 900 })
  yield* kept.hit(key, { replayMs: 100 })
  yield* kept.hit(key, { replayMs: 100 })
  process.stdout.write("kept\\n")
  yield* Effect.never
})))
`

describe("Resolutions after the service's process is killed", () => {
  it.effect("what was written before a kill -9 is there when the store is opened again", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-resolutions-"))),
        (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
      )
      const file = join(dir, "store.db")
      const script = join(dir, "keeper.mjs")
      const module = pathToFileURL(join(import.meta.dirname, "..", "..", "src", "Store", "Resolutions.ts")).href
      writeFileSync(script, keeper(module, file))
      yield* Effect.acquireUseRelease(
        Effect.sync(() => spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] })),
        (child) =>
          Effect.promise(
            () =>
              new Promise<void>((resolve, reject) => {
                child.on("exit", (code) => reject(new Error(`the keeper exited (${code}) before it kept anything`)))
                child.stdout.on("data", (chunk) => {
                  if (String(chunk).includes("kept")) {
                    child.removeAllListeners("exit")
                    child.on("exit", () => resolve())
                    child.kill("SIGKILL")
                  }
                })
              })
          ),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      const kept = yield* Resolutions.make({ location: { kind: "embedded", file } })
      const [entry] = yield* kept.list()
      assert.strictEqual(entry?.resolution.steps[0]?.target.name, "Send")
      assert.strictEqual(entry?.hits, 2)
      assert.include(yield* kept.stats(), { entries: 1, hits: 2, savedMs: 1_600 })
    }).pipe(Effect.orDie)
  )
})

describe.skipIf(Postgres.binDir() === undefined)("Resolutions on PostgreSQL", () => {
  beforeAll(async () => {
    const scope = await Effect.runPromise(Scope.make())
    pg.scope = scope
    pg.url = Redacted.value((await Effect.runPromise(Scope.provide(Postgres.start, scope))).url)
  }, 60_000)
  afterAll(async () => {
    if (pg.scope !== undefined) await Effect.runPromise(Scope.close(pg.scope, Exit.void))
  })
  suite(postgres)
})
