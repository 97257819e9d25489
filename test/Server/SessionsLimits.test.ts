/**
 * The Sessions' limits on virtual time, over stand-in stacks: named sessions left unused close, calls past a bound
 * answer `busy`, waiting calls get slots in the order they came, and close and shutdown stop the calls they catch.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { make } from "../../src/Server/Sessions.ts"
import { options, recorder, stack } from "../support/StandInSessions.ts"

/** Lets forked calls run up to their next wait on the virtual clock. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

describe("Sessions limits", () => {
  it.effect("named sessions unused past the idle timeout close; the default one and one in use stay", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { idleTimeoutMs: 10_000, session: stack(rec, 0) }))
      yield* settle
      const opened = Effect.forkChild(
        Effect.all([sessions.call("a", "browser.act", { n: 0 }), sessions.call(undefined, "browser.act", { n: 1 })])
      )
      yield* Fiber.join(yield* opened)
      const long = yield* Effect.forkChild(sessions.call("b", "browser.act", { n: 2, ms: 60_000 }))
      yield* settle
      yield* TestClock.adjust("9 seconds")
      assert.deepStrictEqual(rec.closed, [], "nothing closes before the idle timeout")
      yield* TestClock.adjust("12 seconds")
      assert.deepStrictEqual(rec.closed, ["a"], "the unused named session closed, not the default one, not b")
      assert.isFalse(sessions.isOpen("a"))
      assert.isTrue(sessions.isOpen("default"))
      yield* TestClock.adjust("40 seconds")
      assert.isTrue((yield* Fiber.join(long)).ok)
      assert.isTrue(sessions.isOpen("b"), "a session whose call just ended is not idle")
      yield* TestClock.adjust("16 seconds")
      assert.deepStrictEqual(rec.closed, ["a", "b"])
      // A closed session opens afresh on its next call.
      const again = yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 3 }))
      assert.isTrue((yield* Fiber.join(again)).ok)
      assert.deepStrictEqual(rec.opened, ["a", "default", "b", "a"])
    }).pipe(Effect.scoped)
  )

  it.effect("a hibernated page unused past the idle timeout is dropped: the session starts afresh", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(
        options(rec, { maxBrowsers: 1, queue: 0, idleTimeoutMs: 10_000, session: stack(rec, 0) })
      )
      yield* Fiber.join(yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 0 })))
      yield* Fiber.join(yield* Effect.forkChild(sessions.call("b", "browser.act", { n: 1 })))
      assert.deepInclude((yield* sessions.status("a")) as object, { hibernated: true })
      yield* TestClock.adjust("16 seconds")
      assert.isFalse(sessions.isOpen("a"), "the hibernated page was dropped")
      assert.isFalse(sessions.isOpen("b"), "the open session closed")
      yield* Fiber.join(yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 2 })))
      assert.deepStrictEqual(rec.restored, [], "nothing came back")
    }).pipe(Effect.scoped)
  )

  it.effect("a call waiting for a slot past the slot timeout answers busy; the session working is untouched", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(
        options(rec, { maxBrowsers: 1, queue: 1, slotTimeoutMs: 5_000, session: stack(rec, 0) })
      )
      const long = yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 0, ms: 60_000 }))
      yield* settle
      const waiting = yield* Effect.forkChild(sessions.call("b", "browser.act", { n: 1 }))
      yield* settle
      yield* TestClock.adjust("4 seconds")
      assert.isUndefined(waiting.pollUnsafe(), "still waiting before the slot timeout")
      yield* TestClock.adjust("2 seconds")
      const refused = yield* Fiber.join(waiting)
      assert.strictEqual(refused.error?.type, "busy")
      assert.include(refused.error?.message ?? "", "no session slot freed within 5000 ms")
      yield* TestClock.adjust("60 seconds")
      assert.isTrue((yield* Fiber.join(long)).ok)
      assert.deepStrictEqual(rec.opened, ["a"])
      assert.deepStrictEqual(rec.closed, [])
    }).pipe(Effect.scoped)
  )

  it.effect("with the slot queue full or a session's calls at their bound, a call answers busy at once", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(
        options(rec, { maxBrowsers: 1, queue: 1, maxPendingPerSession: 2, session: stack(rec, 0) })
      )
      const long = yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 0, ms: 10_000 }))
      yield* settle
      const second = yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 1 }))
      const queued = yield* Effect.forkChild(sessions.call("b", "browser.act", { n: 2 }))
      yield* settle
      const third = yield* sessions.call("a", "browser.act", { n: 3 })
      assert.strictEqual(third.error?.type, "busy")
      assert.include(third.error?.message ?? "", `session "a" already has 2 calls waiting`)
      const full = yield* sessions.call("c", "browser.act", { n: 4 })
      assert.strictEqual(full.error?.type, "busy")
      assert.include(full.error?.message ?? "", "1 calls already wait for one")
      yield* TestClock.adjust("10 seconds")
      for (const fiber of [long, second]) assert.isTrue((yield* Fiber.join(fiber)).ok)
      // a's last call ended: a hibernates and b, waiting, gets its slot.
      assert.isTrue((yield* Fiber.join(queued)).ok)
      assert.deepStrictEqual(
        rec.log.filter((e) => e.event === "start").map((e) => e.n),
        [0, 1, 2]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("calls waiting for a slot get one in the order they came, as sessions go idle", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { maxBrowsers: 1, queue: 3, session: stack(rec, 0) }))
      const first = yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 0, ms: 1_000 }))
      yield* settle
      const waiting = []
      for (const [n, name] of ["b", "c", "d"].entries()) {
        waiting.push(yield* Effect.forkChild(sessions.call(name, "browser.act", { n: n + 1, ms: 1_000 })))
        yield* settle
      }
      for (let i = 0; i < 4; i++) yield* TestClock.adjust("1 second")
      for (const fiber of [first, ...waiting]) assert.isTrue((yield* Fiber.join(fiber)).ok)
      assert.deepStrictEqual(rec.opened, ["a", "b", "c", "d"])
      assert.deepStrictEqual(rec.closed, ["a", "b", "c"], "each gave its browser to the next")
      assert.strictEqual(yield* sessions.browsers, 1)
    }).pipe(Effect.scoped)
  )

  it.live("a session working call after call still gives its browser to a call waiting for a slot", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(
        options(rec, { maxBrowsers: 1, queue: 1, slotTimeoutMs: 3_000, session: stack(rec, 0) })
      )
      yield* sessions.call("a", "browser.act", { n: 0 })
      // "a" calls again as soon as each call answers, as an agent in a loop does.
      const busyLoop = Effect.forkChild(
        Effect.forEach(
          Array.from({ length: 60 }, (_, i) => i + 1),
          (n) => sessions.call("a", "browser.act", { n, ms: 50 }),
          {
            discard: true
          }
        )
      )
      const loop = yield* busyLoop
      yield* Effect.sleep(20)
      const waiting = yield* sessions.call("b", "browser.act", { n: 100 })
      assert.isTrue(waiting.ok, JSON.stringify(waiting.error))
      yield* Fiber.interrupt(loop)
    }).pipe(Effect.scoped)
  )

  it.effect("closing a session stops its running call with session_closed and frees its slot at once", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { maxBrowsers: 1, queue: 0, session: stack(rec, 0) }))
      const long = yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 0, ms: 60_000 }))
      yield* settle
      yield* sessions.close("a")
      const stopped = yield* Fiber.join(long)
      assert.strictEqual(stopped.error?.type, "session_closed")
      assert.isFalse(sessions.isOpen("a"))
      const next = yield* Fiber.join(yield* Effect.forkChild(sessions.call("b", "browser.act", { n: 1 })))
      assert.isTrue(next.ok, JSON.stringify(next.error))
      assert.deepStrictEqual(rec.closed, ["a"])
    }).pipe(Effect.scoped)
  )

  it.effect("after shutdown, calls running, waiting or new answer shutting_down", () =>
    Effect.gen(function* () {
      const rec = recorder()
      const sessions = yield* make(options(rec, { session: stack(rec, 0) }))
      const running = yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 0, ms: 60_000 }))
      yield* settle
      const waiting = yield* Effect.forkChild(sessions.call("a", "browser.act", { n: 1 }))
      yield* settle
      yield* sessions.shutdown
      for (const fiber of [running, waiting]) {
        const answer = yield* Fiber.join(fiber)
        assert.strictEqual(answer.error?.type, "shutting_down", JSON.stringify(answer))
      }
      assert.strictEqual((yield* sessions.call("b", "browser.act", { n: 2 })).error?.type, "shutting_down")
      assert.deepStrictEqual(
        rec.log.filter((e) => e.event === "start").map((e) => e.n),
        [0]
      )
    }).pipe(Effect.scoped)
  )
})
