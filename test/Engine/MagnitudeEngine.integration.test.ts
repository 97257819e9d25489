/**
 * MagnitudeEngine against a real Chromium, the fixture sites and a scripted OpenAI-compatible model server: the real
 * magnitude-core code paths (its BAML client, its screenshot loop, its mouse and keyboard) in the engine's worker.
 * Page effects are read back through a separate raw CDP connection to the session's target.
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it, layer } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Option, Redacted, Scope } from "effect"
import * as CdpConnection from "../../src/Cdp/Connection.ts"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import type * as Protocol from "../../src/Cdp/Protocol.ts"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { said } from "../../src/Engine/Instruction.ts"
import * as Isolated from "../../src/Engine/Isolated.ts"
import * as MagnitudeErrors from "../../src/Engine/Magnitude/Errors.ts"
import * as MagnitudeEngine from "../../src/Engine/MagnitudeEngine.ts"
import type { SwitchyardError } from "../../src/Errors.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { isAlive } from "../support/Processes.ts"
import * as TestBrowser from "../support/TestBrowser.ts"
import { waitFor } from "../support/Wait.ts"

class Site extends Context.Service<Site, SiteServer.SiteServer>()("test/Site") {}
class Llm extends Context.Service<Llm, LlmServer.LlmServer>()("test/Llm") {}

type Options = Omit<MagnitudeEngine.MagnitudeEngineOptions, "model">

/** The engine talking to the scripted server as an OpenAI-compatible provider. */
const engineLayer = (options: Options = {}) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const llm = yield* Llm
      return MagnitudeEngine.layer({
        elementWaitMs: 1_500,
        ...options,
        model: {
          magnitude: "openai/gpt-4.1-mini",
          baseURLs: { openai: `${llm.origin}/v1` },
          apiKeys: { openai: Redacted.make("sk-test") }
        }
      })
    })
  )

/** A second engine for one test, released with the test's scope. */
const buildEngine = (options: Options = {}) =>
  Layer.build(engineLayer(options)).pipe(Effect.map((context) => Context.get(context, Engine)))

// ---------------------------------------------------------------------------------------------------------------
// The scripted model.

type Turn = ReadonlyArray<Record<string, unknown>>

const isAct = (request: LlmServer.LlmRequest) => LlmServer.promptText(request).includes("Plan out actions")
const isExtract = (request: LlmServer.LlmRequest) =>
  LlmServer.promptText(request).includes("extract data according to these instructions")
const reply = (content: unknown): LlmServer.Reply => ({ json: LlmServer.chatCompletion(JSON.stringify(content)) })
const done = { variant: "task:done", evidence: "the page shows it" }

/** Answers each act turn with the next list of actions, then with `task:done`. */
const script = (turns: ReadonlyArray<Turn>) =>
  Effect.gen(function* () {
    const llm = yield* Llm
    let next = 0
    llm.setScript((request) =>
      isAct(request) ? reply({ reasoning: `turn ${next + 1}`, actions: turns[next++] ?? [done] }) : undefined
    )
  })

/** How many requests reached the model server while `effect` ran. */
const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const llm = yield* Llm
    const before = llm.requests.length
    const started = Date.now()
    const exit = yield* Effect.exit(effect)
    return { exit, requests: llm.requests.slice(before), elapsedMs: Date.now() - started }
  })

