/**
 * The Sessions over stand-in stacks (a Router and Sandbox that record what ran): calls on one session run one at a
 * time in arrival order, sessions run in parallel, status and close never open a browser, a cancelled opener strands
 * nobody.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schema } from "effect"
import { make } from "../../src/Server/Sessions.ts"
import { options, recorder, stack } from "../support/StandInSessions.ts"

const Call = Schema.Struct({
  session: Schema.Literals(["a", "b", "c"]),
  tool: Schema.Literals(["browser.navigate", "browser.act", "browser.extract"]),
  ms: Schema.Literals([0, 1, 3])
})
const Burst = Schema.Array(Call).check(Schema.isMaxLength(24))

describe("Sessions", () => {
  it.live.prop(
    "a pipelined burst on several sessions: each session's calls run one at a time, in arrival order",
    [Burst],
    ([burst]) =>
      Effect.gen(function* () {
        const rec = recorder()
        const sessions = yield* make(options(rec))
        const arrived: Array<{ session: string; n: number }> = []
        const fibers = burst.map((c, n) =>
          Effect.runFork(
            Effect.sync(() => arrived.push({ session: c.session, n })).pipe(
              Effect.andThen(sessions.call(c.session, c.tool, { n, ms: c.ms }))
            )
          )
        )
        const answers = yield* Fiber.joinAll(fibers)
        assert.isTrue(answers.every((a) => a.ok))
        assert.strictEqual(rec.overlaps, 0, "two calls on one session ran at once")
        for (const name of ["a", "b", "c"]) {
          const wanted = arrived.filter((a) => a.session === name).map((a) => a.n)
          const started = rec.log.filter((e) => e.event === "start" && e.session === name).map((e) => e.n)
          assert.deepStrictEqual(started, wanted, `session ${name} ran its calls out of arrival order`)
        }
      }).pipe(Effect.scoped),
    { timeout: 60_000, arbitrary: { runs: 40 } }
  )

  it.live("different sessions run in parallel", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { session: stack(rec, 0) }))
      const started = Date.now()
      yield* Effect.all(
        ["a", "b", "c"].map((s) => sessions.call(s, "browser.act", { n: 0, ms: 300 })),
        { concurrency: "unbounded" }
      )
      assert.isBelow(Date.now() - started, 800)
    }).pipe(Effect.scoped)
  )

  it.live("a call cancelled while queued leaves the queue without blocking those behind it", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { session: stack(rec, 0) }))
      const first = Effect.runFork(sessions.call("a", "browser.act", { n: 0, ms: 200 }))
      const second = Effect.runFork(sessions.call("a", "browser.act", { n: 1, ms: 0 }))
      const third = Effect.runFork(sessions.call("a", "browser.act", { n: 2, ms: 0 }))
      yield* Effect.sleep(50)
      yield* Fiber.interrupt(second)
      const answers = yield* Fiber.joinAll([first, third])
      assert.isTrue(answers.every((a) => a.ok))
      assert.deepStrictEqual(
        rec.log.filter((e) => e.event === "start").map((e) => e.n),
        [0, 2]
      )
      assert.strictEqual(rec.overlaps, 0)
    }).pipe(Effect.scoped)
  )

  it.live("status and close of a session never opened answer at once and open nothing", () =>
    Effect.gen(function* () {
      const rec = recorder()
      // One slot, held by "a": anything that opened a session would wait for the slot.
      const sessions = yield* make(options(rec, { maxBrowsers: 1, slotTimeoutMs: 5_000 }))
      yield* sessions.call("a", "browser.act", { n: 0, ms: 0 })
      const started = Date.now()
      const status = yield* sessions.call("ghost", "browser.status", {})
      const closed = yield* sessions.call("ghost", "browser.close", {})
      assert.isTrue(status.ok)
      assert.deepInclude(status.result as object, { active: false })
      assert.isTrue(closed.ok)
      assert.deepStrictEqual(closed.result, { status: "ok" })
      assert.isBelow(Date.now() - started, 1_000)
      assert.deepStrictEqual(rec.opened, ["a"])
      assert.isFalse(sessions.isOpen("ghost"))
    }).pipe(Effect.scoped)
  )

  it.live("browser.close frees the session's slot at once", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { maxBrowsers: 1, slotTimeoutMs: 5_000 }))
      yield* sessions.call("a", "browser.act", { n: 0, ms: 0 })
      assert.isTrue(sessions.isOpen("a"))
      const closed = yield* sessions.call("a", "browser.close", {})
      assert.isTrue(closed.ok)
      assert.isFalse(sessions.isOpen("a"))
      const started = Date.now()
      const next = yield* sessions.call("b", "browser.act", { n: 1, ms: 0 })
      assert.isTrue(next.ok)
      assert.isBelow(Date.now() - started, 1_000)
    }).pipe(Effect.scoped)
  )

  it.live("a session name that is not a string is invalid input", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec))
      const answer = yield* sessions.call(true, "browser.status", {})
      assert.isFalse(answer.ok)
      assert.strictEqual(answer.error?.type, "invalid_input")
      assert.deepStrictEqual(rec.opened, [])
    }).pipe(Effect.scoped)
  )

  it.live("the first call cancelled while its session opens strands no later call", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const gate = yield* Deferred.make<void>()
      const sessions = yield* make(options(rec, { session: stack(rec, () => Deferred.await(gate)) }))
      const first = Effect.runFork(sessions.call("a", "browser.act", { n: 0, ms: 0 }))
      yield* Effect.sleep(20)
      yield* Fiber.interrupt(first)
      yield* Deferred.succeed(gate, undefined)
      const later = yield* sessions.call("a", "browser.act", { n: 1, ms: 0 }).pipe(Effect.timeout(5_000))
      assert.isTrue(later.ok)
      assert.deepStrictEqual(rec.opened, ["a"])
    }).pipe(Effect.scoped)
  )

  it.live("with the cap reached by idle sessions, the least recently used hibernates; its next call restores it", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { maxBrowsers: 2, queue: 0, session: stack(rec, 0) }))
      for (const name of ["a", "b"]) assert.isTrue((yield* sessions.call(name, "browser.act", { n: 0 })).ok)
      // No slot, no queue: without hibernation this would be busy.
      assert.isTrue((yield* sessions.call("c", "browser.act", { n: 1 })).ok)
      assert.deepStrictEqual(rec.closed, ["a"], "the least recently used session gave its browser")
      assert.isTrue(sessions.isOpen("a"), "a hibernated session is kept")
      assert.deepInclude((yield* sessions.status("a")) as object, { active: false, hibernated: true })
      assert.isTrue((yield* sessions.call("a", "browser.act", { n: 2 })).ok)
      assert.deepStrictEqual(rec.closed, ["a", "b"])
      assert.deepStrictEqual(rec.restored, ["a https://a.test/"], "a came back at its page")
      assert.deepStrictEqual(rec.opened, ["a", "b", "c", "a"])
    }).pipe(Effect.scoped)
  )

  it.live("a session being restored after a failover is not hibernated for another session's call", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(
        options(rec, { maxBrowsers: 1, queue: 1, slotTimeoutMs: 5_000, session: stack(rec, 0, 300) })
      )
      const page = { url: "https://a.test/kept", cookies: [], localStorage: [], sessionStorage: [] }
      const restoring = Effect.runFork(sessions.restore("a", page))
      yield* Effect.sleep(50)
      // b needs the only browser: it waits for a's restore to end, then a hibernates for it.
      assert.isTrue((yield* sessions.call("b", "browser.act", { n: 0 })).ok)
      assert.deepStrictEqual(rec.restored, ["a https://a.test/kept"], "a's page was put back whole before b ran")
      assert.deepStrictEqual(rec.closed, ["a"], "a gave its browser only after that")
      yield* Fiber.join(restoring)
    }).pipe(Effect.scoped)
  )

  it.live("busy only when every session is working; a call waiting for a slot takes the first to go idle", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { maxBrowsers: 1, queue: 0, session: stack(rec, 0) }))
      const working = Effect.runFork(sessions.call("a", "browser.act", { n: 0, ms: 300 }))
      yield* Effect.sleep(50)
      const refused = yield* sessions.call("b", "browser.act", { n: 1 })
      assert.strictEqual(refused.error?.type, "busy")
      yield* Fiber.join(working)

      const queued = yield* make(options(rec, { maxBrowsers: 1, queue: 1, session: stack(rec, 0) }))
      const long = Effect.runFork(queued.call("x", "browser.act", { n: 2, ms: 300 }))
      yield* Effect.sleep(50)
      // Waits for x's call to end, then x hibernates and y runs: no close needed, nothing busy.
      const next = yield* queued.call("y", "browser.act", { n: 3 })
      assert.isTrue(next.ok, JSON.stringify(next.error))
      assert.isTrue((yield* Fiber.join(long)).ok)
      assert.include(rec.closed, "x")
    }).pipe(Effect.scoped)
  )

  it.live("a hibernated session that is closed starts afresh", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { maxBrowsers: 1, queue: 0, session: stack(rec, 0) }))
      yield* sessions.call("a", "browser.act", { n: 0 })
      yield* sessions.hibernate("a")
      assert.deepStrictEqual(rec.closed, ["a"])
      yield* sessions.close("a")
      assert.isFalse(sessions.isOpen("a"))
      assert.isTrue((yield* sessions.call("a", "browser.act", { n: 1 })).ok)
      assert.deepStrictEqual(rec.restored, [], "nothing was restored")
    }).pipe(Effect.scoped)
  )
})
