/**
 * The Stagehand engine in cua mode: a scripted computer-use model (Anthropic Messages `tool_use`, OpenAI Responses
 * `computer_call`) clicks and types at coordinates of real elements, and the page is read back over raw CDP. The
 * worker that hosts the SDK must stop when a call is interrupted, and faults must come back typed without retries.
 */
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { said } from "../../src/Engine/Instruction.ts"
import type { ModelConfig } from "../../src/Engine/Model.ts"
import type { PageFacts } from "../../src/Engine/PageFacts.ts"
import type { StagehandEngineOptions } from "../../src/Engine/Stagehand/Options.ts"
import * as StagehandEngine from "../../src/Engine/StagehandEngine.ts"
import * as ComputerUse from "../fixtures/ComputerUse.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { isAlive } from "../support/Processes.ts"
import * as TestBrowser from "../support/TestBrowser.ts"
import { waitFor } from "../support/Wait.ts"

class Site extends Context.Service<Site, SiteServer.SiteServer>()("test/Site") {}

const evaluate = <A>(expression: string) =>
  Effect.gen(function* () {
    const session = yield* BrowserSession
    return yield* Session.evaluate<A>(session.wsEndpoint, session.targetId, expression)
  })
const byId = (id: string) => `document.getElementById(${JSON.stringify(id)})`
const textOf = (id: string) => evaluate<string>(`${byId(id)}.textContent`)
/** The viewport centre of an element, where a person (or a computer-use model) would click it. */
const centre = (id: string) =>
  evaluate<[number, number]>(
    `(() => { const r = ${byId(id)}.getBoundingClientRect(); return [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)] })()`
  )

/** `reply` after a real delay (LlmServer's delayed-reply shape). */
// biome-ignore lint/suspicious/noThenProperty: LlmServer names the delayed reply `then`
const later = (delayMs: number, reply: LlmServer.Reply): LlmServer.Reply => ({ delayMs, then: reply })

const pngSize = (png: Uint8Array) => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

const anthropic = (llm: LlmServer.LlmServer): ModelConfig => ({
  stagehandCua: "anthropic/claude-sonnet-4-5-20250929",
  apiKeys: { anthropic: Redacted.make("ak-test") },
  baseURLs: { anthropic: llm.origin }
})
const openai = (llm: LlmServer.LlmServer): ModelConfig => ({
  stagehandCua: "openai/computer-use-preview",
  apiKeys: { openai: Redacted.make("sk-test") },
  baseURLs: { openai: `${llm.origin}/v1` }
})

/** Runs `f` with a cua-mode engine on the session, connected for `f` only. */
const withCua = <A, E, R>(
  model: ModelConfig,
  f: (engine: Engine["Service"]) => Effect.Effect<A, E, R>,
  options: StagehandEngineOptions = {}
) =>
  Effect.gen(function* () {
    return yield* f(yield* Engine)
  }).pipe(Effect.provide(StagehandEngine.layer({ mode: "cua", model, waitBetweenActionsMs: 1, ...options })))

const expectTag = <E extends { readonly _tag: string }, T extends E["_tag"]>(error: E, tag: T) => {
  if (error._tag !== tag) assert.fail(`expected ${tag}, got ${error._tag}: ${JSON.stringify(error)}`)
  return error as Extract<E, { readonly _tag: T }>
}

/** Where the form's email field and Submit button are, once the engine has set the viewport. */
const formTargets = Effect.gen(function* () {
  return { email: yield* centre("email"), submit: yield* centre("submit") }
})

const browserAndSite = Layer.mergeAll(TestBrowser.layer(), Layer.effect(Site, SiteServer.start))

