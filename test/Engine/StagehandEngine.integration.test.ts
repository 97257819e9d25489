/**
 * The Stagehand engine in dom mode against a real Chromium, the fixture sites and a scripted OpenAI-compatible
 * server that answers from the accessibility tree in the prompt. Page effects are read back over a separate raw CDP
 * connection; faults (error statuses, bad bodies, hangs, a killed browser) must come back typed and quickly.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import { type Action, Engine } from "../../src/Engine/Engine.ts"
import { said } from "../../src/Engine/Instruction.ts"
import * as PlaywrightEngine from "../../src/Engine/PlaywrightEngine.ts"
import * as Errors from "../../src/Engine/Stagehand/Errors.ts"
import type { StagehandEngineOptions } from "../../src/Engine/Stagehand/Options.ts"
import * as StagehandEngine from "../../src/Engine/StagehandEngine.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { freePort } from "../support/Ports.ts"
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
const inputValue = (id: string) => evaluate<string>(`${byId(id)}.value`)
const textOf = (id: string) => evaluate<string>(`${byId(id)}.textContent`)
/** Puts the session's page on a fixture page without any engine. */
const reset = (path: string) =>
  Effect.gen(function* () {
    const session = yield* BrowserSession
    const site = yield* Site
    yield* Session.navigate(session.wsEndpoint, session.targetId, site.url(path))
  })

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const pngSize = (png: Uint8Array) => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

// --- the scripted model ------------------------------------------------------------------------------------------

type Kind = "act" | "observe" | "extract" | "extract-metadata"

/** Which Stagehand call a chat request serves, told apart by the response_format schema's properties. */
const kindOf = (request: LlmServer.LlmRequest): Kind => {
  const properties = Object.keys(LlmServer.requestedSchema(request)?.properties ?? {})
  if (properties.includes("action") && properties.includes("twoStep")) return "act"
  if (properties.length === 1 && properties[0] === "elements") return "observe"
  if (properties.length === 2 && properties.includes("progress") && properties.includes("completed")) {
    return "extract-metadata"
  }
  return "extract"
}

/** The element id of the accessibility-tree line `[0-53] role: name` in the prompt. */
const elementId = (request: LlmServer.LlmRequest, role: string, name: string) => {
  const escaped = `${role}: ${name}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const match = new RegExp(`\\[(\\d+-\\d+)\\] ${escaped}(?:\\s|$)`, "m").exec(LlmServer.promptText(request))
  if (match === null) throw new Error(`no "${role}: ${name}" in the prompt's tree`)
  return match[1]!
}

/** The instruction an act request carries. */
const actInstruction = (request: LlmServer.LlmRequest) =>
  /given the following action: (.*?)\.\s/s.exec(LlmServer.promptText(request))?.[1] ?? ""

const answer = (value: unknown): LlmServer.Reply => ({ json: LlmServer.chatCompletion(JSON.stringify(value)) })

/** `reply` after a real delay (LlmServer's delayed-reply shape). */
// biome-ignore lint/suspicious/noThenProperty: LlmServer names the delayed reply `then`
const later = (delayMs: number, reply: LlmServer.Reply): LlmServer.Reply => ({ delayMs, then: reply })

const element = (
  request: LlmServer.LlmRequest,
  role: string,
  name: string,
  method: string,
  args: ReadonlyArray<string>
) => ({ elementId: elementId(request, role, name), description: `${role} ${name}`, method, arguments: args })

/** Answers act requests for the sign-up form: fill the email field, click Submit, or nothing. */
const formScript: LlmServer.Script = (request) => {
  if (kindOf(request) !== "act") return undefined
  const instruction = actInstruction(request).toLowerCase()
  if (instruction.includes("email")) {
    return answer({ action: element(request, "textbox", "Email", "fill", ["ada@example.com"]), twoStep: false })
  }
  if (instruction.includes("submit")) {
    return answer({ action: element(request, "button", "Submit", "click", []), twoStep: false })
  }
  return answer({ action: null, twoStep: false })
}

