/** Attempt screenshots in the background: one at a time, bursts share a capture, reads of an unchanged page share
 * its frame, and pixel readers wait for them. */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import * as Captures from "../../src/Sandbox/Captures.ts"

describe("Captures", () => {
  it.effect("runs one capture at a time; attempts ending meanwhile share the next; settled waits for all", () =>
    Effect.gen(function* () {
      const gates: Array<Deferred.Deferred<void>> = []
      let running = 0
      let mostAtOnce = 0
      const shot = Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        gates.push(gate)
        running++
        mostAtOnce = Math.max(mostAtOnce, running)
        yield* Deferred.await(gate)
        running--
        return Option.some(new Uint8Array([gates.length]))
      })
      const saved: Array<[string, number]> = []
      const save = (name: string) => (image: Uint8Array) => Effect.sync(() => saved.push([name, image[0]!]))
      const captures = yield* Captures.make(shot)

      // Each attempt here may have changed the page (an act began before it ended).
      const acted = (name: string) => Effect.andThen(captures.changed, captures.start(save(name)))
      yield* acted("a")
      yield* Effect.yieldNow
      yield* acted("b")
      yield* acted("c")
      const waiting = yield* Effect.forkChild(captures.settled)
      yield* Effect.yieldNow
      assert.strictEqual(gates.length, 1, "b and c wait for a's capture")
      assert.isUndefined(waiting.pollUnsafe(), "a pixel reader waits while a capture is on the page")

      yield* Deferred.succeed(gates[0]!, undefined)
      while (gates.length < 2) yield* Effect.yieldNow
      assert.isUndefined(waiting.pollUnsafe(), "still waiting for the capture b and c share")
      yield* Deferred.succeed(gates[1]!, undefined)
      yield* Fiber.join(waiting)

      assert.deepStrictEqual(saved, [
        ["a", 1],
        ["b", 2],
        ["c", 2]
      ])
      assert.strictEqual(mostAtOnce, 1, "never two masks on the page at once")
      yield* acted("d")
      yield* Effect.yieldNow
      yield* Deferred.succeed(gates[2]!, undefined)
      yield* captures.settled
      assert.deepStrictEqual(saved.at(-1), ["d", 3])
    }).pipe(Effect.scoped)
  )

  it.effect("reads share the frame of the page nothing changed since; a change asks for a new one", () =>
    Effect.gen(function* () {
      const gates: Array<Deferred.Deferred<void>> = []
      const shot = Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        gates.push(gate)
        yield* Deferred.await(gate)
        return Option.some(new Uint8Array([gates.length]))
      })
      const saved: Array<[string, number]> = []
      const save = (name: string) => (image: Uint8Array) => Effect.sync(() => saved.push([name, image[0]!]))
      const captures = yield* Captures.make(shot)

      yield* captures.changed
      yield* captures.start(save("act"))
      yield* Effect.yieldNow
      // A read ending while the act's frame is being taken joins it.
      yield* captures.start(save("extract"))
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* captures.settled
      // A read after it, with nothing changed in between, gets the same frame without a capture.
      yield* captures.start(save("screenshot"))
      yield* captures.settled
      yield* Effect.yieldNow
      assert.strictEqual(gates.length, 1)
      // A navigate began: the next attempt needs a frame of its own.
      yield* captures.changed
      yield* captures.start(save("navigate"))
      while (gates.length < 2) yield* Effect.yieldNow
      // A change while a frame is being taken: the attempt after it waits for the next frame.
      yield* captures.changed
      yield* captures.start(save("fill"))
      yield* Deferred.succeed(gates[1]!, undefined)
      while (gates.length < 3) yield* Effect.yieldNow
      yield* Deferred.succeed(gates[2]!, undefined)
      yield* captures.settled
      assert.deepStrictEqual(saved, [
        ["act", 1],
        ["extract", 1],
        ["screenshot", 1],
        ["navigate", 2],
        ["fill", 3]
      ])
    }).pipe(Effect.scoped)
  )

  it.effect("a closing scope lets the capture in flight finish and save", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const saved: Array<number> = []
      const closed = yield* Effect.forkChild(
        Effect.scoped(
          Effect.gen(function* () {
            const captures = yield* Captures.make(
              Deferred.await(gate).pipe(Effect.as(Option.some(new Uint8Array([7]))))
            )
            yield* captures.start((image) => Effect.sync(() => saved.push(image[0]!)))
          })
        )
      )
      yield* Effect.yieldNow
      assert.isUndefined(closed.pollUnsafe())
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(closed)
      assert.deepStrictEqual(saved, [7])
    })
  )
})