layer(browserAndSite, { excludeTestServices: true, timeout: "60 seconds" })("StagehandEngine (cua)", (it) => {
  it.effect("Anthropic computer use clicks and types at real coordinates until the form is submitted", () =>
    Effect.gen(function* () {
      const site = yield* Site
      let targets = { email: [0, 0] as [number, number], submit: [0, 0] as [number, number] }
      const llm = yield* LlmServer.start((request) => {
        if (!request.path.startsWith("/v1/messages")) return undefined
        switch (ComputerUse.anthropicToolResults(request)) {
          case 0:
            return { json: ComputerUse.anthropicToolUse({ action: "left_click", coordinate: targets.email }) }
          case 1:
            return { json: ComputerUse.anthropicToolUse({ action: "type", text: "ada@example.com" }) }
          case 2:
            return { json: ComputerUse.anthropicToolUse({ action: "left_click", coordinate: targets.submit }) }
          default:
            return { json: ComputerUse.anthropicDone("I submitted the form.") }
        }
      })
      yield* withCua(anthropic(llm), (engine) =>
        Effect.gen(function* () {
          assert.strictEqual(engine.mode, "cua")
          assert.deepStrictEqual(engine.capabilities, StagehandEngine.capabilities.cua)
          yield* engine.navigate(site.url("/forms.html"))
          targets = yield* formTargets
          const result = yield* engine.act(said("sign up with ada@example.com"))
          assert.strictEqual(result.description, "I submitted the form.")
          assert.isTrue(yield* engine.connected())
        })
      )
      assert.strictEqual(yield* textOf("status"), "Submitted ada@example.com")
      assert.lengthOf(llm.requests, 4)
      const first = llm.requests[0]!
      assert.strictEqual(first.path, "/v1/messages?beta=true")
      assert.strictEqual(first.headers["x-api-key"], "ak-test")
      assert.strictEqual(first.body.model, "claude-sonnet-4-5-20250929")
      assert.deepStrictEqual(ComputerUse.anthropicDisplay(first), {
        width: 1288,
        height: 711,
        type: "computer_20250124"
      })
      const screenshot = ComputerUse.anthropicLastScreenshot(llm.requests[3]!)
      assert.deepStrictEqual(pngSize(screenshot!), { width: 1288, height: 711 }, "the model sees what it was told")
    })
  )

  it.effect("OpenAI computer use drives the same form through computer_call", () =>
    Effect.gen(function* () {
      const site = yield* Site
      let targets = { email: [0, 0] as [number, number], submit: [0, 0] as [number, number] }
      const llm = yield* LlmServer.start((request, index) => {
        if (request.path !== "/v1/responses") return undefined
        // Each turn sends only its new call output (earlier turns ride on previous_response_id): count requests.
        switch (index) {
          case 0:
            return { json: ComputerUse.openAiComputerCall({ type: "click", x: targets.email[0], y: targets.email[1] }) }
          case 1:
            return { json: ComputerUse.openAiComputerCall({ type: "type", text: "grace@example.com" }) }
          case 2:
            return {
              json: ComputerUse.openAiComputerCall({ type: "click", x: targets.submit[0], y: targets.submit[1] })
            }
          default:
            return { json: ComputerUse.openAiDone("Done: the form is submitted.") }
        }
      })
      yield* withCua(openai(llm), (engine) =>
        Effect.gen(function* () {
          yield* engine.navigate(site.url("/forms.html"))
          targets = yield* formTargets
          const result = yield* engine.act(said("sign up with grace@example.com"))
          assert.strictEqual(result.description, "Done: the form is submitted.")
        })
      )
      assert.strictEqual(yield* textOf("status"), "Submitted grace@example.com")
      assert.lengthOf(llm.requests, 4)
      assert.deepStrictEqual(llm.requests.map(ComputerUse.openAiCallOutputs), [0, 1, 1, 1])
      assert.strictEqual(llm.requests[0]!.headers.authorization, "Bearer sk-test")
      assert.strictEqual(llm.requests[0]!.body.model, "computer-use-preview")
      assert.deepInclude(ComputerUse.openAiDisplay(llm.requests[0]!)!, { width: 1288, height: 711 })
      assert.deepStrictEqual(pngSize(ComputerUse.openAiLastScreenshot(llm.requests[3]!)!), { width: 1288, height: 711 })
    })
  )

  it.effect("model-free calls in cua mode: Actions, page facts, screenshots; observe is unsupported", () =>
    Effect.gen(function* () {
      const site = yield* Site
      const session = yield* BrowserSession
      yield* Session.navigate(session.wsEndpoint, session.targetId, "about:blank")
      const llm = yield* LlmServer.start()
      yield* withCua(anthropic(llm), (engine) =>
        Effect.gen(function* () {
          const blank = yield* Effect.flip(engine.act(said("click something")))
          assert.strictEqual(expectTag(blank, "InvalidInput").retryable, false, "no trip to www.google.com")
          yield* engine.navigate(site.url("/forms.html"))
          const typed = yield* engine.act({
            selector: "#email",
            method: "fill",
            arguments: ["x@example.com"],
            description: "Email"
          })
          // The Action's target is read back in the worker, as on the playwright level.
          assert.deepInclude(typed.target, { ref: "#email", role: "textbox", name: "Email", value: "x@example.com" })
          yield* engine.act({ selector: "#submit", method: "click", arguments: [], description: "Submit" })
          assert.strictEqual(yield* textOf("status"), "Submitted x@example.com")
          expectTag(
            yield* Effect.flip(engine.act({ selector: "#nope", method: "click", arguments: [], description: "" })),
            "ElementNotFound"
          )

          const facts = (yield* engine.extract("the page")) as PageFacts
          assert.strictEqual(facts.title, "Sign up")
          assert.deepInclude(facts.fields, { label: "Email", name: "email", type: "email", value: "x@example.com" })
          const filled = yield* engine.extract("the name", {
            type: "object",
            properties: { title: { type: "string" }, fullname: { type: "string" } }
          })
          assert.deepStrictEqual(filled, { title: "Sign up", fullname: "Ada Lovelace" })
          const unfillable = expectTag(
            yield* Effect.flip(engine.extract("x", { type: "object", properties: { mood: { type: "string" } } })),
            "Unsupported"
          )
          assert.include(unfillable.message, "cua mode")
          expectTag(yield* Effect.flip(engine.observe(said("the submit button"))), "Unsupported")

          assert.deepStrictEqual(pngSize(yield* engine.screenshot()), { width: 1288, height: 711 })
          const state = yield* engine.pageState()
          assert.strictEqual(state.url, site.url("/forms.html"))
          assert.strictEqual(state.title, "Sign up")
        })
      )
      assert.lengthOf(llm.requests, 0)
    })
  )

  it.effect("model errors: 500 retryable and 401 not, each after exactly one request", () =>
    Effect.gen(function* () {
      const site = yield* Site
      const llm = yield* LlmServer.start()
      yield* withCua(anthropic(llm), (engine) =>
        Effect.gen(function* () {
          yield* engine.navigate(site.url("/forms.html"))
          for (const [status, retryable] of [
            [500, true],
            [429, true],
            [401, false]
          ] as const) {
            const before = llm.requests.length
            const started = Date.now()
            llm.faultNext({ status, error: `scripted ${status}` })
            const error = expectTag(yield* Effect.flip(engine.act(said("click submit"))), "LlmError")
            assert.strictEqual(error.status, status)
            assert.strictEqual(error.retryable, retryable)
            assert.strictEqual(error.provider, "anthropic")
            assert.strictEqual(error.sideEffect, "none")
            assert.strictEqual(llm.requests.length - before, 1, `no hidden SDK retries for ${status}`)
            assert.isBelow(Date.now() - started, 3_000)
          }
          llm.faultNext({ raw: "{not json" })
          expectTag(yield* Effect.flip(engine.act(said("click submit"))), "LlmBadResponse")
          assert.isTrue(yield* engine.connected())
        })
      )
    })
  )

  it.effect(
    "a hanging model is stopped by a timeout: the worker ends, the request is aborted, the engine says so",
    () =>
      Effect.gen(function* () {
        const site = yield* Site
        const llm = yield* LlmServer.start(() => ({ hang: true }))
        yield* withCua(anthropic(llm), (engine) =>
          Effect.gen(function* () {
            yield* engine.navigate(site.url("/forms.html"))
            const started = Date.now()
            const error = yield* Effect.flip(engine.act(said("click submit")).pipe(Effect.timeout("1500 millis")))
            assert.strictEqual(error._tag, "TimeoutError")
            assert.isBelow(Date.now() - started, 2_500)
            assert.isTrue(yield* Effect.promise(() => waitFor(() => llm.pending() === 0, 3_000)), "request aborted")
            assert.lengthOf(llm.requests, 1)
            assert.isFalse(yield* engine.connected(), "the Sandbox will connect a fresh engine")
            expectTag(yield* Effect.flip(engine.pageState()), "NotInitialized")
          })
        )
        // The engine's own task limit gives a typed Timeout.
        const timeout = yield* withCua(anthropic(llm), (engine) => Effect.flip(engine.act(said("click submit"))), {
          taskTimeoutMs: 1_000
        })
        assert.strictEqual(expectTag(timeout, "Timeout").timeoutMs, 1_000)
        assert.isTrue(yield* Effect.promise(() => waitFor(() => llm.pending() === 0, 3_000)))
      })
  )

  it.effect("a browser killed mid-task fails the call with CdpClosed within 2 s", () =>
    Effect.gen(function* () {
      const site = yield* Site
      const scope = yield* Scope.make()
      const session = yield* TestBrowser.launchSession().pipe(Scope.provide(scope))
      let killedAt = 0
      const llm = yield* LlmServer.start(() => {
        process.kill(session.pid!, "SIGKILL")
        killedAt = Date.now()
        // The click arrives after the socket closed (Stagehand alone may then even report success).
        return later(300, { json: ComputerUse.anthropicToolUse({ action: "left_click", coordinate: [10, 10] }) })
      })
      const outcome = yield* withCua(anthropic(llm), (engine) =>
        Effect.gen(function* () {
          yield* engine.navigate(site.url("/forms.html"))
          const error = yield* Effect.flip(engine.act(said("click submit")))
          return { error, failedAt: Date.now(), connected: yield* engine.connected() }
        })
      ).pipe(Effect.provideService(BrowserSession, session))
      expectTag(outcome.error, "CdpClosed")
      assert.isBelow(outcome.failedAt - killedAt, 2_000)
      assert.isFalse(outcome.connected)
      yield* Scope.close(scope, Exit.void)
    })
  )

  it.effect("no computer-use credentials or provider: not_configured before any worker or request", () =>
    Effect.gen(function* () {
      const llm = yield* LlmServer.start()
      const noKey = yield* Effect.flip(
        withCua({ stagehandCua: "anthropic/claude-sonnet-4-5-20250929" }, () => Effect.void).pipe(
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({})))
        )
      )
      assert.include(expectTag(noKey, "NotConfigured").message, "ANTHROPIC_API_KEY")
      const noProvider = yield* Effect.flip(
        withCua({ stagehandCua: "mistral/large", apiKeys: { mistral: Redacted.make("k") } }, () => Effect.void)
      )
      assert.include(expectTag(noProvider, "NotConfigured").message, "anthropic, openai, google")
      assert.lengthOf(llm.requests, 0)
    })
  )

  it.effect("releasing the engine only disconnects: the browser keeps running", () =>
    Effect.gen(function* () {
      const session = yield* BrowserSession
      const site = yield* Site
      const llm = yield* LlmServer.start()
      yield* withCua(openai(llm), (engine) => engine.navigate(site.url("/plain.html")))
      assert.isTrue(isAlive(session.pid!))
      assert.strictEqual((yield* CdpHttp.version(session.httpEndpoint)).webSocketDebuggerUrl, session.wsEndpoint)
      assert.strictEqual(yield* evaluate<string>("location.pathname"), "/plain.html")
    })
  )
})
