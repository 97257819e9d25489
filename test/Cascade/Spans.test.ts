/**
 * The Cascade's services as a trace shows them: resolving a level's engine and the replay level in front of the
 * cascade are spans of their own, named for the service and method, inside the call's span.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Result, Tracer } from "effect"
import * as Engines from "../../src/Cascade/Engines.ts"
import * as Replay from "../../src/Cascade/Replay.ts"
import { Sandbox } from "../../src/Sandbox/Sandbox.ts"
import { Resolutions } from "../../src/Store/Resolutions.ts"

/** A tracer that keeps every span's name and its parent's. */
const recording = () => {
  const spans: Array<{ readonly name: string; readonly parent: string | undefined }> = []
  const tracer = Tracer.make({
    span: (options) => {
      const parent = Option.getOrUndefined(options.parent)
      spans.push({ name: options.name, parent: parent?._tag === "Span" ? parent.name : undefined })
      return new Tracer.NativeSpan(options)
    }
  })
  return { spans, tracer }
}

describe("spans", () => {
  it.effect("Engines.specFor is a span inside its caller's", () =>
    Effect.gen(function* () {
      const { spans, tracer } = recording()
      const engines = yield* Engines.make()
      const spec = yield* engines
        .specFor({ engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 1_000 })
        .pipe(Effect.withSpan("caller"), Effect.withTracer(tracer))
      assert.strictEqual(spec.id.kind, "playwright")
      assert.deepInclude(spans, { name: "Engines.specFor", parent: "caller" })
    })
  )

  it.effect("Replay.around is a span, and the cascade it runs is inside it", () =>
    Effect.gen(function* () {
      const { spans, tracer } = recording()
      const context = yield* Layer.build(
        Layer.mergeAll(
          Layer.mock(Sandbox)({
            artifacts: {
              screenshotLater: () => Effect.void,
              settled: Effect.void,
              snapshot: () => Effect.succeed(Option.none())
            }
          }),
          Layer.mock(Engines.Engines)({}),
          Layer.mock(Resolutions)({})
        )
      )
      const replay = yield* Replay.make({ enabled: false, store: Context.get(context, Resolutions) }).pipe(
        Effect.provideContext(context)
      )
      const answered = yield* replay
        .around(
          { tool: "browser.extract", args: {} },
          Effect.succeed({ outcome: Result.succeed("done"), message: undefined }).pipe(Effect.withSpan("cascade"))
        )
        .pipe(Effect.withSpan("caller"), Effect.withTracer(tracer))
      assert.isFalse(answered.replayed)
      assert.deepInclude(spans, { name: "Replay.around", parent: "caller" })
      assert.deepInclude(spans, { name: "cascade", parent: "Replay.around" })
    })
  )
})
