/** An attempt's limit counts the engine's work, not the browser's start: on virtual time. */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as StartTime from "../../src/Sandbox/StartTime.ts"

const stopped = () => Effect.fail("stopped" as const)
const limited = StartTime.limit(2_000, stopped)

/** Runs `attempt` under the 2 s limit; answers with the outcome and when it came, on virtual time. */
const run = <A>(attempt: Effect.Effect<A>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(
      limited(attempt).pipe(
        Effect.result,
        Effect.flatMap((outcome) => Clock.currentTimeMillis.pipe(Effect.map((at) => ({ outcome, at }))))
      )
    )
    yield* TestClock.adjust("1 minute")
    return yield* Fiber.join(fiber)
  })

describe("an attempt's time limit", () => {
  it.effect("stops work that runs past it", () =>
    Effect.gen(function* () {
      const { outcome, at } = yield* run(Effect.sleep("3 seconds"))
      assert.strictEqual(outcome._tag, "Failure")
      assert.strictEqual(at, 2_000)
    })
  )

  it.effect("does not count a browser's start: 10 s of start and 1.5 s of work succeed under 2 s", () =>
    Effect.gen(function* () {
      const { outcome, at } = yield* run(
        StartTime.uncounted(Effect.sleep("10 seconds")).pipe(Effect.andThen(Effect.sleep("1500 millis")), Effect.as(1))
      )
      assert.strictEqual(outcome._tag, "Success")
      assert.strictEqual(at, 11_500)
    })
  )

  it.effect("counts the work on both sides of a start, and overlapping starts once", () =>
    Effect.gen(function* () {
      const start = StartTime.uncounted(Effect.sleep("5 seconds"))
      const modules = StartTime.uncounted(Effect.sleep("3 seconds"))
      const { outcome, at } = yield* run(
        Effect.sleep("1 second").pipe(
          Effect.andThen(Effect.all([start, modules], { concurrency: 2 })),
          Effect.andThen(Effect.sleep("5 seconds"))
        )
      )
      // 1 s before, 5 s uncounted, then the limit's second second falls 1 s into the work after.
      assert.strictEqual(outcome._tag, "Failure")
      assert.strictEqual(at, 7_000)
    })
  )
})
