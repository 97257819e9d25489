/**
 * The end of a call waits for a load it started (a link whose response is a download says so only when it comes):
 * that wait ends on the frame's own stop event, not on a later look, and it is bounded when the frame never stops.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import type * as Protocol from "../../src/Cdp/Protocol.ts"
import * as Loads from "../../src/Sandbox/PageLink/Loads.ts"

const page = "PAGE"
const started = (frameId: string) =>
  ({ method: "Page.frameStartedLoading", params: { frameId } }) as unknown as Protocol.Event
const stopped = (frameId: string) =>
  ({ method: "Page.frameStoppedLoading", params: { frameId } }) as unknown as Protocol.Event
const navigated = (frameId: string) =>
  ({
    method: "Page.frameNavigated",
    params: { frame: { id: frameId, url: "http://127.0.0.1/next" } }
  }) as unknown as Protocol.Event

/** Whether the forked wait has ended. */
const ended = <A>(fiber: Fiber.Fiber<A>) => Effect.sync(() => fiber.pollUnsafe() !== undefined)

/** Lets the forked wait run as far as it can without the clock moving. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

describe("Loads", () => {
  it.effect("a call that started no load does not wait", () =>
    Effect.gen(function* () {
      const loads = yield* Loads.make
      const mark = yield* loads.mark
      assert.strictEqual(yield* loads.loaded(page, mark, 1_000), "none")
    })
  )

  it.effect("the wait ends when the frame stops loading, with the clock standing still", () =>
    Effect.gen(function* () {
      const loads = yield* Loads.make
      const mark = yield* loads.mark
      yield* loads.observe(started("main"), page)
      yield* loads.observe(started("child"), page)
      const waiting = yield* Effect.forkChild(loads.loaded(page, mark, 1_000))
      yield* settle
      assert.isFalse(yield* ended(waiting), "the wait ended while frames were loading")
      yield* loads.observe(navigated("main"), page)
      yield* loads.observe(stopped("main"), page)
      yield* settle
      assert.isFalse(yield* ended(waiting), "the wait ended while a child frame was loading")
      yield* loads.observe(stopped("child"), page)
      yield* settle
      assert.isTrue(yield* ended(waiting), "the wait outlived the frames' stop events")
      assert.strictEqual(yield* Fiber.join(waiting), "committed")
    })
  )

  it.effect("a load that ends without a document (a download) is told apart", () =>
    Effect.gen(function* () {
      const loads = yield* Loads.make
      const mark = yield* loads.mark
      yield* loads.observe(started("main"), page)
      const waiting = yield* Effect.forkChild(loads.loaded(page, mark, 1_000))
      yield* settle
      yield* loads.observe(stopped("main"), page)
      yield* settle
      assert.isTrue(yield* ended(waiting), "the wait outlived the frame's stop event")
      assert.strictEqual(yield* Fiber.join(waiting), "no_document")
    })
  )

  it.effect("a frame that never stops loading holds the call no longer than the bound", () =>
    Effect.gen(function* () {
      const loads = yield* Loads.make
      const mark = yield* loads.mark
      yield* loads.observe(started("main"), page)
      const waiting = yield* Effect.forkChild(loads.loaded(page, mark, 1_000))
      yield* settle
      yield* TestClock.adjust("999 millis")
      assert.isFalse(yield* ended(waiting))
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Fiber.join(waiting), "no_document")
    })
  )

  it.effect(
    "counts the loads the page's main frame started, committed or not; a frame inside it loading is not one",
    () =>
      Effect.gen(function* () {
        const loads = yield* Loads.make
        yield* loads.observe(started("advert"), page)
        assert.strictEqual((yield* loads.mainFrame(page)).loads ?? 0, 0)
        yield* loads.observe(started(page), page)
        assert.strictEqual((yield* loads.mainFrame(page)).loads, 1, "a navigation begun, not yet committed")
        yield* loads.observe(navigated(page), page)
        assert.deepStrictEqual(yield* loads.mainFrame(page), { commits: 1, loads: 1 })
      })
  )
})
