/**
 * The breaker on virtual time: consecutive health failures of one engine open it for the cooldown, a success closes
 * it, engines are told apart by their label; and through the Cascade service, an agent's misses never open it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { Breaker, countsAgainst } from "../../src/Cascade/Breaker.ts"
import { Cascade } from "../../src/Cascade/Cascade.ts"
import { Engines } from "../../src/Cascade/Engines.ts"
import { type CascadeConfig, idOf } from "../../src/Cascade/Policy.ts"
import type { Engine } from "../../src/Engine/Engine.ts"
import { said } from "../../src/Engine/Instruction.ts"
import type { EngineId } from "../../src/EngineId.ts"
import { CdpClosed, EngineCoolingDown, LlmError, NotConfigured, Timeout, Unsupported } from "../../src/Errors/Engine.ts"
import {
  ActionFailed,
  AmbiguousTarget,
  ElementNotFound,
  InvalidInput,
  NavigationFailed,
  VerificationFailed
} from "../../src/Errors/Page.ts"
import { HumanInControl, PolicyRejected, SessionClosed, ShuttingDown } from "../../src/Errors/Service.ts"
import type { SwitchyardError } from "../../src/Errors.ts"
import * as Events from "../../src/Logging/Events.ts"
import { Sandbox } from "../../src/Sandbox/Sandbox.ts"

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

  it("counts engine health only: page-level failures and refusals never count", () => {
    const neutral: ReadonlyArray<SwitchyardError> = [
      new ElementNotFound({ target: 'button "Nope"', message: "no such button" }),
      new AmbiguousTarget({ target: 'link "More"', candidates: ["a", "b"], message: "two links" }),
      new InvalidInput({ message: "not in the grammar" }),
      new ActionFailed({ sideEffect: "none", message: "the page refused the click" }),
      new VerificationFailed({ expected: "a@b.c", actual: "", message: "the text went to another field" }),
      new NavigationFailed({ url: "http://127.0.0.1:9/", message: "connection refused" }),
      new Unsupported({ message: "no schema filling here" }),
      new NotConfigured({ message: "no key" }),
      new PolicyRejected({ field: "url", message: "scheme not allowed" }),
      new HumanInControl({ url: "http://127.0.0.1/vnc.html", message: "a person has the browser" }),
      new SessionClosed({ message: "closed" }),
      new ShuttingDown({ message: "stopping" })
    ]
    for (const error of neutral) assert.isFalse(countsAgainst(error), error.type)
    const health: ReadonlyArray<SwitchyardError> = [
      hang,
      new CdpClosed({ message: "socket closed" }),
      new LlmError({ status: 500, retryable: true, message: "model answered 500" })
    ]
    for (const error of health) assert.isTrue(countsAgainst(error), error.type)
  })

  it.effect("misses in between neither count nor reset the count", () =>
    Effect.gen(function* () {
      const breaker = yield* Breaker
      const miss = new ElementNotFound({ target: 'button "Nope"', message: "no such button" })
      for (let i = 0; i < 10; i++) yield* breaker.failure(dom, miss, limits)
      assert.isTrue(Option.isNone(yield* breaker.check(dom)), "ten misses")
      yield* breaker.failure(dom, hang, limits)
      yield* breaker.failure(dom, miss, limits)
      yield* breaker.failure(dom, hang, limits)
      assert.strictEqual(Option.getOrUndefined(yield* breaker.check(dom))?.failures, 2)
    }).pipe(Effect.provide(Breaker.layer))
  )
})

// ---------------------------------------------------------------------------------------------------------------
// Through the Cascade service: engines scripted per kind, the Sandbox a stub whose page never changes.

const grammar = { instructions: "grammar", actions: true, extract: "page-facts", observe: true, vision: false } as const

/** An engine whose every call answers what `script` says for its kind. */
const scripted = (id: EngineId, script: (id: EngineId) => Effect.Effect<unknown, SwitchyardError>) => {
  const run = <A>() => script(id) as Effect.Effect<A, SwitchyardError>
  return {
    kind: id.kind,
    capabilities: grammar,
    navigate: () => run(),
    act: () => run(),
    extract: () => run(),
    observe: () => run(),
    screenshot: () => run(),
    pageState: () => run(),
    connected: () => Effect.succeed(true)
  } satisfies Engine["Service"]
}