const failureOf = <A>(exit: Exit.Exit<A, SwitchyardError>): SwitchyardError => {
  if (Exit.isSuccess(exit)) return assert.fail("expected the call to fail")
  const error = Cause.findErrorOption(exit.cause)
  return Option.isSome(error) ? error.value : assert.fail(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
}

// ---------------------------------------------------------------------------------------------------------------
// The page, read through raw CDP.

const evaluate = <A>(expression: string) =>
  Effect.gen(function* () {
    const session = yield* BrowserSession
    return yield* Session.evaluate<A>(session.wsEndpoint, session.targetId, expression)
  })
const byId = (id: string) => `document.getElementById(${JSON.stringify(id)})`
const inputValue = (id: string) => evaluate<string>(`${byId(id)}.value`)
const textOf = (id: string) => evaluate<string>(`${byId(id)}.textContent`)
/** Viewport coordinates of an element's centre: where the scripted model clicks. */
const centreOf = (id: string) =>
  evaluate<{ x: number; y: number }>(
    `(() => { const r = ${byId(id)}.getBoundingClientRect(); return { x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2) } })()`
  )

const open = (path: string) =>
  Effect.gen(function* () {
    const site = yield* Site
    const engine = yield* Engine
    return yield* engine.navigate(site.url(path))
  })

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const pngSize = (png: Uint8Array) => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

const poll = (condition: () => boolean, timeoutMs = 5_000) => Effect.promise(() => waitFor(condition, timeoutMs))

const services = Layer.mergeAll(
  TestBrowser.layer(),
  Layer.effect(Site, SiteServer.start),
  Layer.effect(Llm, LlmServer.start())
)

layer(services, { excludeTestServices: true, timeout: "60 seconds" })("MagnitudeEngine", (it) => {
  it.layer(engineLayer())("on the session's page", (it) => {
    it.effect("navigates the session's own page without asking the model", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        const site = yield* Site
        assert.strictEqual(engine.kind, "magnitude")
        assert.deepStrictEqual(engine.capabilities, MagnitudeEngine.capabilities)
        assert.isTrue(yield* engine.connected())

        const { exit, requests } = yield* counted(engine.navigate(site.url("/forms.html")))
        assert.deepStrictEqual(Exit.isSuccess(exit) && exit.value, {
          url: site.url("/forms.html"),
          title: "Sign up",
          status: 200
        })
        assert.strictEqual(requests.length, 0)
        assert.strictEqual(yield* evaluate<string>("document.title"), "Sign up")

        const state = yield* engine.pageState()
        assert.strictEqual(state.url, site.url("/forms.html"))
        assert.strictEqual(state.title, "Sign up")
        assert.strictEqual(state.scrollY, 0)

        const invalid = yield* Effect.flip(engine.navigate("not a url"))
        assert.strictEqual(invalid._tag, "InvalidInput")
        const observe = yield* Effect.flip(engine.observe(said("the email field")))
        assert.strictEqual(observe._tag, "Unsupported")
      })
    )

    it.effect("act: the model's clicks and typing fill in and submit the real form", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/forms.html")
        const email = yield* centreOf("email")
        const submit = yield* centreOf("submit")
        yield* script([
          [
            { variant: "mouse:click", ...email },
            { variant: "keyboard:type", content: "ada@example.com" }
          ],
          [{ variant: "mouse:click", ...submit }]
        ])

        const { exit, requests } = yield* counted(engine.act(said("sign up with ada@example.com")))
        if (Exit.isFailure(exit)) return assert.fail(`act failed: ${exit.cause}`)
        assert.strictEqual(exit.value.success, true)
        assert.include(exit.value.description, "3 actions in 3 model turns")
        assert.strictEqual(yield* inputValue("email"), "ada@example.com")
        assert.strictEqual(yield* textOf("status"), "Submitted ada@example.com")

        // Three planning calls, each with a PNG screenshot of the page.
        assert.strictEqual(requests.length, 3)
        for (const request of requests) {
          assert.strictEqual(request.path, "/v1/chat/completions")
          const images = request.body.messages
            .flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []))
            .filter((p: { type: string }) => p.type === "image_url")
          assert.isAbove(images.length, 0)
          assert.match(images[0].image_url.url, /^data:image\/png;base64,/)
        }
        assert.include(LlmServer.promptText(requests[0]!), "sign up with ada@example.com")
      })
    )

    it.effect("act with an Action runs it on the page without any model request", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/forms.html")
        const action = (selector: string, method: string, args: ReadonlyArray<string> = []) =>
          engine.act({ selector, method, arguments: args, description: selector })

        const { exit, requests } = yield* counted(
          Effect.gen(function* () {
            yield* action("#fullname", "fill", ["Grace Hopper"])
            yield* action("#email", "fill", ["grace@example.com"])
            yield* action("#agree", "check")
            return yield* action("xpath=//button[@id='submit']", "click")
          })
        )
        if (Exit.isFailure(exit)) return assert.fail(`action failed: ${exit.cause}`)
        assert.deepStrictEqual(exit.value.action?.method, "click")
        assert.strictEqual(requests.length, 0)
        assert.strictEqual(yield* inputValue("fullname"), "Grace Hopper")
        assert.isTrue(yield* evaluate<boolean>(`${byId("agree")}.checked`))
        assert.strictEqual(yield* textOf("status"), "Submitted grace@example.com")

        const missing = yield* Effect.flip(action("#no-such-field", "fill", ["x"]))
        if (missing._tag !== "ElementNotFound") return assert.fail(`expected ElementNotFound, got ${missing._tag}`)
        assert.strictEqual(missing.target, "#no-such-field")
        const many = yield* Effect.flip(action("input[type=checkbox]", "check"))
        assert.strictEqual(many._tag, "AmbiguousTarget")
        const unknown = yield* Effect.flip(action("#email", "teleport"))
        assert.strictEqual(unknown._tag, "Unsupported")
      })
    )

    it.effect("an Action is read back: values converted, a disabled target refused, a refused text fails", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/checks.html")
        const action = (selector: string, method: string, args: ReadonlyArray<string> = []) =>
          engine.act({ selector, method, arguments: args, description: selector })
        const { exit, requests } = yield* counted(
          Effect.gen(function* () {
            const dob = yield* action("#dob", "fill", ["March 15, 2026"])
            assert.deepInclude(dob.target, { ref: "#dob", role: "textbox", name: "Date of birth", value: "2026-03-15" })
            const send = yield* Effect.flip(action("#send", "click"))
            assert.strictEqual(send.type, "action_failed")
            assert.include(send.message, 'button "Send application" is disabled')
            const zip = yield* Effect.flip(action("#zip", "fill", ["ABCDE"]))
            if (zip._tag !== "VerificationFailed") return assert.fail(`expected VerificationFailed, got ${zip._tag}`)
            assert.strictEqual(zip.actual, "")
            const terms = yield* action("#terms", "check")
            assert.deepInclude(terms.target, { checked: true })
            const unreadable = yield* Effect.flip(action("#dob", "fill", ["13/13/2020"]))
            assert.strictEqual(unreadable.type, "invalid_input")
            assert.include(unreadable.message, "YYYY-MM-DD")
          })
        )
        if (Exit.isFailure(exit)) return assert.fail(`action failed: ${exit.cause}`)
        assert.strictEqual(requests.length, 0)
        assert.strictEqual(yield* inputValue("dob"), "2026-03-15")
      })
    )

    it.effect("extract fills a JSON schema from the model's answer, typed", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        const llm = yield* Llm
        yield* open("/forms.html")
        llm.setScript((request) =>
          isExtract(request)
            ? reply({ heading: "Sign up", fullName: "Ada Lovelace", colours: ["Red", "Green", "Blue"], fields: "4" })
            : undefined
        )
        const schema = {
          type: "object",
          properties: {
            heading: { type: "string", description: "the page's main heading" },
            fullName: { type: "string" },
            colours: { type: "array", items: { type: "string", enum: ["Red", "Green", "Blue"] } },
            fields: { type: "integer" },
            missing: { type: ["string", "null"] }
          },
          required: ["heading", "fullName", "colours", "fields"]
        }
        const { exit, requests } = yield* counted(engine.extract("the form's details", schema))
        if (Exit.isFailure(exit)) return assert.fail(`extract failed: ${exit.cause}`)
        // BAML coerced "4" to the integer the schema asks for; the optional field came back empty.
        assert.deepInclude(exit.value as object, {
          heading: "Sign up",
          fullName: "Ada Lovelace",
          colours: ["Red", "Green", "Blue"],
          fields: 4
        })
        assert.strictEqual(requests.length, 1)
        const prompt = LlmServer.promptText(requests[0]!)
        assert.include(prompt, "the form's details")
        assert.include(prompt, "fullName")
        assert.include(prompt, "Sign up", "the page's content is in the prompt")

        llm.setScript((request) => (isExtract(request) ? reply({ data: "Sign up" }) : undefined))
        assert.strictEqual(yield* engine.extract("the heading"), "Sign up")

        // A page with an iframe: its content reaches the model, and the live frame (with what was typed) stays.
        yield* open("/framed.html")
        const card = `${byId("payment")}.contentDocument.getElementById("card")`
        yield* evaluate(`${card}.value = "4242"`)
        llm.setScript((request) => (isExtract(request) ? reply({ total: 42, currency: "EUR" }) : undefined))
        const framed = yield* counted(
          engine.extract("the order total", {
            type: "object",
            properties: { total: { type: "number" }, currency: { type: "string" } },
            required: ["total", "currency"]
          })
        )
        if (Exit.isFailure(framed.exit)) return assert.fail(`extract failed: ${framed.exit.cause}`)
        assert.deepStrictEqual(framed.exit.value, { total: 42, currency: "EUR" })
        assert.include(LlmServer.promptText(framed.requests[0]!), "Order total: 42 EUR")
        assert.strictEqual(yield* evaluate<string>(`${byId("payment")}.tagName`), "IFRAME")
        assert.strictEqual(yield* evaluate<string>(`${card}.value`), "4242")

        const refused = yield* counted(engine.extract("x", { $ref: "#/definitions/thing" }))
        const invalid = failureOf(refused.exit)
        assert.strictEqual(invalid._tag, "InvalidInput")
        assert.include(invalid.message, "$ref")
        assert.strictEqual(refused.requests.length, 0)
      })
    )

    it.effect("takes viewport and full-page PNG screenshots", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/long.html")
        const viewport = yield* engine.screenshot()
        const full = yield* engine.screenshot({ fullPage: true })
        assert.deepStrictEqual([...viewport.slice(0, 8)], pngSignature)
        assert.deepStrictEqual([...full.slice(0, 8)], pngSignature)
        const inner = yield* evaluate<{ w: number; h: number }>("({ w: window.innerWidth, h: window.innerHeight })")
        assert.deepStrictEqual(pngSize(viewport), { width: inner.w, height: inner.h })
        assert.isAbove(pngSize(full).height, inner.h * 2)
      })
    )

    it.effect("model failures come back typed after one request: no hidden retries", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        const llm = yield* Llm
        yield* open("/forms.html")
        yield* script([])
        const fault = (
          reply: LlmServer.Reply,
          call: Effect.Effect<unknown, SwitchyardError> = engine.act(said("sign up"))
        ) =>
          Effect.gen(function* () {
            llm.faultNext(reply)
            const { exit, requests, elapsedMs } = yield* counted(call)
            assert.strictEqual(requests.length, 1, "exactly one request reached the model server")
            assert.isBelow(elapsedMs, 3_000)
            return failureOf(exit)
          })

        for (const status of [500, 429, 503]) {
          const error = yield* fault({ status, error: "overloaded" })
          if (error._tag !== "LlmError") return assert.fail(`${status}: expected LlmError, got ${error._tag}`)
          assert.strictEqual(error.status, status)
          assert.isTrue(error.retryable)
          assert.strictEqual(error.provider, "openai")
          assert.strictEqual(error.sideEffect, "none")
          assert.include(error.message, "overloaded")
        }
        for (const status of [401, 403]) {
          const error = yield* fault({ status, error: "invalid api key" })
          if (error._tag !== "LlmError") return assert.fail(`${status}: expected LlmError, got ${error._tag}`)
          assert.strictEqual(error.status, status)
          assert.isFalse(error.retryable)
        }
        const malformed = yield* fault({ raw: "{not json" })
        assert.strictEqual(malformed._tag, "LlmBadResponse")
        assert.include(malformed.message, "parse JSON")
        const prose = yield* fault({ json: LlmServer.chatCompletion("Sorry, I cannot see the page.") })
        assert.strictEqual(prose._tag, "LlmBadResponse")
        const nothing = yield* fault(reply({ reasoning: "nothing to do", actions: [] }))
        assert.strictEqual(nothing._tag, "LlmBadResponse")

        // The model declaring the task impossible is a typed failure too, carrying its reason.
        llm.setScript((request) =>
          isAct(request)
            ? reply({ reasoning: "There is no launch button", actions: [{ variant: "task:fail" }] })
            : undefined
        )
        const gaveUp = yield* Effect.flip(engine.act(said("press the launch button")))
        if (gaveUp._tag !== "ActionFailed") return assert.fail(`expected ActionFailed, got ${gaveUp._tag}`)
        assert.include(gaveUp.message, "gave up")
        assert.include(gaveUp.message, "There is no launch button")

        llm.setScript(() => undefined)
        const extractError = yield* fault({ status: 500, error: "down" }, engine.extract("the heading", {}))
        assert.strictEqual(extractError._tag, "LlmError")

        // A failed model call left the engine usable.
        yield* script([])
        assert.isTrue(yield* engine.connected())
        const after = yield* engine.act(said("confirm the page is shown"))
        assert.include(after.description, "0 actions in 1 model turns")
      })
    )
  })

  it.effect("the step and action limits stop an act that never finishes, before the next model call or action", () =>
    Effect.gen(function* () {
      const llm = yield* Llm
      const engine = yield* buildEngine({ maxSteps: 2 })
      // A model that never declares the task done: each turn it waits and looks again.
      const wait = { variant: "wait", seconds: 0 }
      llm.setScript((request) => (isAct(request) ? reply({ reasoning: "look again", actions: [wait] }) : undefined))
      const { exit, requests } = yield* counted(engine.act(said("find the hidden prize")))
      const error = failureOf(exit)
      if (error._tag !== "ActionFailed") return assert.fail(`expected ActionFailed, got ${error._tag}`)
      assert.strictEqual(error.sideEffect, "possible")
      assert.include(error.message, "step limit is 2 turns")
      assert.strictEqual(requests.length, 2, "no third model call")
      assert.isTrue(yield* engine.connected())

      const actions = yield* buildEngine({ maxActions: 3 })
      llm.setScript((request) => (isAct(request) ? reply({ reasoning: "again", actions: [wait, wait] }) : undefined))
      const many = yield* counted(actions.act(said("wait forever")))
      const limited = failureOf(many.exit)
      if (limited._tag !== "ActionFailed") return assert.fail(`expected ActionFailed, got ${limited._tag}`)
      assert.strictEqual(limited.sideEffect, "possible")
      assert.include(limited.message, "action limit is 3")
      // Two turns of two actions: the fourth was refused before it ran.
      assert.strictEqual(many.requests.length, 2)
    })
  )

  it.effect("releasing the engine only disconnects: the browser, the page and its form values stay", () =>
    Effect.gen(function* () {
      const session = yield* BrowserSession
      const site = yield* Site
      const scope = yield* Scope.make()
      const first = yield* buildEngine().pipe(Scope.provide(scope))
      yield* first.navigate(site.url("/forms.html"))
      yield* first.act({ selector: "#email", method: "fill", arguments: ["kept@example.com"], description: "Email" })
      yield* Scope.close(scope, Exit.void)

      assert.isFalse(yield* first.connected())
      assert.isTrue(isAlive(session.pid!))
      const version = yield* CdpHttp.version(session.httpEndpoint)
      assert.include(version.webSocketDebuggerUrl, "/devtools/browser/")
      assert.strictEqual(yield* evaluate<string>("location.href"), site.url("/forms.html"))
      assert.strictEqual(yield* inputValue("email"), "kept@example.com")
      const stale = yield* Effect.flip(first.pageState())
      assert.oneOf(stale._tag, ["NotInitialized", "CdpClosed"])

      // The next engine attaches to the same page, with what the first one typed.
      const second = yield* buildEngine()
      const state = yield* second.pageState()
      assert.strictEqual(state.url, site.url("/forms.html"))
      yield* second.act({ selector: "#submit", method: "click", arguments: [], description: "Submit" })
      assert.strictEqual(yield* textOf("status"), "Submitted kept@example.com")
    })
  )

  it.effect("with several tabs open, the agent drives the session's page (found by target id), not the first tab", () =>
    Effect.gen(function* () {
      const session = yield* BrowserSession
      const site = yield* Site
      const browserTarget = <M extends Protocol.Command>(method: M, ...args: Protocol.Args<M>) =>
        Effect.scoped(Effect.flatMap(CdpConnection.connect(session.wsEndpoint), (cdp) => cdp.send(method, ...args)))
      // A second tab becomes the session's page; the original tab stays open beside it.
      const { targetId } = yield* browserTarget("Target.createTarget", { url: "about:blank" })
      yield* Effect.addFinalizer(() => Effect.ignore(browserTarget("Target.closeTarget", { targetId })))
      const tab = BrowserSession.of({ ...session, targetId })
      const inTab = <A>(expression: string) => Session.evaluate<A>(session.wsEndpoint, targetId, expression)
      const original = yield* evaluate<string>("location.href")

      const engine = yield* buildEngine().pipe(Effect.provideService(BrowserSession, tab))
      yield* engine.navigate(site.url("/forms.html"))
      const email = yield* inTab<{ x: number; y: number }>(
        `(() => { const r = ${byId("email")}.getBoundingClientRect(); return { x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2) } })()`
      )
      yield* script([
        [
          { variant: "mouse:click", ...email },
          { variant: "keyboard:type", content: "tab@example.com" }
        ]
      ])
      yield* engine.act(said("enter tab@example.com as the email"))

      assert.strictEqual(yield* inTab<string>(`${byId("email")}.value`), "tab@example.com")
      assert.strictEqual(yield* evaluate<string>("location.href"), original, "the other tab was not touched")
      assert.strictEqual((yield* engine.pageState()).url, site.url("/forms.html"))
    })
  )

  it.effect("a hanging model call is really stopped by an Effect timeout: the worker and its request are gone", () =>
    Effect.gen(function* () {
      const llm = yield* Llm
      const engine = yield* buildEngine()
      llm.faultNext({ hang: true })
      const started = Date.now()
      const exit = yield* Effect.exit(engine.act(said("wait for the model")).pipe(Effect.timeout("1 second")))
      assert.isTrue(Exit.isFailure(exit))
      assert.isBelow(Date.now() - started, 2_500)
      assert.isFalse(yield* engine.connected())
      // Terminating the worker closed its pending HTTP request.
      assert.isTrue(yield* poll(() => llm.pending() === 0))
      const next = yield* Effect.flip(engine.pageState())
      assert.strictEqual(next._tag, "NotInitialized")

      // The engine's own limit gives a typed Timeout the same way.
      const bounded = yield* buildEngine({ actTimeoutMs: 1_000 })
      llm.faultNext({ hang: true })
      const timeout = yield* Effect.flip(bounded.act(said("wait for the model")))
      if (timeout._tag !== "Timeout") return assert.fail(`expected Timeout, got ${timeout._tag}`)
      assert.strictEqual(timeout.timeoutMs, 1_000)
      assert.strictEqual(timeout.sideEffect, "possible")
      assert.isFalse(yield* bounded.connected())
      assert.isTrue(yield* poll(() => llm.pending() === 0))
    })
  )

  it.effect("a session's next connect reuses its kept worker; a worker stopped by a timed-out act is replaced", () =>
    Effect.gen(function* () {
      const llm = yield* Llm
      const site = yield* Site
      const keep = yield* Isolated.makeKeep()
      /** A connect that is released (disconnected) when the returned effect is run. */
      const connect = (options: Options = {}) =>
        Effect.gen(function* () {
          const scope = yield* Scope.make()
          const engine = yield* buildEngine(options).pipe(Scope.provide(scope))
          return { engine, release: Scope.close(scope, Exit.void) }
        }).pipe(Effect.provideService(Isolated.Keep, keep))
      const kept = () => keep.idle().map((idle) => idle.threadId)

      const first = yield* connect()
      yield* first.engine.navigate(site.url("/forms.html"))
      yield* script([])
      yield* first.engine.act(said("look at the page for the first connect"))
      yield* first.release
      const [thread] = kept()
      assert.isDefined(thread, "the released worker waits, loaded, for the next connect")

      const second = yield* connect()
      assert.deepStrictEqual(kept(), [], "the next connect took it")
      assert.strictEqual((yield* second.engine.pageState()).url, site.url("/forms.html"))
      // Its agent is new: the model is asked afresh, with nothing of the first connect's run.
      yield* script([[{ variant: "mouse:click", ...(yield* centreOf("submit")) }]])
      const run = yield* counted(second.engine.act(said("submit the form")))
      if (Exit.isFailure(run.exit)) return assert.fail(`act failed: ${run.exit.cause}`)
      assert.include(run.exit.value.description, "1 actions in 2 model turns")
      for (const request of run.requests) assert.notInclude(LlmServer.promptText(request), "first connect")
      yield* second.release
      assert.deepStrictEqual(kept(), [thread], "the same thread, kept again")

      // A call that hangs still really stops: the worker is terminated and not kept.
      const third = yield* connect({ actTimeoutMs: 1_000 })
      llm.faultNext({ hang: true })
      const timeout = yield* Effect.flip(third.engine.act(said("wait for the model")))
      assert.strictEqual(timeout._tag, "Timeout")
      assert.isTrue(yield* poll(() => llm.pending() === 0))
      yield* third.release
      assert.deepStrictEqual(kept(), [], "a terminated worker is not kept")

      const fourth = yield* connect()
      assert.strictEqual((yield* fourth.engine.pageState()).url, site.url("/forms.html"))
      yield* fourth.release
      assert.strictEqual(kept().length, 1)
      assert.notStrictEqual(kept()[0], thread, "a new worker replaced the stopped one")
    }).pipe(Effect.scoped)
  )

  it.effect("an unconfigured model fails the layer as not_configured before any request", () =>
    Effect.gen(function* () {
      const llm = yield* Llm
      const before = llm.requests.length
      const error = yield* Effect.flip(MagnitudeEngine.make({ model: { magnitude: "acme/vision-1" } }))
      assert.strictEqual(error._tag, "NotConfigured")
      assert.strictEqual(error.type, "not_configured")
      assert.isFalse(error.retryable)
      const unsupported = yield* Effect.flip(
        MagnitudeEngine.make({ model: { magnitude: "mistral/pixtral", apiKeys: { mistral: Redacted.make("k") } } })
      )
      assert.strictEqual(unsupported._tag, "NotConfigured")
      assert.include(unsupported.message, "base URL")
      assert.strictEqual(llm.requests.length, before)
    })
  )
})

