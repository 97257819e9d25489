/**
 * The Router's agent-facing policy (seeds 000 and 004), with the cascade scripted: which levels a call reaches,
 * what the agent is told, and what state every answer carries.
 */
import { queryObjects } from "node:v8"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { Cascade, type CascadeCall } from "../../src/Cascade/Cascade.ts"
import { Engines } from "../../src/Cascade/Engines.ts"
import { Router, type RouterOptions } from "../../src/Cascade/Router.ts"
import { toolNames } from "../../src/Cascade/Tools.ts"
import type { Capabilities } from "../../src/Engine/Engine.ts"
import { EngineCoolingDown, LlmError, NotConfigured, Unsupported } from "../../src/Errors/Engine.ts"
import type { SwitchyardError } from "../../src/Errors.ts"
import { idleStatus, Sandbox, type SandboxStatus } from "../../src/Sandbox/Sandbox.ts"

const llm: Capabilities = {
  instructions: "natural-language",
  actions: true,
  extract: "any-schema",
  observe: true,
  vision: false
}
const grammar: Capabilities = {
  instructions: "grammar",
  actions: true,
  extract: "page-facts",
  observe: true,
  vision: false,
  references: true
}

interface Script {
  /** What the Stagehand levels do, call by call. */
  readonly stagehand: Array<SwitchyardError | "ok" | "defect">
  readonly calls: Array<{ levels: string; action: string; budgetMs?: number }>
  /** Virtual time each Stagehand cascade takes. */
  readonly stagehandMs?: number
}

const status: SandboxStatus = idleStatus

const router = (script: Script, options: RouterOptions = {}) => {
  const cascade = Layer.succeed(
    Cascade,
    Cascade.of({
      call: <A>(call: CascadeCall<A>) =>
        Effect.suspend((): Effect.Effect<A, SwitchyardError> => {
          const levels = call.config.levels.map((l) => (l.mode ? `${l.engine}:${l.mode}` : l.engine)).join(",")
          script.calls.push({ levels, action: call.action, budgetMs: call.config.totalTimeoutMs })
          if (call.config.levels.every((l) => l.engine === "stagehand")) {
            const next = script.stagehand.shift() ?? "ok"
            return Effect.sleep(script.stagehandMs ?? 0).pipe(
              Effect.andThen(
                next === "ok"
                  ? Effect.succeed("stagehand served" as A)
                  : next === "defect"
                    ? Effect.die(new TypeError("cannot read properties of undefined (reading 'frame')"))
                    : Effect.fail(next)
              )
            )
          }
          if (call.action === "browser.extract") {
            return Effect.fail(
              new Unsupported({ engine: "playwright", message: "the playwright engine fills page-fact schemas only" })
            )
          }
          return Effect.succeed("fallback served" as A)
        })
    })
  )
  const engines = Layer.succeed(
    Engines,
    Engines.of({
      specFor: (level) =>
        level.engine === "stagehand"
          ? Effect.succeed({
              id: { kind: "stagehand", mode: level.mode ?? "dom" },
              capabilities: llm,
              layer: Layer.empty as never
            })
          : level.engine === "playwright"
            ? Effect.succeed({ id: { kind: "playwright" }, capabilities: grammar, layer: Layer.empty as never })
            : Effect.fail(new NotConfigured({ engine: level.engine, message: `no key for ${level.engine}` }))
    })
  )
  const sandbox = Layer.mock(Sandbox)({
    status: Effect.succeed(status),
    close: Effect.void,
    openDialog: Effect.succeedNone,
    events: Effect.succeed([]),
    page: Effect.succeed({ tabs: [], dialog: null, downloads: [] }),
    artifacts: {
      screenshotLater: () => Effect.void,
      settled: Effect.void,
      snapshot: () => Effect.succeed(Option.none())
    }
  })
  return Layer.build(Router.layer(options).pipe(Layer.provide([cascade, engines, sandbox]))).pipe(
    Effect.map((context) => Context.get(context, Router))
  )
}

const flaky = (message = "model answered 500") =>
  new LlmError({ engine: "stagehand", status: 500, retryable: true, message })

