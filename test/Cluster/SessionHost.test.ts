/**
 * The process holding a session's browser, around the local sessions: each call it takes is a span of its own in the
 * trace, and the restore it does first is timed by the Clock (a TestClock here), as the event it records says.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { TaskEvents } from "../../src/Cluster/Events.ts"
import { SavedStates } from "../../src/Cluster/SavedState.ts"
import * as SessionHost from "../../src/Cluster/SessionHost.ts"
import { SessionClosed } from "../../src/Errors/Service.ts"
import { atUrl } from "../../src/Sandbox/SavedPage.ts"
import { refuse, Sessions } from "../../src/Server/Sessions.ts"

describe("SessionHost", () => {
  it.effect("a call is a span named for the host, and a restore's duration is read from the Clock", () =>
    Effect.gen(function* () {
      const recorded: Array<{ readonly eventType: string; readonly data: Record<string, unknown> }> = []
      const spans: Array<string> = []
      const local = Layer.mock(Sessions)({
        isOpen: () => false,
        // A restore that takes two seconds of the (test) clock.
        restore: () => Effect.sleep("2 seconds"),
        call: (_session, tool, _args, meta = {}) =>
          Effect.currentSpan.pipe(
            Effect.map((span) => span.name),
            Effect.orElseSucceed(() => "no span"),
            Effect.tap((name) => Effect.sync(() => spans.push(name))),
            Effect.as(refuse(new SessionClosed({ action: tool, message: "the stub holds no browser" }), meta))
          )
      })
      const saved = Layer.mock(SavedStates)({
        load: () => Effect.succeed(Option.some(atUrl("http://127.0.0.1:1/form"))),
        drop: () => Effect.void
      })
      const events = Layer.mock(TaskEvents)({
        record: (_run, eventType, data) => Effect.sync(() => recorded.push({ eventType, data }))
      })
      const context = yield* Layer.build(Layer.mergeAll(local, saved, events))
      const host = yield* SessionHost.make(Context.get(context, Sessions)).pipe(Effect.provideContext(context))

      const fiber = yield* host.call("worker-1", "browser.extract", {}, { traceId: "t" }).pipe(Effect.forkChild)
      yield* TestClock.adjust("2 seconds")
      const answer = yield* Fiber.join(fiber)

      assert.isFalse(answer.ok)
      assert.deepStrictEqual(spans, ["SessionHost.call"])
      const restored = recorded.find((e) => e.eventType === "session_restored")
      assert.isDefined(restored)
      assert.strictEqual(restored!.data.durationMs, 2_000)
      assert.strictEqual(restored!.data.url, "http://127.0.0.1:1/form")
    })
  )
})