const cascade = (script: (id: EngineId) => Effect.Effect<unknown, SwitchyardError>) =>
  Layer.build(
    Cascade.layer.pipe(
      Layer.provide(
        Layer.succeed(
          Engines,
          Engines.of({
            specFor: (level) =>
              level.engine === "magnitude"
                ? Effect.fail(new NotConfigured({ engine: "magnitude", message: "no API key for magnitude" }))
                : Effect.succeed({ id: idOf(level), capabilities: grammar, layer: Layer.empty as never })
          })
        )
      ),
      Layer.provide(
        Layer.mock(Sandbox)({
          use: (spec, f) => f(scripted(spec.id, script)),
          mainFrame: Effect.succeed({ commits: 0 }),
          fingerprint: Effect.succeed("the same page"),
          artifacts: {
            screenshotLater: () => Effect.void,
            settled: Effect.void,
            snapshot: () => Effect.succeed(Option.none())
          }
        })
      )
    )
  ).pipe(Effect.map((context) => Context.get(context, Cascade)))

const config: CascadeConfig = {
  totalTimeoutMs: 60_000,
  retryBaseDelayMs: 0,
  maxFailures: 3,
  cooldownMs: 60_000,
  levels: [
    { engine: "stagehand", mode: "dom", retryCount: 1, timeoutPerAttemptMs: 1_000 },
    { engine: "magnitude", retryCount: 1, timeoutPerAttemptMs: 1_000 },
    { engine: "playwright", retryCount: 1, timeoutPerAttemptMs: 1_000 }
  ]
}

const act = (c: Cascade["Service"], calls: Array<string>) =>
  c
    .call({
      config,
      action: "browser.act",
      isAct: true,
      run: (engine) => Effect.sync(() => calls.push(engine.kind)).pipe(Effect.andThen(engine.act(said('click "Nope"'))))
    })
    .pipe(Effect.flip)

describe("Cascade breakers", () => {
  it.effect("misses never open a breaker, however many: every level keeps being tried once per call", () =>
    Effect.gen(function* () {
      const c = yield* cascade(() => Effect.fail(new ElementNotFound({ target: 'button "Nope"', message: "no Nope" })))
      const { events, sink } = Events.memory()
      const calls: Array<string> = []
      for (let i = 0; i < 5; i++) {
        const error = yield* act(c, calls).pipe(Effect.provideService(Events.Events, sink))
        assert.strictEqual(error.type, "element_not_found")
      }
      assert.deepStrictEqual(calls, Array.from({ length: 5 }, () => ["stagehand", "playwright"]).flat())
      assert.isFalse(events.some((e) => e.event === "level_skipped" && e.engine !== "magnitude"))
    })
  )

  it.effect("health failures open it: the call then answers engine_cooling_down with the time left, retryable", () =>
    Effect.gen(function* () {
      let sick = true
      const c = yield* cascade((id) =>
        sick
          ? Effect.fail(
              id.kind === "stagehand"
                ? new LlmError({ status: 500, retryable: true, message: "model answered 500" })
                : new CdpClosed({ message: "the page crashed" })
            )
          : Effect.succeed("done")
      )
      const calls: Array<string> = []
      // Two attempts per level and call: the second call trips both breakers (3 failures in a row).
      yield* act(c, calls)
      yield* act(c, calls)
      assert.lengthOf(calls, 8)
      const cooling = yield* act(c, calls)
      assert.lengthOf(calls, 8, "no engine was tried")
      assert.instanceOf(cooling, EngineCoolingDown)
      assert.isTrue(cooling.retryable)
      assert.strictEqual((cooling as EngineCoolingDown).retryAfterMs, 60_000)
      assert.include(cooling.message, "no API key for magnitude")

      yield* TestClock.adjust("45 seconds")
      assert.strictEqual(((yield* act(c, calls)) as EngineCoolingDown).retryAfterMs, 15_000)
      yield* TestClock.adjust("15 seconds")
      sick = false
      const served = yield* c.call({ config, action: "browser.act", isAct: true, run: (e) => e.act(said("x")) })
      assert.strictEqual(served as unknown, "done")
    })
  )
})
