/**
 * A cascade time limit checked on virtual time through Switchyard's public API: an engine that never answers is
 * stopped at its level's limit, and the call fails with a typed `timeout` — no browser, no real waiting.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { Cascade } from "switchyard/Cascade"
import { Engine } from "switchyard/Engine"
import { Engines } from "switchyard/Engines"
import { Sandbox } from "switchyard/Sandbox"

/** An engine whose every operation hangs, like a model that stopped answering. */
const hanging = Engine.of({
  kind: "playwright",
  capabilities: { instructions: "grammar", actions: true, extract: "page-facts", observe: true, vision: false },
  navigate: () => Effect.never,
  act: () => Effect.never,
  extract: () => Effect.never,
  observe: () => Effect.never,
  screenshot: () => Effect.never,
  pageState: () => Effect.never,
  connected: () => Effect.succeed(true)
})

/** A Sandbox stand-in that runs each call on the hanging engine; no browser is started. */
const sandbox = Layer.mock(Sandbox)({
  use: (_spec, f) => f(hanging),
  fingerprint: Effect.succeed(""),
  // The main frame never commits a document: no browser runs.
  mainFrame: Effect.succeed({ commits: 0 }),
  artifacts: {
    screenshotLater: () => Effect.void,
    settled: Effect.void,
    snapshot: () => Effect.succeed(Option.none())
  }
})

const cascade = Cascade.layer.pipe(Layer.provide(Layer.mergeAll(sandbox, Engines.layer())))

it.effect("an attempt that never answers is stopped at the level's time limit and reported as a timeout", () =>
  Effect.gen(function* () {
    const cascadeService = yield* Cascade
    const call = yield* Effect.forkChild(
      cascadeService.call({
        action: "browser.extract",
        isAct: false,
        config: {
          totalTimeoutMs: 60_000,
          levels: [{ engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 5_000 }]
        },
        run: (engine) => engine.extract("everything")
      })
    )
    yield* TestClock.adjust("4999 millis")
    assert.isUndefined(call.pollUnsafe(), "still running just before the limit")
    yield* TestClock.adjust("1 millis")
    const exit = yield* Fiber.await(call)
    assert.isTrue(Exit.isFailure(exit))
    const error = yield* Effect.flip(Fiber.join(call))
    assert.strictEqual(error.type, "timeout")
    assert.strictEqual(error.retryable, true)
    assert.include(error.message, "5000 ms")
  }).pipe(Effect.provide(cascade))
)
