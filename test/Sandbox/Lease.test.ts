/**
 * The one-client lease: a call waiting for it while another holds it can be stopped at any moment — cancelled, its
 * client gone, its session closed — rather than only once it gets the lease or its wait runs out.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option } from "effect"
import * as Lease from "../../src/Sandbox/Lease.ts"

describe("Lease", () => {
  it.live("a call waiting for the lease is interrupted at once, and leaves the lease to the next", () =>
    Effect.gen(function* () {
      const lease = yield* Lease.make({ timeoutMs: 60_000 })
      const holding = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(
        lease.run(Deferred.succeed(holding, undefined).pipe(Effect.andThen(Deferred.await(release))))
      )
      yield* Deferred.await(holding)
      const waiter = yield* Effect.forkChild(lease.run(Effect.succeed("ran")))
      yield* Effect.sleep("50 millis")
      // Well within the lease's 60 s wait: the interruption is not held until the wait ends.
      const stopped = yield* Fiber.interrupt(waiter).pipe(Effect.timeoutOption("5 seconds"))
      assert.isTrue(Option.isSome(stopped), "the waiting call could not be interrupted")
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(waiter)))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      // The interrupted wait took no permit: the next call gets the lease.
      assert.strictEqual(yield* lease.run(Effect.succeed("next")).pipe(Effect.timeout("5 seconds")), "next")
    })
  )
})