/** Answers act requests for the application details page: a word into the ZIP field, a click on the terms box. */
const checksScript: LlmServer.Script = (request) => {
  if (kindOf(request) !== "act") return undefined
  const instruction = actInstruction(request).toLowerCase()
  if (instruction.includes("zip")) {
    return answer({ action: element(request, "textbox", "ZIP code", "fill", ["ABCDE"]), twoStep: false })
  }
  if (instruction.includes("terms")) {
    return answer({ action: element(request, "checkbox", "I accept the terms", "click", []), twoStep: false })
  }
  return answer({ action: null, twoStep: false })
}

const modelFor = (llm: LlmServer.LlmServer) => ({
  model: "openai/gpt-4.1-mini",
  apiKeys: { openai: Redacted.make("sk-test") },
  baseURLs: { openai: `${llm.origin}/v1` }
})

/** Runs `f` with a dom-mode engine on the shared browser, connected for `f` only. */
const withDom = <A, E, R>(
  llm: LlmServer.LlmServer,
  f: (engine: Engine["Service"]) => Effect.Effect<A, E, R>,
  options: StagehandEngineOptions = {}
) =>
  Effect.gen(function* () {
    return yield* f(yield* Engine)
  }).pipe(
    Effect.provide(StagehandEngine.layer({ mode: "dom", model: modelFor(llm), domSettleTimeoutMs: 100, ...options }))
  )