describe("Router", () => {
  it.effect("one-shot request: retry Stagehand once, then disable it and answer from the fallback", () =>
    Effect.gen(function* () {
      const script: Script = { stagehand: [flaky("first"), flaky("second")], calls: [] }
      const r = yield* router(script)
      const meta = { traceId: "trace-1" }

      const first = yield* r.call("browser.act", { instruction: 'click "Apply"' }, meta)
      assert.isFalse(first.ok)
      assert.strictEqual(first.message, "Stagehand failed: first. Try Stagehand once more.")
      assert.strictEqual(first.error?.type, "llm_error")
      assert.isUndefined(first.state.disabled, "no engine disabled: not said")

      const second = yield* r.call("browser.act", { instruction: 'click "Apply"' }, meta)
      assert.isTrue(second.ok)
      assert.strictEqual<unknown>(second.result, "fallback served")
      assert.strictEqual(second.message, "Stagehand failed again: second. Using fallback tools now.")
      assert.deepStrictEqual(second.state.disabled, ["stagehand"])

      const third = yield* r.call("browser.navigate", { url: "https://example.test/" }, meta)
      assert.strictEqual<unknown>(third.result, "fallback served")
      assert.isUndefined(third.message)
      assert.deepStrictEqual(
        script.calls.map((c) => c.levels),
        [
          "stagehand:dom,stagehand:cua",
          "stagehand:dom,stagehand:cua",
          "magnitude,playwright,human",
          "magnitude,playwright,human"
        ]
      )
      assert.deepStrictEqual(
        [first.attemptId, second.attemptId, third.attemptId],
        ["trace-1#1", "trace-1#2", "trace-1#3"]
      )
    })
  )

  it.effect("multi-step flow: each step has its own retry and disable state", () =>
    Effect.gen(function* () {
      const script: Script = { stagehand: [flaky(), flaky(), "ok"], calls: [] }
      const r = yield* router(script)
      yield* r.call("browser.act", { instruction: "x" }, { traceId: "t", stepId: "s1" })
      const disabled = yield* r.call("browser.act", { instruction: "x" }, { traceId: "t", stepId: "s1" })
      assert.deepStrictEqual(disabled.state.disabled, ["stagehand"])
      const otherStep = yield* r.call("browser.act", { instruction: "x" }, { traceId: "t", stepId: "s2" })
      assert.strictEqual<unknown>(otherStep.result, "stagehand served")
      assert.isUndefined(otherStep.state.disabled)
      assert.strictEqual(otherStep.stepId, "s2")
      assert.strictEqual(otherStep.attemptId, "t/s2#1")
      const sameStepLater = yield* r.call("browser.act", { instruction: "x" }, { traceId: "t", stepId: "s1" })
      assert.strictEqual<unknown>(sameStepLater.result, "fallback served")
    })
  )

  it.effect("a call the fallback cannot serve names the engines that could (mask, don't remove)", () =>
    Effect.gen(function* () {
      const script: Script = { stagehand: [flaky(), flaky()], calls: [] }
      const r = yield* router(script)
      const meta = { traceId: "t" }
      yield* r.call("browser.act", { instruction: "x" }, meta)
      yield* r.call("browser.act", { instruction: "x" }, meta)
      const masked = yield* r.call("browser.extract", { instruction: "salary", schema: { type: "object" } }, meta)
      assert.isFalse(masked.ok)
      assert.strictEqual(masked.error?.type, "unsupported")
      assert.deepStrictEqual(masked.error?.servableBy, [
        "stagehand:dom (disabled for this request after two failures)",
        "stagehand:cua (disabled for this request after two failures)"
      ])
      // The tool list itself never changes.
      const { state } = yield* r.call("browser.status", {}, meta)
      assert.isDefined(state.tools)
      const listed = [...state.tools.available, ...Object.keys(state.tools.masked)].sort()
      assert.deepStrictEqual(listed, [...toolNames].sort())
    })
  )

  it.effect("a non-retryable Stagehand failure goes to the fallback at once", () =>
    Effect.gen(function* () {
      const script: Script = {
        stagehand: [new LlmError({ engine: "stagehand", status: 401, retryable: false, message: "bad key" })],
        calls: []
      }
      const r = yield* router(script)
      const answer = yield* r.call("browser.act", { instruction: "x" }, { traceId: "t" })
      assert.isTrue(answer.ok)
      assert.strictEqual(answer.message, "Stagehand failed again: bad key. Using fallback tools now.")
    })
  )

  it.effect("Stagehand resting behind an open breaker earns no retry: the fallback answers at once", () =>
    Effect.gen(function* () {
      const resting = new EngineCoolingDown({
        engine: "stagehand",
        label: "stagehand:dom",
        failures: 3,
        retryAfterMs: 42_000,
        message: "stagehand:dom is cooling down after 3 consecutive failures; it is tried again in 42 s"
      })
      const script: Script = { stagehand: [resting], calls: [] }
      const r = yield* router(script)
      const answer = yield* r.call("browser.act", { instruction: "x" }, { traceId: "t" })
      assert.isTrue(answer.ok, JSON.stringify(answer.error))
      assert.strictEqual<unknown>(answer.result, "fallback served")
    })
  )

  it.effect("the fallback gets what Stagehand left of the call's budget, and no fallback runs once it is spent", () =>
    Effect.gen(function* () {
      const fatal = () => new LlmError({ engine: "stagehand", status: 401, retryable: false, message: "bad key" })
      const run = (stagehandMs: number) =>
        Effect.gen(function* () {
          const script: Script = { stagehand: [fatal()], calls: [], stagehandMs }
          const r = yield* router(script)
          const fiber = yield* Effect.forkChild(r.call("browser.act", { instruction: "x" }, { traceId: "t" }))
          yield* TestClock.adjust(stagehandMs)
          return { answer: yield* Fiber.join(fiber), script }
        })
      const partly = yield* run(120_000)
      assert.isTrue(partly.answer.ok)
      assert.deepStrictEqual(
        partly.script.calls.map((c) => c.budgetMs),
        [300_000, 180_000]
      )
      const spent = yield* run(300_000)
      assert.isFalse(spent.answer.ok)
      assert.strictEqual(spent.answer.error?.type, "llm_error")
      assert.match(spent.answer.message ?? "", /used its whole budget/)
      assert.strictEqual(spent.script.calls.length, 1, "no fallback cascade after the budget is spent")
    })
  )

  it.effect("with fallback switched off, Stagehand's errors are final", () =>
    Effect.gen(function* () {
      const script: Script = { stagehand: [flaky("one"), flaky("two")], calls: [] }
      const r = yield* router(script, { fallback: false })
      yield* r.call("browser.act", { instruction: "x" }, { traceId: "t" })
      const second = yield* r.call("browser.act", { instruction: "x" }, { traceId: "t" })
      assert.isFalse(second.ok)
      assert.strictEqual(second.error?.message, "two")
      assert.isTrue(script.calls.every((c) => c.levels.startsWith("stagehand")))
    })
  )

  it.effect("bad input gets a clear error naming what was wrong, with the state block", () =>
    Effect.gen(function* () {
      const r = yield* router({ stagehand: [], calls: [] })
      const unknown = yield* r.call("browser.teleport", {}, { traceId: "t" })
      assert.deepInclude(unknown.error!, { type: "invalid_input", field: "tool", retryable: false })
      assert.include(unknown.error!.message, "browser.navigate")
      const bad = yield* r.call("browser.navigate" as string, { url: 7 }, { traceId: "t" })
      assert.deepInclude(bad.error!, { type: "invalid_input", field: "arguments" })
      assert.include(bad.error!.message, "url")
      assert.isDefined(unknown.state.tools)
      assert.deepStrictEqual(unknown.state.tools.masked["browser.handoff"]?.startsWith("no person"), true)
      assert.isUndefined(bad.state.tools, "the tools did not change since the previous answer: not repeated")
      assert.isDefined(unknown.state.tabs)
      assert.isUndefined(bad.state.tabs, "nor the tabs")
      assert.isUndefined(bad.state.downloads, "nor the downloads")
      assert.isUndefined(bad.state.dialog, "no dialog open: not said")
      const status = yield* r.call("browser.status", {}, { traceId: "t" })
      assert.deepStrictEqual(status.state.tools, unknown.state.tools, "browser.status always says them")
      assert.deepStrictEqual(status.state.tabs, unknown.state.tabs)
      assert.strictEqual(status.state.dialog, null)
    })
  )

  it.effect(
    "a defect in a call is answered at once as a typed internal error, and the session's next call is served",
    () =>
      Effect.gen(function* () {
        const script: Script = { stagehand: ["defect", "ok"], calls: [] }
        const r = yield* router(script, { fallback: false })
        const failed = yield* r.call("browser.act", { instruction: "click the first job" }, { traceId: "t-defect" })
        assert.isFalse(failed.ok)
        assert.strictEqual(failed.error?.type, "internal")
        assert.isFalse(failed.error?.retryable)
        assert.strictEqual(failed.error?.sideEffect, "possible", "an act may have acted before the defect")
        assert.include(failed.error?.message, "t-defect")
        assert.isDefined(failed.state, "the answer still carries the state block")
        const next = yield* r.call("browser.act", { instruction: "click the first job" }, { traceId: "t-next" })
        assert.isTrue(next.ok)
        assert.strictEqual(next.result as unknown, "stagehand served")
      })
  )

  it.effect("a one-shot call without a traceId gets one of its own", () =>
    Effect.gen(function* () {
      const r = yield* router({ stagehand: ["ok"], calls: [] })
      const answer = yield* r.call("browser.observe", { instruction: "Apply button" })
      assert.isTrue(answer.ok)
      assert.match(answer.traceId, /^[0-9a-f-]{36}$/)
      assert.strictEqual(answer.attemptId, `${answer.traceId}#1`)
    })
  )

  it.effect("an act on an element reference goes to the engine that hands references out, never to Stagehand", () =>
    Effect.gen(function* () {
      const script: Script = { stagehand: [flaky("would fail")], calls: [] }
      const r = yield* router(script)
      const meta = { traceId: "refs" }
      const byRef = yield* r.call("browser.act", { ref: "e12", method: "fill", arguments: ["Ada"] }, meta)
      assert.isTrue(byRef.ok, JSON.stringify(byRef.error))
      const replayed = yield* r.call(
        "browser.act",
        { action: { selector: "aria-ref=f2e5", method: "click", arguments: [], description: 'button "Next"' } },
        meta
      )
      assert.isTrue(replayed.ok)
      const plain = yield* r.call("browser.act", { instruction: 'click "Next"' }, meta)
      assert.isFalse(plain.ok, "a plain instruction still goes to Stagehand first")
      assert.deepStrictEqual(
        script.calls.map((c) => c.levels),
        ["magnitude,playwright,human", "magnitude,playwright,human", "stagehand:dom,stagehand:cua"]
      )
      assert.isUndefined(byRef.state.disabled, "a reference never costs Stagehand its retry")
    })
  )

  it.effect("a reference on a cascade without a level that understands references is refused, not guessed at", () =>
    Effect.gen(function* () {
      const script: Script = { stagehand: [], calls: [] }
      const stagehandOnly = {
        totalTimeoutMs: 60_000,
        levels: [{ engine: "stagehand" as const, mode: "dom" as const, retryCount: 0, timeoutPerAttemptMs: 10_000 }]
      }
      const r = yield* router(script, { policy: { default: stagehandOnly } })
      const answer = yield* r.call("browser.act", { ref: "e12" }, { traceId: "no-refs" })
      assert.strictEqual(answer.error?.type, "unsupported")
      assert.include(answer.error?.message, "element references")
      assert.deepStrictEqual(script.calls, [])
    })
  )

  it.effect(
    "the page's facts (an extract with no instruction) are read only by a level that reads them without a model",
    () =>
      Effect.gen(function* () {
        const script: Script = { stagehand: ["ok"], calls: [] }
        const r = yield* router(script)
        yield* r.call("browser.extract", {}, { traceId: "facts" })
        yield* r.call("browser.extract", { instruction: "the job title" }, { traceId: "asked" })
        assert.deepStrictEqual(
          script.calls.map((c) => c.levels),
          ["magnitude,playwright,human", "stagehand:dom,stagehand:cua"]
        )
        const stagehandOnly = {
          totalTimeoutMs: 60_000,
          levels: [{ engine: "stagehand" as const, mode: "dom" as const, retryCount: 0, timeoutPerAttemptMs: 10_000 }]
        }
        const none = yield* (yield* router(script, { policy: { default: stagehandOnly } })).call(
          "browser.extract",
          {},
          { traceId: "no-facts" }
        )
        assert.strictEqual(none.error?.type, "unsupported")
        assert.include(none.error?.message, "instruction")
      })
  )

  it.effect("calls without a traceId leave none of their fibers behind in the Router", () =>
    Effect.gen(function* () {
      const r = yield* router({ stagehand: [], calls: [] })
      const fiberClass = (yield* Effect.forkChild(Effect.void)).constructor
      // queryObjects collects garbage first: what it counts is held.
      const fibers = () => queryObjects(fiberClass, { format: "count" }) as number
      yield* r.call("browser.observe", { instruction: "Apply button" })
      const before = fibers()
      for (let i = 0; i < 300; i++) yield* r.call("browser.observe", { instruction: "Apply button" })
      assert.isBelow(fibers() - before, 30, "fibers held after 300 calls, each on a trace of its own")
    })
  )

  it.effect("a trace's attempts are numbered on while it is among the 2,000 most recently used", () =>
    Effect.gen(function* () {
      const r = yield* router({ stagehand: [], calls: [] })
      const observe = (traceId: string) => r.call("browser.observe", { instruction: "Apply button" }, { traceId })
      yield* observe("kept")
      yield* observe("dropped")
      for (let i = 0; i < 1_998; i++) yield* observe(`other-${i}`)
      assert.strictEqual((yield* observe("kept")).attemptId, "kept#2")
      yield* observe("newest")
      assert.strictEqual((yield* observe("dropped")).attemptId, "dropped#1", "the least recently used is forgotten")
    })
  )
})
