/** Attempt screenshots in the background: one at a time, bursts share a capture, reads of an unchanged page point
 * at its frame, a read's or a typing act's frame is held until something needs the page, and pixel readers wait for
 * masks. */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import * as Captures from "../../src/Sandbox/Captures.ts"

/** An attempt named `name`: what it stored (the image's first byte), or `=` and the attempt whose picture it is. */
const keeper = (saved: Array<[string, number | string]>) => {
  const keep = (name: string): Captures.Keep => ({
    save: (image) => Effect.sync(() => void saved.push([name, image[0]!])),
    same: (first) => Effect.sync(() => void saved.push([name, `=${first.where.attemptId}`])),
    lost: () => Effect.sync(() => void saved.push([name, "lost"])),
    where: { attemptId: name, traceId: "trace", file: `artifacts/${name}.png` }
  })
  return keep
}

/** A capture that waits for its gate; its image is its number. */
const gated = (gates: Array<Deferred.Deferred<void>>) =>
  Effect.gen(function* () {
    const gate = yield* Deferred.make<void>()
    gates.push(gate)
    yield* Deferred.await(gate)
    return Option.some(new Uint8Array([gates.length]))
  })

/** A few turns of the scheduler, fewer once `done` holds: long enough for what does not wait to get there. */
const turns = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 20 && !done(); i++) yield* Effect.yieldNow
  })