const expectTag = <E extends { readonly _tag: string }, T extends E["_tag"]>(error: E, tag: T) => {
  if (error._tag !== tag) assert.fail(`expected ${tag}, got ${error._tag}: ${JSON.stringify(error)}`)
  return error as Extract<E, { readonly _tag: T }>
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length

const browserAndSite = Layer.mergeAll(TestBrowser.layer(), Layer.effect(Site, SiteServer.start))

layer(browserAndSite, { excludeTestServices: true, timeout: "60 seconds" })("StagehandEngine (dom)", (it) => {
  it.effect("navigates, reads the page state and takes screenshots without the model", () =>
    Effect.gen(function* () {
      const site = yield* Site
      const llm = yield* LlmServer.start()
      yield* withDom(llm, (engine) =>
        Effect.gen(function* () {
          assert.strictEqual(engine.kind, "stagehand")
          assert.strictEqual(engine.mode, "dom")
          assert.deepStrictEqual(engine.capabilities, StagehandEngine.capabilities.dom)
          assert.isTrue(yield* engine.connected())

          const result = yield* engine.navigate(site.url("/forms.html"))
          assert.deepStrictEqual(result, { url: site.url("/forms.html"), title: "Sign up", status: 200 })
          // The session's own target is the page that moved.
          assert.strictEqual(yield* evaluate<string>("document.title"), "Sign up")

          const state = yield* engine.pageState()
          assert.strictEqual(state.url, site.url("/forms.html"))
          assert.strictEqual(state.title, "Sign up")
          assert.strictEqual(state.scrollY, 0)
          assert.isBelow(Math.abs(Date.parse(state.timestamp) - Date.now()), 60_000)

          const png = yield* engine.screenshot()
          assert.deepStrictEqual([...png.slice(0, 8)], pngSignature)
          const viewport = yield* evaluate<{ w: number; h: number }>("({ w: innerWidth, h: innerHeight })")
          assert.deepStrictEqual(pngSize(png), { width: viewport.w, height: viewport.h })
          assert.isAbove(pngSize(yield* engine.screenshot({ fullPage: true })).height, 2_000)

          assert.strictEqual((yield* engine.navigate(site.url("/no-such-page.html"))).status, 404)
          const invalid = expectTag(yield* Effect.flip(engine.navigate("not a url")), "InvalidInput")
          assert.strictEqual(invalid.field, "url")
          const closedPort = `http://127.0.0.1:${yield* freePort}/`
          const refused = expectTag(yield* Effect.flip(engine.navigate(closedPort)), "NavigationFailed")
          assert.strictEqual(refused.url, closedPort)
          assert.include(refused.message, "ERR_CONNECTION_REFUSED")
          assert.strictEqual((yield* engine.navigate(site.url("/forms.html"))).title, "Sign up")
        })
      )
      assert.lengthOf(llm.requests, 0, "nothing here needs the model")
    })
  )

  it.effect("an instruction fills and clicks through the model, and the page really changes", () =>
    Effect.gen(function* () {
      yield* reset("/forms.html")
      const llm = yield* LlmServer.start(formScript)
      yield* withDom(llm, (engine) =>
        Effect.gen(function* () {
          const filled = yield* engine.act(said("type the email address into the email field"))
          assert.strictEqual(filled.action?.method, "fill")
          assert.deepStrictEqual(filled.action?.arguments, ["ada@example.com"])
          assert.match(filled.action?.selector ?? "", /^xpath=\/html/)
          assert.include(filled.description, "fill")
          const clicked = yield* engine.act(said("click the submit button"))
          assert.strictEqual(clicked.action?.method, "click")

          const missing = expectTag(yield* Effect.flip(engine.act(said("open the shopping cart"))), "ElementNotFound")
          assert.strictEqual(missing.target, "open the shopping cart")
          assert.strictEqual(missing.sideEffect, "none")
        })
      )
      assert.strictEqual(yield* inputValue("email"), "ada@example.com")
      assert.strictEqual(yield* textOf("status"), "Submitted ada@example.com")
      assert.lengthOf(llm.requests, 3)
      assert.isTrue(llm.requests.every((r) => r.path === "/v1/chat/completions"))
      assert.strictEqual(llm.requests[0]!.headers.authorization, "Bearer sk-test")
    })
  )

  it.effect("an Action runs without any model request, and a bad one fails typed without one", () =>
    Effect.gen(function* () {
      yield* reset("/forms.html")
      const llm = yield* LlmServer.start(formScript)
      yield* withDom(llm, (engine) =>
        Effect.gen(function* () {
          const fill: Action = {
            selector: "#email",
            method: "fill",
            arguments: ["grace@example.com"],
            description: "Email"
          }
          const filled = yield* engine.act(fill)
          assert.deepStrictEqual(filled.action, fill)
          yield* engine.act({
            selector: "xpath=//button[@id='submit']",
            method: "click",
            arguments: [],
            description: ""
          })

          // With self-heal off a selector that matches nothing never turns into a model call that clicks elsewhere.
          const missing = expectTag(
            yield* Effect.flip(engine.act({ selector: "#nope", method: "click", arguments: [], description: "Nope" })),
            "ElementNotFound"
          )
          assert.strictEqual(missing.target, "#nope")
          const method = expectTag(
            yield* Effect.flip(
              engine.act({ selector: "#submit", method: "frobnicate", arguments: [], description: "" })
            ),
            "InvalidInput"
          )
          assert.strictEqual(method.field, "method")
        })
      )
      assert.strictEqual(yield* textOf("status"), "Submitted grace@example.com")
      assert.lengthOf(llm.requests, 0)
    })
  )

  it.effect(
    "acts are read back: values converted, a disabled target refused, a field that refuses its text fails",
    () =>
      Effect.gen(function* () {
        yield* reset("/checks.html")
        const llm = yield* LlmServer.start(checksScript)
        yield* withDom(llm, (engine) =>
          Effect.gen(function* () {
            const dob = yield* engine.act({
              selector: "xpath=//input[@id='dob']",
              method: "fill",
              arguments: ["07/04/1990"],
              description: "Date of birth"
            })
            assert.deepInclude(dob.target, { role: "textbox", name: "Date of birth", value: "1990-07-04" })
            const send = expectTag(
              yield* Effect.flip(engine.act({ selector: "#send", method: "click", arguments: [], description: "" })),
              "ActionFailed"
            )
            assert.include(send.message, 'button "Send application" is disabled')
            assert.strictEqual(send.sideEffect, "none")
            const skills = yield* engine.act({
              selector: "#skills",
              method: "selectOptionFromDropdown",
              arguments: ["SQL"],
              description: ""
            })
            assert.deepInclude(skills.target, { selected: ["SQL"] })
            // Through the model: the ZIP field keeps digits only, so the word the model typed is not what it shows.
            const zip = expectTag(
              yield* Effect.flip(engine.act(said("put ABCDE in the ZIP code field"))),
              "VerificationFailed"
            )
            assert.strictEqual(zip.expected, "ABCDE")
            assert.strictEqual(zip.actual, "")
            assert.include(zip.message, 'textbox "ZIP code" shows ""')
            const terms = yield* engine.act(said("tick the terms box"))
            assert.deepInclude(terms.target, { role: "checkbox", checked: true })
          })
        )
        assert.strictEqual(yield* inputValue("dob"), "1990-07-04")
        assert.isTrue(yield* evaluate<boolean>("document.getElementById('terms').checked"))
        assert.lengthOf(llm.requests, 2)
      })
  )

  it.effect("observe returns Actions that replay through act, in this engine and in playwright", () =>
    Effect.gen(function* () {
      yield* reset("/forms.html")
      const llm = yield* LlmServer.start((request) =>
        kindOf(request) === "observe"
          ? answer({
              elements: [
                element(request, "textbox", "Full name", "fill", ["Grace Hopper"]),
                element(request, "button", "Submit", "click", [])
              ]
            })
          : undefined
      )
      const actions = yield* withDom(llm, (engine) =>
        Effect.gen(function* () {
          const actions = yield* engine.observe(said("the name field and the submit button"))
          assert.lengthOf(actions, 2)
          assert.deepInclude(actions[0]!, {
            method: "fill",
            arguments: ["Grace Hopper"],
            description: "textbox Full name"
          })
          assert.match(actions[0]!.selector, /^xpath=\/html/)
          yield* engine.act(actions[0]!)
          return actions
        })
      )
      assert.strictEqual(yield* inputValue("fullname"), "Grace Hopper")
      yield* Effect.gen(function* () {
        yield* (yield* Engine).act(actions[1]!)
      }).pipe(Effect.provide(PlaywrightEngine.layer()))
      assert.strictEqual(yield* textOf("status"), "Submitted ")
      assert.lengthOf(llm.requests, 1, "only observe asked the model")
    })
  )

  it.effect("extract fills a caller's JSON schema from the page", () =>
    Effect.gen(function* () {
      yield* reset("/forms.html")
      const llm = yield* LlmServer.start((request) => {
        switch (kindOf(request)) {
          case "extract": {
            const text = LlmServer.promptText(request)
            if (!text.includes("Ada Lovelace")) return { status: 400, error: "the page is not in the prompt" }
            return answer({ heading: "Sign up", fullName: "Ada Lovelace", colours: ["Red", "Green", "Blue"] })
          }
          case "extract-metadata":
            return answer({ progress: "read the form", completed: true })
          default:
            return answer({ extraction: "a sign-up form" })
        }
      })
      const schema = {
        type: "object",
        properties: {
          heading: { type: "string" },
          fullName: { type: "string" },
          colours: { type: "array", items: { type: "string" } }
        },
        required: ["heading", "fullName", "colours"]
      }
      yield* withDom(llm, (engine) =>
        Effect.gen(function* () {
          const value = yield* engine.extract("the heading, the full name and the colour choices", schema)
          assert.deepStrictEqual(value, {
            heading: "Sign up",
            fullName: "Ada Lovelace",
            colours: ["Red", "Green", "Blue"]
          })
          const sent = LlmServer.requestedSchema(llm.requests[0]!)
          assert.deepStrictEqual(Object.keys(sent.properties), ["heading", "fullName", "colours"])
          assert.strictEqual(sent.additionalProperties, false)

          const invalid = expectTag(yield* Effect.flip(engine.extract("x", "not a schema")), "InvalidInput")
          assert.strictEqual(invalid.field, "jsonSchema")
        })
      )
      assert.lengthOf(llm.requests, 2)
    })
  )

  it.effect("model errors come back typed at once: 500 and 429 retryable, 401 not, no hidden retries", () =>
    Effect.gen(function* () {
      yield* reset("/forms.html")
      const llm = yield* LlmServer.start(formScript)
      yield* withDom(llm, (engine) =>
        Effect.gen(function* () {
          for (const [status, retryable] of [
            [500, true],
            [429, true],
            [401, false],
            [403, false],
            [400, false]
          ] as const) {
            const before = llm.requests.length
            const started = Date.now()
            llm.faultNext({ status, error: `scripted ${status}` })
            const error = expectTag(yield* Effect.flip(engine.act(said("click the submit button"))), "LlmError")
            assert.strictEqual(error.status, status)
            assert.strictEqual(error.retryable, retryable, `status ${status}`)
            assert.strictEqual(error.provider, "openai")
            assert.strictEqual(error.sideEffect, "none", "the model had not answered, so nothing was clicked")
            assert.strictEqual(llm.requests.length - before, 1, `one request for ${status}: no hidden retries`)
            assert.isBelow(Date.now() - started, 3_000)
          }
          const observeFailure = yield* Effect.flip(
            Effect.sync(() => llm.faultNext({ status: 503, error: "overloaded" })).pipe(
              Effect.andThen(engine.observe(said("the submit button")))
            )
          )
          assert.strictEqual(expectTag(observeFailure, "LlmError").retryable, true)
        })
      )
      assert.strictEqual(yield* textOf("status"), "", "no failed call clicked anything")
    })
  )

  it.effect("bodies the SDK cannot use are LlmBadResponse: malformed JSON and the wrong shape", () =>
    Effect.gen(function* () {
      yield* reset("/forms.html")
      const llm = yield* LlmServer.start(formScript)
      yield* withDom(llm, (engine) =>
        Effect.gen(function* () {
          llm.faultNext({ raw: "{not json" })
          const malformed = expectTag(yield* Effect.flip(engine.act(said("click the submit button"))), "LlmBadResponse")
          assert.strictEqual(malformed.retryable, true)
          llm.faultNext({ json: LlmServer.chatCompletion('{"unexpected": true}') })
          expectTag(yield* Effect.flip(engine.observe(said("the submit button"))), "LlmBadResponse")
          llm.faultNext({ raw: "<html>bad gateway</html>", status: 200, contentType: "text/html" })
          expectTag(yield* Effect.flip(engine.extract("the heading")), "LlmBadResponse")
          // The engine is unharmed: the next call works.
          yield* engine.act(said("click the submit button"))
        })
      )
      assert.lengthOf(llm.requests, 4)
      assert.strictEqual(yield* textOf("status"), "Submitted ")
    })
  )

  it.effect("a hanging model is stopped by a timeout, and the server sees the request aborted", () =>
    Effect.gen(function* () {
      yield* reset("/forms.html")
      const llm = yield* LlmServer.start(formScript)
      yield* withDom(
        llm,
        (engine) =>
          Effect.gen(function* () {
            // The caller's own timeout interrupts the call; the abort reaches the HTTP request inside the SDK.
            llm.faultNext({ hang: true })
            let started = Date.now()
            const interrupted = yield* Effect.flip(
              engine.act(said("click the submit button")).pipe(Effect.timeout("1 second"))
            )
            assert.strictEqual(interrupted._tag, "TimeoutError")
            assert.isBelow(Date.now() - started, 2_000)
            assert.isTrue(yield* Effect.promise(() => waitFor(() => llm.pending() === 0, 2_000)), "request aborted")

            // The engine's own limit gives a typed Timeout.
            llm.faultNext({ hang: true })
            started = Date.now()
            const timeout = expectTag(yield* Effect.flip(engine.observe(said("the submit button"))), "Timeout")
            assert.strictEqual(timeout.timeoutMs, 1_500)
            assert.strictEqual(timeout.sideEffect, "none")
            assert.isBelow(Date.now() - started, 2_500)
            assert.isTrue(yield* Effect.promise(() => waitFor(() => llm.pending() === 0, 2_000)), "request aborted")

            // A slow answer inside the limit is fine, and the engine still works.
            llm.faultNext(later(300, answer({ elements: [] })))
            assert.deepStrictEqual(yield* engine.observe(said("the submit button")), [])
            assert.isTrue(yield* engine.connected())
            yield* engine.act(said("click the submit button"))
          }),
        { actionTimeoutMs: 1_500 }
      )
      assert.strictEqual(yield* textOf("status"), "Submitted ")
    })
  )

  it.effect("no key and no base URL: not_configured before any request", () =>
    Effect.gen(function* () {
      const llm = yield* LlmServer.start(formScript)
      const error = yield* Effect.flip(
        Effect.gen(function* () {
          yield* Engine
        }).pipe(
          Effect.provide(StagehandEngine.layer({ mode: "dom", model: { model: "openai/gpt-4.1-mini" } })),
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({})))
        )
      )
      const notConfigured = expectTag(error, "NotConfigured")
      assert.include(notConfigured.message, "OPENAI_API_KEY")
      assert.strictEqual(notConfigured.retryable, false)
      assert.lengthOf(llm.requests, 0)
    })
  )

  it.effect("attaching to a dead endpoint fails typed and quickly", () =>
    Effect.gen(function* () {
      const llm = yield* LlmServer.start()
      const port = yield* freePort
      const started = Date.now()
      const error = yield* Effect.flip(
        withDom(llm, () => Effect.void).pipe(
          Effect.provideService(
            BrowserSession,
            BrowserSession.of({
              wsEndpoint: `ws://127.0.0.1:${port}/devtools/browser/gone`,
              httpEndpoint: `http://127.0.0.1:${port}`,
              pid: null,
              targetId: "gone"
            })
          )
        )
      )
      const unreachable = expectTag(error, "EndpointUnreachable")
      assert.strictEqual(unreachable.endpoint, `ws://127.0.0.1:${port}/devtools/browser/gone`)
      assert.isBelow(Date.now() - started, 5_000)
      assert.lengthOf(llm.requests, 0)
    })
  )

  it.effect("releasing the engine only disconnects: the browser and its page stay", () =>
    Effect.gen(function* () {
      const session = yield* BrowserSession
      const site = yield* Site
      const llm = yield* LlmServer.start()
      yield* withDom(llm, (engine) => engine.navigate(site.url("/plain.html")))
      assert.isTrue(isAlive(session.pid!))
      const version = yield* CdpHttp.version(session.httpEndpoint)
      assert.strictEqual(version.webSocketDebuggerUrl, session.wsEndpoint)
      assert.strictEqual(yield* evaluate<string>("location.pathname"), "/plain.html")
      // And a later engine attaches again to the same page.
      const state = yield* withDom(llm, (engine) => engine.pageState())
      assert.strictEqual(state.url, site.url("/plain.html"))
    })
  )

  it.effect("a browser killed mid-act fails the call with CdpClosed within 2 s and leaves nothing running", () =>
    Effect.gen(function* () {
      const site = yield* Site
      const baseline = timers()
      const scope = yield* Scope.make()
      const session = yield* TestBrowser.launchSession().pipe(Scope.provide(scope))
      let killedAt = 0
      const llm = yield* LlmServer.start((request) => {
        if (kindOf(request) !== "act") return undefined
        // The model is asked while the browser dies; its answer arrives after the socket has closed.
        process.kill(session.pid!, "SIGKILL")
        killedAt = Date.now()
        return later(300, answer({ action: element(request, "button", "Submit", "click", []), twoStep: false }))
      })
      const failure = yield* withDom(llm, (engine) =>
        Effect.gen(function* () {
          yield* engine.navigate(site.url("/forms.html"))
          const error = yield* Effect.flip(engine.act(said("click the submit button")))
          const failedAt = Date.now()
          assert.isFalse(yield* engine.connected())
          const after = yield* Effect.flip(engine.screenshot())
          return { error, failedAt, after }
        })
      ).pipe(Effect.provideService(BrowserSession, session))
      const closed = expectTag(failure.error, "CdpClosed")
      assert.isBelow(failure.failedAt - killedAt, 2_000)
      assert.strictEqual(closed.retryable, true)
      assert.strictEqual(failure.after._tag, "CdpClosed")
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(
        yield* Effect.promise(() => waitFor(() => timers() <= baseline, 5_000)),
        `timers left running: ${timers()} > ${baseline}`
      )
    })
  )
})

