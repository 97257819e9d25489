/**
 * What the browser's target events tell about its pages: a URL or title change is announced without changing which
 * pages there are, so a page list read before still holds; a page opened, closed or crashed makes it stale.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type * as Protocol from "../../src/Cdp/Protocol.ts"
import * as Targets from "../../src/Sandbox/PageLink/Targets.ts"

const info = (targetId: string, url: string, title: string) => ({
  targetId,
  type: "page",
  url,
  title,
  attached: false,
  canAccessOpener: false
})
const event = (method: string, params: unknown) => ({ method, params }) as unknown as Protocol.Event

describe("Targets", () => {
  it.effect(
    "a URL or title change is announced and leaves the pages as they were; an opened or closed one does not",
    () =>
      Effect.gen(function* () {
        const targets = yield* Targets.make
        yield* targets.observe(event("Target.targetCreated", { targetInfo: info("A", "about:blank", "") }))
        const start = yield* targets.members
        yield* targets.observe(
          event("Target.targetInfoChanged", { targetInfo: info("A", "http://127.0.0.1/form", "Sign up") })
        )
        assert.strictEqual(yield* targets.members, start, "a title change counted as a page opened or closed")
        assert.deepStrictEqual(
          yield* targets.location("A"),
          Option.some({ url: "http://127.0.0.1/form", title: "Sign up" })
        )
        const generation = yield* targets.generation
        yield* targets.observe(event("Target.targetCreated", { targetInfo: info("B", "about:blank", "") }))
        const opened = yield* targets.members
        assert.isAbove(opened, start, "a page opened left the list read before standing")
        assert.isAbove(yield* targets.generation, generation)
        yield* targets.observe(event("Target.targetDestroyed", { targetId: "B" }))
        assert.isAbove(yield* targets.members, opened, "a page closed left the list read before standing")
        assert.deepStrictEqual(yield* targets.fate("B"), Option.some("closed"))
        const closed = yield* targets.members
        yield* targets.observe(event("Target.targetCrashed", { targetId: "A", status: "crashed", errorCode: 0 }))
        assert.isAbove(yield* targets.members, closed, "a crashed page left the list read before standing")
      })
  )
})
