/**
 * The breaker on virtual time: consecutive failures of one engine open it for the cooldown; a success closes it;
 * engines are told apart by their label.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { Breaker } from "../../src/Cascade/Breaker.ts"
import { Timeout } from "../../src/Errors/Engine.ts"

const dom = { kind: "stagehand", mode: "dom" } as const
const cua = { kind: "stagehand", mode: "cua" } as const
const limits = { maxFailures: 2, cooldownMs: 60_000 }
const hang = new Timeout({ engine: "stagehand", timeoutMs: 1_000, message: "took too long" })

describe("Breaker", () => {
  it.effect("opens at maxFailures consecutive failures and stays open for the cooldown", () =>
    Effect.gen(function* () {
      const breaker = yield* Breaker
      yield* breaker.failure(dom, hang, limits)
      assert.isTrue(Option.isNone(yield* breaker.check(dom)))
      yield* breaker.failure(dom, hang, limits)
      const open = yield* breaker.check(dom)
      assert.deepStrictEqual(Option.getOrUndefined(open), { failures: 2, openUntil: 60_000, retryAfterMs: 60_000 })
      assert.isTrue(Option.isNone(yield* breaker.check(cua)), "another mode is another engine")
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(Option.getOrUndefined(yield* breaker.check(dom))?.retryAfterMs, 1_000)
      yield* TestClock.adjust("1 second")
      assert.isTrue(Option.isNone(yield* breaker.check(dom)), "closed once the cooldown is over")
      // Still counting: the next failure opens it again at once.
      yield* breaker.failure(dom, hang, limits)
      assert.strictEqual(Option.getOrUndefined(yield* breaker.check(dom))?.failures, 3)
    }).pipe(Effect.provide(Breaker.layer))
  )

  it.effect("a success forgets the failures", () =>
    Effect.gen(function* () {
      const breaker = yield* Breaker
      yield* breaker.failure(dom, hang, limits)
      yield* breaker.success(dom)
      yield* breaker.failure(dom, hang, limits)
      assert.isTrue(Option.isNone(yield* breaker.check(dom)))
    }).pipe(Effect.provide(Breaker.layer))
  )

  it.effect("without maxFailures it never opens", () =>
    Effect.gen(function* () {
      const breaker = yield* Breaker
      for (let i = 0; i < 10; i++) yield* breaker.failure(dom, hang, {})
      assert.isTrue(Option.isNone(yield* breaker.check(dom)))
    }).pipe(Effect.provide(Breaker.layer))
  )
})