/** Captures whose n-th capture ends when `finish(n)` is called (once it has begun), and what each attempt kept. */
const rig = Effect.gen(function* () {
  const gates: Array<Deferred.Deferred<void>> = []
  const saved: Array<[string, number | string]> = []
  const captures = yield* Captures.make(gated(gates))
  const finish = (n: number) =>
    Effect.gen(function* () {
      while (gates.length < n) yield* Effect.yieldNow
      yield* Deferred.succeed(gates[n - 1]!, undefined)
    })
  return { gates, saved, save: keeper(saved), captures, finish }
})

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
      const saved: Array<[string, number | string]> = []
      const save = keeper(saved)
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
        ["c", "=b"]
      ])
      assert.strictEqual(mostAtOnce, 1, "never two masks on the page at once")
      yield* acted("d")
      yield* Effect.yieldNow
      yield* Deferred.succeed(gates[2]!, undefined)
      yield* captures.settled
      assert.deepStrictEqual(saved.at(-1), ["d", 3])
    }).pipe(Effect.scoped)
  )

  it.effect("a frame held is made from a pixel read's picture while typed text shows where it did; else captured", () =>
    Effect.gen(function* () {
      const gates: Array<Deferred.Deferred<void>> = []
      const saved: Array<[string, number | string]> = []
      const save = keeper(saved)
      const at = (x: number) => ({ ratio: 1, boxes: [[x, 20, 300, 40] as const], other: false })
      let typed = at(10)
      const captures = yield* Captures.make(gated(gates), {
        typed: Effect.sync(() => Option.some(typed)),
        // A masked copy: the picture's first byte plus 100.
        mask: (png) => Effect.succeed(Option.some(new Uint8Array([100 + png[0]!])))
      })
      const finish = (n: number) =>
        Effect.gen(function* () {
          while (gates.length < n) yield* Effect.yieldNow
          yield* Deferred.succeed(gates[n - 1]!, undefined)
        })

      yield* captures.begin
      yield* captures.ended
      yield* captures.start(save("read"))
      const picture = yield* captures.pixels(Effect.succeed(new Uint8Array([7])), (png) => png)
      yield* captures.ended
      yield* captures.start(save("screenshot"))
      yield* captures.settled
      // The mask is made off the page: nothing waits for it, it is stored a moment later.
      yield* turns(() => saved.length === 2)
      assert.deepStrictEqual([...picture], [7], "the reader's own picture is left unmasked")
      assert.strictEqual(gates.length, 0, "no capture taken")
      assert.deepStrictEqual(saved, [
        ["read", 107],
        ["screenshot", "=read"]
      ])

      // The field moved after the picture was taken: the frame is captured (masked in the page) instead.
      yield* captures.changed
      yield* captures.begin
      yield* captures.ended
      yield* captures.start(save("read2"))
      yield* captures.pixels(
        Effect.sync(() => {
          typed = at(60)
          return new Uint8Array([8])
        }),
        (png) => png
      )
      yield* finish(1)
      yield* captures.settled
      assert.deepStrictEqual(saved.at(-1), ["read2", 1])

      // Text where no box bounds it (an editor): captured too.
      yield* captures.changed
      yield* captures.begin
      yield* captures.ended
      yield* captures.start(save("read3"))
      typed = { ...at(60), other: true }
      yield* captures.pixels(Effect.succeed(new Uint8Array([9])), (png) => png)
      yield* finish(2)
      yield* captures.settled
      assert.deepStrictEqual(saved.at(-1), ["read3", 2])
    }).pipe(Effect.scoped)
  )

  it.effect("reads point at the frame of the page nothing changed since; a change asks for a new one", () =>
    Effect.gen(function* () {
      const { gates, saved, save, captures, finish } = yield* rig

      yield* captures.changed
      yield* captures.ended
      yield* captures.start(save("act"))
      yield* Effect.yieldNow
      // A read ending while the act's frame is being taken joins it.
      yield* captures.ended
      yield* captures.start(save("extract"))
      yield* finish(1)
      yield* captures.settled
      // A read after it, with nothing changed in between, gets the same frame without a capture.
      yield* captures.ended
      yield* captures.start(save("screenshot"))
      yield* captures.settled
      yield* Effect.yieldNow
      assert.strictEqual(gates.length, 1)
      // A navigate began: the next attempt needs a frame of its own.
      yield* captures.changed
      yield* captures.ended
      yield* captures.start(save("navigate"))
      while (gates.length < 2) yield* Effect.yieldNow
      // A change while a frame is being taken: the attempt after it waits for the next frame.
      yield* captures.changed
      yield* captures.ended
      yield* captures.start(save("fill"))
      yield* finish(2)
      yield* finish(3)
      yield* captures.settled
      assert.deepStrictEqual(saved, [
        ["act", 1],
        ["extract", "=act"],
        ["screenshot", "=act"],
        ["navigate", 2],
        ["fill", 3]
      ])
    }).pipe(Effect.scoped)
  )

  it.effect("a read's frame is held: a pixel read goes first, then the frame serves the read and the screenshot", () =>
    Effect.gen(function* () {
      const { gates, saved, save, captures, finish } = yield* rig

      // A click whose attempt took no screenshot of its own, then a read: nothing changed during the read.
      yield* captures.changed
      yield* captures.begin
      yield* captures.ended
      yield* captures.start(save("extract"))
      yield* Effect.yieldNow
      assert.strictEqual(gates.length, 0, "the read's frame is held, no mask goes on the page")
      // The agent's screenshot: nothing to wait for, it reads the pixels first; no mask goes on the page while it
      // does, not even when the read's frame has been held its longest.
      yield* captures.begin
      const reading = yield* Deferred.make<void>()
      const screenshot = yield* Effect.forkChild(captures.pixels(Deferred.await(reading)))
      yield* Effect.yieldNow
      yield* TestClock.adjust(Captures.holdMs)
      yield* Effect.yieldNow
      assert.strictEqual(gates.length, 0, "no capture while the pixels are read")
      yield* Deferred.succeed(reading, undefined)
      yield* Fiber.join(screenshot)
      while (gates.length < 1) yield* Effect.yieldNow
      yield* captures.ended
      yield* captures.start(save("screenshot"))
      yield* finish(1)
      yield* captures.settled
      assert.deepStrictEqual(saved, [
        ["extract", 1],
        ["screenshot", "=extract"]
      ])
    }).pipe(Effect.scoped)
  )

  it.effect("a held frame is taken before a change, after a moment, or when the captures close", () =>
    Effect.gen(function* () {
      const { gates, saved, save, captures, finish } = yield* rig
      const read = (name: string) =>
        Effect.andThen(captures.begin, Effect.andThen(captures.ended, captures.start(save(name))))

      // An act begins (even one that only types): the frame held for the read before it is taken first, and the act
      // waits for it, so it shows the page before the act.
      yield* captures.changed
      yield* read("observe")
      const acting = yield* Effect.forkChild(captures.changed)
      while (gates.length < 1) yield* Effect.yieldNow
      yield* Effect.yieldNow
      assert.isUndefined(acting.pollUnsafe(), "the act waits for the held frame")
      yield* finish(1)
      yield* Fiber.join(acting)
      yield* captures.ended
      yield* captures.start(save("act"))
      yield* finish(2)
      yield* captures.settled
      assert.deepStrictEqual(saved, [
        ["observe", 1],
        ["act", 2]
      ])

      // Nothing comes after the read: its frame is taken a moment later.
      yield* captures.changed
      yield* read("extract")
      yield* TestClock.adjust(Captures.holdMs - 1)
      assert.strictEqual(gates.length, 2)
      yield* TestClock.adjust(1)
      yield* finish(3)
      yield* captures.settled
      assert.deepStrictEqual(saved.at(-1), ["extract", 3])
    }).pipe(Effect.scoped)
  )

  it.effect("an act that only typed has its frame held: the read and the screenshot after it wait for no capture", () =>
    Effect.gen(function* () {
      const { gates, saved, save, captures, finish } = yield* rig

      // A fill: the page changed by typing only; its frame is held, as a read's is.
      yield* captures.begin
      yield* captures.typing
      yield* captures.ended
      yield* captures.start(save("fill"))
      yield* Effect.yieldNow
      assert.strictEqual(gates.length, 0, "the fill's frame is held")
      // The read after it shares the held frame; the agent's screenshot reads the pixels at once.
      yield* captures.begin
      yield* captures.ended
      yield* captures.start(save("extract"))
      const screenshot = yield* Effect.forkChild(captures.pixels(Effect.void))
      yield* turns(() => screenshot.pollUnsafe() !== undefined)
      assert.isDefined(screenshot.pollUnsafe(), "the screenshot waits for no capture")
      yield* finish(1)
      yield* captures.settled
      assert.deepStrictEqual(saved, [
        ["fill", 1],
        ["extract", "=fill"]
      ])

      // Two fills in a row, the first while an earlier frame is being taken: neither waits, and one frame, taken
      // once the page may change, serves both.
      yield* captures.begin
      yield* captures.changed
      yield* captures.ended
      yield* captures.start(save("navigate"))
      yield* turns(() => gates.length === 2)
      assert.strictEqual(gates.length, 2, "the navigate's frame is being taken")
      yield* captures.begin
      yield* captures.typing
      yield* captures.ended
      yield* captures.start(save("fill 2"))
      yield* captures.begin
      const typing = yield* Effect.forkChild(captures.typing)
      yield* turns(() => typing.pollUnsafe() !== undefined)
      assert.isDefined(typing.pollUnsafe(), "the next fill goes on beside the capture")
      yield* captures.ended
      yield* captures.start(save("fill 3"))
      yield* finish(2)
      yield* turns(() => false)
      assert.strictEqual(gates.length, 2, "the fills' frame waits until something needs the page")
      const change = yield* Effect.forkChild(captures.changed)
      yield* turns(() => gates.length === 3)
      assert.strictEqual(gates.length, 3, "a change asks for the fills' frame")
      assert.isUndefined(change.pollUnsafe(), "and waits until it is taken")
      yield* finish(3)
      yield* Fiber.join(change)
      assert.deepStrictEqual(saved.slice(2), [
        ["navigate", 2],
        ["fill 2", 3],
        ["fill 3", "=fill 2"]
      ])

      // A click may move the page: its frame is taken when it ends.
      yield* captures.begin
      yield* captures.changed
      yield* captures.ended
      yield* captures.start(save("click"))
      yield* Effect.yieldNow
      assert.strictEqual(gates.length, 4, "the click's frame is taken at once")
      yield* finish(4)
      yield* captures.settled
    }).pipe(Effect.scoped)
  )

  it.effect(
    "a navigate that loaded has its frame held: the fill after it shares it, taken before the next change",
    () =>
      Effect.gen(function* () {
        const { gates, saved, save, captures, finish } = yield* rig

        // A navigate to a new address: the call's end finds the page elsewhere, where it loaded and rests.
        yield* captures.begin
        yield* captures.changed
        yield* captures.loaded
        yield* captures.moved
        yield* captures.ended
        yield* captures.start(save("navigate"))
        yield* turns(() => false)
        assert.strictEqual(gates.length, 0, "the navigate's frame is held")
        yield* captures.begin
        yield* captures.typing
        yield* captures.ended
        yield* captures.start(save("fill"))
        yield* turns(() => false)
        assert.strictEqual(gates.length, 0, "the fill's frame is the same, held")
        // A click: the frame held is taken before it, and the click waits for it.
        yield* captures.begin
        const change = yield* Effect.forkChild(captures.changed)
        yield* turns(() => gates.length === 1)
        assert.strictEqual(gates.length, 1, "the held frame is taken before the click")
        assert.isUndefined(change.pollUnsafe(), "the click waits for it")
        yield* finish(1)
        yield* Fiber.join(change)
        assert.deepStrictEqual(saved, [
          ["navigate", 1],
          ["fill", "=navigate"]
        ])
        // The page found elsewhere after the click, which may go on moving it: its frame is taken at once.
        yield* captures.moved
        yield* captures.ended
        yield* captures.start(save("click"))
        yield* turns(() => gates.length === 2)
        assert.strictEqual(gates.length, 2, "the click's frame is taken at once")
        yield* finish(2)
        yield* captures.settled
        assert.deepStrictEqual(saved.slice(2), [["click", 2]])
      }).pipe(Effect.scoped)
  )

  it.effect("a frame asked for behind the capture running serves the read that ends before it is taken", () =>
    Effect.gen(function* () {
      const { gates, saved, save, captures, finish } = yield* rig

      // A click's frame is being taken when a fill ends: the fill's is held, then asked for behind it.
      yield* captures.begin
      yield* captures.changed
      yield* captures.ended
      yield* captures.start(save("click"))
      yield* turns(() => gates.length === 1)
      yield* captures.begin
      yield* captures.typing
      yield* captures.ended
      yield* captures.start(save("fill"))
      yield* TestClock.adjust(Captures.holdMs + 1)
      // A read ending before that frame is taken: the same frame serves it.
      yield* captures.begin
      yield* captures.ended
      yield* captures.start(save("extract"))
      yield* finish(1)
      yield* finish(2)
      yield* turns(() => saved.length === 3)
      assert.deepStrictEqual(saved, [
        ["click", 1],
        ["fill", 2],
        ["extract", "=fill"]
      ])
      yield* captures.settled
      assert.strictEqual(gates.length, 2, "no frame of its own")
    }).pipe(Effect.scoped)
  )

  it.effect("a frame held is taken a moment later only in a pause between attempts, not during one", () =>
    Effect.gen(function* () {
      const { gates, saved, save, captures, finish } = yield* rig

      yield* captures.begin
      yield* captures.ended
      yield* captures.start(save("extract"))
      // A slow read begins before the moment is up, and is still under way after it.
      yield* captures.begin
      yield* TestClock.adjust(Captures.holdMs * 3)
      yield* turns(() => false)
      assert.strictEqual(gates.length, 0, "not taken while the read is under way")
      yield* captures.ended
      yield* captures.start(save("extract 2"))
      yield* TestClock.adjust(Captures.holdMs)
      yield* turns(() => gates.length === 1)
      assert.strictEqual(gates.length, 1, "taken in the pause after it")
      yield* finish(1)
      yield* captures.settled
      assert.deepStrictEqual(saved, [
        ["extract", 1],
        ["extract 2", "=extract"]
      ])
    }).pipe(Effect.scoped)
  )

  it.effect(
    "a choice waits for the capture in flight, then keeps the frame held: one frame serves it and the typing",
    () =>
      Effect.gen(function* () {
        const { gates, saved, save, captures, finish } = yield* rig

        // A click's frame is being taken when a choice begins: the choice may load a page, so it waits.
        yield* captures.begin
        yield* captures.changed
        yield* captures.ended
        yield* captures.start(save("click"))
        yield* captures.begin
        const waiting = yield* Effect.forkChild(captures.choosing)
        yield* turns(() => false)
        assert.isUndefined(waiting.pollUnsafe(), "the choice waits for the capture in flight")
        yield* finish(1)
        yield* Fiber.join(waiting)
        yield* captures.ended
        yield* captures.start(save("choose"))

        // A fill, then a choice that loads nothing: neither asks for a capture; one frame after both serves them.
        yield* captures.begin
        yield* captures.typing
        yield* captures.ended
        yield* captures.start(save("fill"))
        yield* captures.begin
        yield* captures.choosing
        yield* captures.ended
        yield* captures.start(save("choose 2"))
        yield* turns(() => false)
        assert.strictEqual(gates.length, 1, "no capture before the choice, none right after it")
        yield* TestClock.adjust(Captures.holdMs)
        yield* finish(2)
        yield* captures.settled
        assert.deepStrictEqual(saved, [
          ["click", 1],
          ["choose", 2],
          ["fill", "=choose"],
          ["choose 2", "=choose"]
        ])
      }).pipe(Effect.scoped)
  )

  it.effect("a choice that loaded a page drops the frame held: its attempts are told; the choice's own is taken", () =>
    Effect.gen(function* () {
      const { gates, saved, save, captures, finish } = yield* rig

      yield* captures.begin
      yield* captures.typing
      yield* captures.ended
      yield* captures.start(save("fill"))
      yield* captures.begin
      yield* captures.choosing
      yield* captures.left
      yield* captures.ended
      yield* captures.start(save("jump"))
      yield* finish(1)
      yield* captures.settled
      assert.strictEqual(gates.length, 1)
      assert.deepStrictEqual(saved, [
        ["fill", "lost"],
        ["jump", 1]
      ])

      // The next call's choice began before the last attempt asked for its frame (a client's calls in parallel): the
      // frame stays held while the choice runs, however long, and is dropped when it loads a page.
      yield* captures.begin
      yield* captures.typing
      yield* captures.ended
      yield* captures.begin
      yield* captures.choosing
      yield* captures.start(save("type"))
      yield* TestClock.adjust(Captures.holdMs * 10)
      yield* turns(() => false)
      assert.strictEqual(gates.length, 1, "no capture while the choice runs")
      yield* captures.left
      yield* captures.ended
      yield* captures.start(save("jump 2"))
      yield* finish(2)
      yield* captures.settled
      assert.deepStrictEqual(saved.slice(2), [
        ["type", "lost"],
        ["jump 2", 2]
      ])
    }).pipe(Effect.scoped)
  )

  it.effect("a frame held is taken in the pause after an engine use no attempt stands behind (a replay's read)", () =>
    Effect.gen(function* () {
      const { gates, captures, save, finish } = yield* rig

      yield* captures.begin
      yield* captures.ended
      yield* captures.start(save("extract"))
      yield* captures.begin
      yield* captures.ended
      yield* TestClock.adjust(Captures.holdMs)
      yield* turns(() => gates.length === 1)
      assert.strictEqual(gates.length, 1, "taken a moment after the use ended, not five seconds later")
      if (gates.length === 1) yield* finish(1)
    }).pipe(Effect.scoped)
  )

  it.effect("a closing scope takes the frame held and saves it", () =>
    Effect.gen(function* () {
      const saved: Array<[string, number | string]> = []
      yield* Effect.scoped(
        Effect.gen(function* () {
          const captures = yield* Captures.make(Effect.succeed(Option.some(new Uint8Array([9]))))
          yield* captures.changed
          yield* captures.begin
          yield* captures.ended
          yield* captures.start(keeper(saved)("extract"))
        })
      )
      assert.deepStrictEqual(saved, [["extract", 9]])
    })
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
            yield* captures.changed
            yield* captures.ended
            yield* captures.start({
              ...keeper([])("act"),
              save: (image) => Effect.sync(() => void saved.push(image[0]!))
            })
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