layer(Layer.mergeAll(Layer.effect(Site, SiteServer.start), Layer.effect(Llm, LlmServer.start())), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("MagnitudeEngine with its browser killed", (it) => {
  it.effect("kill -9 of Chromium during an act fails it with cdp_closed within 2 s", () =>
    Effect.gen(function* () {
      const llm = yield* Llm
      const site = yield* Site
      const session = yield* TestBrowser.launchSession()
      const engine = yield* buildEngine().pipe(Effect.provideService(BrowserSession, session))
      yield* engine.navigate(site.url("/forms.html"))
      llm.faultNext({ hang: true })
      const before = llm.requests.length
      const fiber = yield* Effect.forkChild(engine.act(said("sign up")))
      assert.isTrue(yield* poll(() => llm.requests.length > before && llm.pending() > 0))

      process.kill(session.pid!, "SIGKILL")
      const killed = Date.now()
      const exit = yield* Fiber.await(fiber)
      assert.isBelow(Date.now() - killed, 2_000)
      const error = failureOf(exit)
      if (error._tag !== "CdpClosed") return assert.fail(`expected CdpClosed, got ${error._tag}: ${error.message}`)
      assert.strictEqual(error.engine, "magnitude")
      assert.isTrue(error.retryable)
      assert.isFalse(yield* engine.connected())
      // The worker was terminated, and with it the model call it was waiting on.
      assert.isTrue(yield* poll(() => llm.pending() === 0))
      const next = yield* Effect.flip(engine.screenshot())
      assert.oneOf(next._tag, ["CdpClosed", "NotInitialized"])
    })
  )
})

/** A plain Node process running the kill -9 scenario: it must end by itself once its work is done. */
const killScenario = `
import { Context, Effect, Fiber, Layer, Redacted } from ${JSON.stringify(import.meta.resolve("effect"))}
import { Engine } from ${JSON.stringify(new URL("../../src/Engine/Engine.ts", import.meta.url).href)}
import * as MagnitudeEngine from ${JSON.stringify(new URL("../../src/Engine/MagnitudeEngine.ts", import.meta.url).href)}
import { BrowserSession } from ${JSON.stringify(new URL("../../src/Engine/BrowserSession.ts", import.meta.url).href)}
import * as LlmServer from ${JSON.stringify(new URL("../fixtures/LlmServer.ts", import.meta.url).href)}
import * as TestBrowser from ${JSON.stringify(new URL("../support/TestBrowser.ts", import.meta.url).href)}
import { said } from ${JSON.stringify(new URL("../../src/Engine/Instruction.ts", import.meta.url).href)}

const program = Effect.gen(function* () {
  const llm = yield* LlmServer.start()
  llm.faultNext({ hang: true })
  const session = yield* TestBrowser.launchSession()
  const model = { magnitude: "openai/m", baseURLs: { openai: llm.origin + "/v1" }, apiKeys: { openai: Redacted.make("k") } }
  const context = yield* Layer.build(MagnitudeEngine.layer({ model })).pipe(Effect.provideService(BrowserSession, session))
  const fiber = yield* Effect.forkChild(Context.get(context, Engine).act(said("sign up")))
  while (llm.pending() === 0) yield* Effect.sleep("20 millis")
  process.kill(session.pid, "SIGKILL")
  const error = yield* Effect.flip(Fiber.join(fiber))
  return error._tag
})
const tag = await Effect.runPromise(Effect.scoped(program))
console.log(JSON.stringify({ tag, done: Date.now() }))
`

describe("MagnitudeEngine in a plain Node process", () => {
  it.live(
    "after kill -9 of Chromium mid-act the process exits on its own: no hanging promise, no live timer",
    () =>
      Effect.gen(function* () {
        // A file, not --eval: the engine's worker inherits the process's execArgv, and --input-type breaks a file worker.
        const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "magnitude-exit-")))
        yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
        const file = join(dir, "scenario.mjs")
        yield* Effect.promise(() => writeFile(file, killScenario))
        const result = yield* Effect.callback<{
          code: number | null
          stdout: string
          stderr: string
          exitedAt: number
        }>((resume) => {
          const child = execFile(
            process.execPath,
            ["--no-warnings", file],
            { timeout: 45_000, killSignal: "SIGKILL" },
            (error, stdout, stderr) =>
              resume(
                Effect.succeed({
                  code: error ? (error.code as number | null) : 0,
                  stdout,
                  stderr,
                  exitedAt: Date.now()
                })
              )
          )
          return Effect.sync(() => child.kill("SIGKILL"))
        })
        assert.strictEqual(result.code, 0, result.stderr)
        const line = result.stdout.trim().split("\n").at(-1) ?? ""
        const { tag, done } = JSON.parse(line) as { tag: string; done: number }
        assert.strictEqual(tag, "CdpClosed")
        assert.isBelow(result.exitedAt - done, 2_000, "nothing kept Node alive after the work was done")
      }),
    { timeout: 60_000 }
  )
})

describe("Magnitude worker failures", () => {
  const at: MagnitudeErrors.Attempt = { action: "click Submit", timeoutMs: 1_000, sideEffect: "possible" }
  it("a worker that crashed because the browser connection dropped is cdp_closed; one that stopped is not_initialized", () => {
    const crashed = MagnitudeErrors.workerStopped(
      {
        name: "WorkerExited",
        message: "the engine worker crashed: Target page, context or browser has been closed",
        dead: true
      },
      at
    )
    assert.deepInclude(crashed, { _tag: "CdpClosed", type: "cdp_closed", retryable: true, sideEffect: "possible" })
    const stopped = MagnitudeErrors.workerStopped(
      { name: "WorkerExited", message: "the engine worker stopped", dead: true },
      at
    )
    assert.strictEqual(stopped._tag, "NotInitialized")
  })
})
