/** Sessions without browsers: a call stopped while it opens a session leaves no claim behind for the calls after it. */
import { assert, describe, it } from "@effect/vitest"
import { type Context, Effect, Fiber, Layer } from "effect"
import type { Router } from "../../src/Cascade/Router.ts"
import type { Sandbox } from "../../src/Sandbox/Sandbox.ts"
import * as Sessions from "../../src/Server/Sessions.ts"

/** A session whose stack never finishes starting. */
const neverStarts = Layer.effectContext(Effect.never as Effect.Effect<Context.Context<Router | Sandbox>>)

describe("Sessions", () => {
  it.effect("a call stopped while it opens a session: the calls waiting on that session answer busy", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions.make({
        maxBrowsers: 2,
        queue: 2,
        maxPendingPerSession: 4,
        slotTimeoutMs: 60_000,
        idleTimeoutMs: null,
        session: () => neverStarts
      })
      const opener = yield* Effect.forkChild(sessions.call("w", "browser.status", {}))
      yield* Effect.yieldNow
      const waiter = yield* Effect.forkChild(sessions.call("w", "browser.status", {}))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(opener)
      const answer = yield* Fiber.join(waiter)
      assert.isFalse(answer.ok)
      assert.strictEqual(answer.error?.type, "busy")
      assert.include(answer.error?.message, "was stopped")
    }).pipe(Effect.scoped)
  )
})
