import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Isolated from "../../src/Engine/Isolated.ts"

const entry = new URL("../support/EchoWorker.ts", import.meta.url)
const slow = new URL("../support/SlowWorker.ts", import.meta.url)

/** Spawns in a scope of its own, closed by the caller: a connect that is released later. */
const attach = (greeting: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const worker = yield* Isolated.spawn(entry, { greeting }).pipe(Scope.provide(scope))
    return { worker, release: Scope.close(scope, Exit.void) }
  })

describe("Isolated", () => {
  it.effect("runs calls in a worker and carries SDK failures across with name and status", () =>
    Effect.gen(function* () {
      const worker = yield* Isolated.spawn(entry, { greeting: "hello" })
      assert.strictEqual(yield* worker.call<string>("echo", "there"), "hello there")
      const failure = yield* Effect.flip(worker.call("fail"))
      assert.deepInclude(failure, { name: "AI_APICallError", status: 429, message: "rate limited" })
      const unknown = yield* Effect.flip(worker.call("nope"))
      assert.include(unknown.message, '"nope"')
      assert.isTrue(worker.alive())
    })
  )

  it.effect("an interrupted call terminates the worker: nothing keeps hanging", () =>
    Effect.gen(function* () {
      const worker = yield* Isolated.spawn(entry, { greeting: "hi" })
      const fiber = yield* Effect.forkChild(worker.call("hang").pipe(Effect.timeout("5 seconds")))
      yield* TestClock.adjust("5 seconds")
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      assert.isFalse(worker.alive())
      const after = yield* Effect.flip(worker.call("echo", "x"))
      assert.isTrue(after.dead)
    })
  )

  it.effect("a failing init fails the spawn with the worker's error", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(Isolated.spawn(entry, { greeting: "refuse" }))
      assert.deepInclude(failure, { name: "InitError", message: "no init" })
    })
  )

  it.effect("a worker released cleanly is kept: the next spawn attaches the same thread with its own data", () =>
    Effect.gen(function* () {
      const keep = yield* Isolated.makeKeep()
      const first = yield* attach("first").pipe(Effect.provideService(Isolated.Keep, keep))
      assert.strictEqual(yield* first.worker.call<number>("attaches"), 1)
      yield* first.release
      assert.deepStrictEqual(keep.idle(), [{ entry: entry.href, threadId: first.worker.threadId }])

      const second = yield* attach("second").pipe(Effect.provideService(Isolated.Keep, keep))
      assert.strictEqual(second.worker.threadId, first.worker.threadId, "the kept thread was attached again")
      assert.strictEqual(yield* second.worker.call<number>("attaches"), 2)
      assert.strictEqual(yield* second.worker.call<string>("echo", "there"), "second there")
      assert.isFalse(yield* second.worker.call<boolean>("detached"), "this attach's own handlers, not the last one's")
      assert.deepStrictEqual(keep.idle(), [], "an attached worker is not idle")
      yield* second.release

      // Closing the keep ends what it holds.
      yield* keep.clear
      assert.deepStrictEqual(keep.idle(), [])
      const third = yield* attach("third").pipe(Effect.provideService(Isolated.Keep, keep))
      assert.notStrictEqual(third.worker.threadId, first.worker.threadId)
      yield* third.release
    }).pipe(Effect.scoped)
  )

  it.effect("a worker whose call was cut short is ended, not kept; an interrupted watch keeps it", () =>
    Effect.gen(function* () {
      const keep = yield* Isolated.makeKeep()
      const watched = yield* attach("watched").pipe(Effect.provideService(Isolated.Keep, keep))
      const watching = yield* Effect.forkChild(watched.worker.watch("gone"))
      yield* Fiber.interrupt(watching)
      assert.isTrue(watched.worker.alive())
      assert.strictEqual(yield* watched.worker.call<string>("echo", "still"), "watched still")

      const fiber = yield* Effect.forkChild(watched.worker.call("hang").pipe(Effect.timeout("5 seconds")))
      yield* TestClock.adjust("5 seconds")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(fiber)))
      yield* watched.release
      assert.deepStrictEqual(keep.idle(), [], "a terminated worker is not kept")

      const next = yield* attach("next").pipe(Effect.provideService(Isolated.Keep, keep))
      assert.notStrictEqual(next.worker.threadId, watched.worker.threadId)
      assert.strictEqual(yield* next.worker.call<number>("attaches"), 1, "a new thread")
      yield* next.release
    }).pipe(Effect.scoped)
  )

  it.effect(
    "an idle worker not taken within its time to live is ended; a take and give back starts its time anew",
    () =>
      Effect.gen(function* () {
        const keep = yield* Isolated.makeKeep({ idleTimeToLiveMs: 60_000 })
        const first = yield* attach("first").pipe(Effect.provideService(Isolated.Keep, keep))
        yield* first.release
        yield* TestClock.adjust("40 seconds")
        const second = yield* attach("second").pipe(Effect.provideService(Isolated.Keep, keep))
        assert.strictEqual(second.worker.threadId, first.worker.threadId)
        yield* second.release
        // The first give's time is up, but the thread was given back since: it stays.
        yield* TestClock.adjust("40 seconds")
        assert.strictEqual(keep.idle().length, 1)
        yield* TestClock.adjust("20 seconds")
        assert.deepStrictEqual(keep.idle(), [])
        assert.isFalse(second.worker.alive())
      }).pipe(Effect.scoped)
  )

  it.effect("without a Keep a released worker ends", () =>
    Effect.gen(function* () {
      const { worker, release } = yield* attach("alone")
      yield* release
      assert.isFalse(worker.alive())
    })
  )

  it.live("a spawn interrupted while the worker loads ends it only once its load has finished", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "isolated-load-")))
      yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
      const marker = join(dir, "loaded")
      // The worker's environment is a copy of this one at its start.
      process.env.SLOW_WORKER_MARKER = marker
      yield* Effect.addFinalizer(() => Effect.sync(() => delete process.env.SLOW_WORKER_MARKER))
      const before = Isolated.runningThreads()
      const exit = yield* Effect.exit(Effect.scoped(Isolated.spawn(slow, {})).pipe(Effect.timeout("200 millis")))
      assert.isTrue(Exit.isFailure(exit))
      assert.isTrue(existsSync(marker), "the load ran to its end before the worker was ended")
      assert.strictEqual(Isolated.runningThreads(), before, "and nothing is left running")
    }).pipe(Effect.scoped)
  )
})