describe("Stagehand errors", () => {
  const at: Errors.Attempt = { action: "click submit", timeoutMs: 1_000, sideEffect: "none", provider: "openai" }
  const named = (name: string, message: string, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error(message), { name }, extra)

  it("maps SDK and Stagehand failures by name, status and message", () => {
    const cases: ReadonlyArray<[unknown, string, Record<string, unknown>?]> = [
      [named("AI_APICallError", "boom", { statusCode: 500 }), "LlmError", { status: 500, retryable: true }],
      [named("AI_APICallError", "slow down", { statusCode: 429 }), "LlmError", { status: 429, retryable: true }],
      [named("AI_APICallError", "who are you", { statusCode: 401 }), "LlmError", { status: 401, retryable: false }],
      [named("AI_APICallError", "Cannot connect to API"), "LlmError", { retryable: true }],
      [named("AI_APICallError", "Invalid JSON response", { statusCode: 200 }), "LlmBadResponse"],
      [
        named("AI_RetryError", "Failed after 3 attempts", {
          lastError: named("AI_APICallError", "x", { statusCode: 503 })
        }),
        "LlmError",
        { status: 503 }
      ],
      [named("AI_NoObjectGeneratedError", "No object generated"), "LlmBadResponse"],
      // openai@4 errors keep the plain `Error` name and carry `status`.
      [Object.assign(new Error("403 forbidden"), { status: 403 }), "LlmError", { status: 403, retryable: false }],
      [named("FetchError", "invalid json response body at http://x"), "LlmBadResponse"],
      [named("CdpConnectionClosedError", "CDP connection closed: socket-close"), "CdpClosed"],
      [new Error("WebSocket is not open: readyState 3"), "CdpClosed"],
      [named("StagehandNotInitializedError", "act() called before init"), "NotInitialized"],
      [named("ActTimeoutError", "act() timed out"), "Timeout"],
      [named("StagehandElementNotFoundError", "no element"), "ElementNotFound"],
      [named("CuaModelRequiredError", "needs a CUA model"), "NotConfigured"],
      [named("StagehandInvalidArgumentError", "instruction required"), "InvalidInput"],
      [{ name: "WorkerExited", message: "the engine worker stopped", dead: true }, "NotInitialized"],
      // The worker crashed because the browser connection dropped under Stagehand: the connection is what went.
      [
        {
          name: "WorkerExited",
          message: "the engine worker crashed: CDP connection closed: socket-close",
          dead: true,
          cause: named("CdpConnectionClosedError", "CDP connection closed: socket-close")
        },
        "CdpClosed",
        { retryable: true }
      ],
      [{ name: "WorkerExited", message: "the engine worker crashed: WebSocket is not open", dead: true }, "CdpClosed"],
      [new Error("something else"), "ActionFailed"]
    ]
    for (const [cause, tag, fields] of cases) {
      const error = Errors.toEngineError(cause, at)
      assert.strictEqual(error._tag, tag, String((cause as Error).message))
      assert.strictEqual(error.engine, "stagehand")
      if (fields !== undefined) assert.deepInclude(error, fields)
    }
    const navigation = { ...at, action: "navigate x", url: "http://x/" }
    assert.strictEqual(
      Errors.toEngineError(new Error("Cannot navigate to invalid URL"), navigation)._tag,
      "InvalidInput"
    )
    assert.strictEqual(Errors.toEngineError(new Error("net::ERR_ABORTED"), navigation)._tag, "NavigationFailed")
  })

  it("act resolving success: false is an error that says why", () => {
    const noElement = Errors.failedAct("Failed to perform act: No action found", "open the cart", "open the cart")
    assert.deepInclude(noElement, { _tag: "ElementNotFound", target: "open the cart", sideEffect: "none" })
    const noMatch = Errors.failedAct("Could not find an element for the given xPath(s): //x", "//x", "click //x")
    assert.strictEqual(noMatch._tag, "ElementNotFound")
    assert.strictEqual(Errors.failedAct("Method frobnicate not supported", "#a", "frobnicate #a")._tag, "InvalidInput")
    assert.deepInclude(Errors.failedAct("Element is not visible", "#a", "click #a"), {
      _tag: "ActionFailed",
      sideEffect: "possible"
    })
  })
})
