import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as Isolated from "../../src/Engine/Isolated.ts"

const entry = new URL("../support/EchoWorker.ts", import.meta.url)

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
})
