/**
 * Human takeover end to end: the session's Chromium runs headed on its own VNC display, a second Chromium plays the
 * person at the noVNC page, and the agent's side sees what the person did once they hand the browser back.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Logger, Option, Redacted, References } from "effect"
import { TestClock } from "effect/testing"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import type { EngineSpec } from "../../src/Engine/EngineSpec.ts"
import * as HumanEngine from "../../src/Engine/HumanEngine.ts"
import { said } from "../../src/Engine/Instruction.ts"
import * as PlaywrightEngine from "../../src/Engine/PlaywrightEngine.ts"
import * as Events from "../../src/Logging/Events.ts"
import { missingTools } from "../../src/Sandbox/Provider/Vnc/Tools.ts"
import { Vnc } from "../../src/Sandbox/Provider/Vnc.ts"
import { Sandbox } from "../../src/Sandbox/Sandbox.ts"
import { Display } from "../../src/Takeover/Display.ts"
import * as Handoff from "../../src/Takeover/Handoff.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import * as NoVncViewer from "../support/NoVncViewer.ts"
import { ownChildren, vncProcessNames } from "../support/OwnProcesses.ts"
import * as TestBrowser from "../support/TestBrowser.ts"
import { waitFor } from "../support/Wait.ts"

const missing = missingTools()
const skipped =
  missing.length === 0
    ? undefined
    : `needs ${missing.map((m) => m.tool).join(", ")}: apt-get install ${missing.map((m) => m.package).join(" ")} (bin/test does it as root)`
const named = (name: string) => (skipped === undefined ? name : `${name} [skipped: ${skipped}]`)

const playwright: EngineSpec = {
  id: { kind: "playwright" },
  capabilities: PlaywrightEngine.capabilities,
  layer: PlaywrightEngine.layer()
}

/** One session as a VNC deployment wires it: the stack, a headed Chromium on it, the Sandbox and the Handoff. */
const vncSession = (handoff: Handoff.HandoffOptions = {}) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      Layer.mergeAll(
        Sandbox.layer({ idleTimeoutMs: null }).pipe(Layer.provide(Vnc.layerLocalChromium())),
        Handoff.Handoff.layer(handoff).pipe(Layer.provideMerge(Vnc.layerDisplay))
      ).pipe(Layer.provideMerge(Vnc.layer()))
    )
    const human = yield* HumanEngine.spec().pipe(Effect.provide(context))
    return {
      sandbox: Context.get(context, Sandbox),
      handoff: Context.get(context, Handoff.Handoff),
      vnc: Context.get(context, Vnc),
      human
    }
  })

/** A display that only records being asked to let a person in and to end their connection. */
const recordingDisplay = () => {
  const calls: Array<string> = []
  let n = 0
  const service: Display["Service"] = {
    name: ":99",
    url: "http://127.0.0.1:1/",
    alive: Effect.succeed(true),
    admit: Effect.sync(() => {
      calls.push("admit")
      const password = `pw${++n}`
      return { link: Redacted.make(`http://127.0.0.1:1/#password=${password}`), password: Redacted.make(password) }
    }),
    dismiss: Effect.sync(() => void calls.push("dismiss"))
  }
  return { service, calls }
}

/** An event sink that keeps events and announces the first takeover. */
const takeoverSink = Effect.gen(function* () {
  const started = yield* Deferred.make<Events.Stamped>()
  const { events, sink } = Events.memory()
  const announcing: Events.EventSink = {
    emit: (event) =>
      sink
        .emit(event)
        .pipe(Effect.andThen(event.event === "human_takeover" ? Deferred.succeed(started, event) : Effect.void))
  }
  return { events, sink: announcing, started }
})

/** Every log line, to check the VNC password never reaches a log. */
const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ message }) => {
    lines.push(JSON.stringify(message))
  })
  return {
    lines,
    provide: <A, E, R>(self: Effect.Effect<A, E, R>) =>
      self.pipe(Effect.provide(Logger.layer([logger])), Effect.provideService(References.MinimumLogLevel, "All"))
  }
}

const sessionTarget = (sandbox: Sandbox["Service"]) =>
  Effect.gen(function* () {
    const status = yield* sandbox.status
    const pages = yield* CdpHttp.listTargets(`http://${new URL(status.wsEndpoint!).host}`)
    return { wsEndpoint: status.wsEndpoint!, targetId: pages.find((t) => t.type === "page")!.id }
  })

afterEach(async () => {
  const left = await waitFor(() => ownChildren(vncProcessNames).length === 0, 5_000)
  assert.isTrue(left, `processes left running: ${JSON.stringify(ownChildren(vncProcessNames))}`)
})

describe("HumanEngine", () => {
  it.live.skipIf(skipped)(
    named("act hands the page to a person over VNC; after resume the agent sees what they typed and clicked"),
    () => {
      const logs = captureLogs()
      return logs.provide(
        Effect.gen(function* () {
          const site = yield* SiteServer.start
          const { sandbox, handoff, vnc, human } = yield* vncSession()
          const { events, sink, started } = yield* takeoverSink
          yield* sandbox.use(playwright, (e) =>
            Effect.gen(function* () {
              yield* e.navigate(site.url("/forms.html"))
              yield* e.act(said('fill "Full name" with "Grace Hopper"'))
            })
          )
          const browserPid = (yield* sandbox.status).browserPid

          const act = yield* Effect.forkChild(
            sandbox
              .use(human, (e) => e.act(said("enter your email and press Submit")))
              .pipe(Effect.provideService(Events.Events, sink))
          )
          const event = yield* Deferred.await(started)
          assert.deepInclude(event, {
            event: "human_takeover",
            url: vnc.url,
            reason: "enter your email and press Submit"
          })
          const takeover = Option.getOrThrow(yield* handoff.active)
          assert.strictEqual(takeover.url, vnc.url)
          assert.strictEqual((yield* sandbox.status).engine, "human")

          // The person: sees the agent's page as it was left, fills the email and submits.
          const target = yield* sessionTarget(sandbox)
          const person = yield* NoVncViewer.open(Redacted.value(takeover.link))
          yield* person.click(yield* NoVncViewer.screenPoint(target, "#email"))
          yield* person.type("person@example.com")
          yield* person.click(yield* NoVncViewer.screenPoint(target, "#submit"))
          yield* NoVncViewer.until<string>(target, `document.getElementById("status").textContent`, (s) => s !== "")
          assert.isUndefined(act.pollUnsafe(), "the agent waits until the person is done")

          assert.isTrue(yield* handoff.resume())
          const result = yield* Fiber.join(act)
          assert.deepInclude(result, { success: true, description: "a person did: enter your email and press Submit" })
          assert.isTrue(Option.isNone(yield* handoff.active))

          // The agent's side, on a fresh automation client: the person's input and the agent's own are both there.
          const seen = yield* sandbox.use(playwright, (e) =>
            e.extract("form", {
              type: "object",
              properties: { email: { type: "string" }, fullname: { type: "string" }, text: { type: "string" } }
            })
          )
          assert.deepInclude(seen, { email: "person@example.com", fullname: "Grace Hopper" })
          assert.include((seen as { text: string }).text, "Submitted person@example.com")
          assert.strictEqual((yield* sandbox.status).browserPid, browserPid, "the same browser: no relaunch")
          const history = yield* sandbox.history
          assert.deepStrictEqual(
            history.map((h) => [h.from, h.to, h.success]),
            [
              ["playwright", "human", true],
              ["human", "playwright", true]
            ]
          )

          const password = Redacted.value(takeover.password)
          assert.notInclude(JSON.stringify(events), password)
          assert.isAbove(logs.lines.length, 0)
          assert.isFalse(
            logs.lines.some((line) => line.includes(password)),
            "the VNC password is in a log line"
          )
          // The link the operator reads in the log opens the session's page (noVNC then asks for the password).
          assert.isTrue(logs.lines.some((line) => line.includes(`open ${vnc.url}`)))
          // Once handed back, the person's connection is over and their link lets nobody in.
          assert.isFalse(yield* person.connected)
          assert.match(yield* NoVncViewer.attempt(Redacted.value(takeover.link)), /^refused/)
        })
      )
    },
    45_000
  )

  it.live.skipIf(skipped)(named("navigate asks the person, who opens the page from the address bar"), () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const { sandbox, handoff, human } = yield* vncSession()
      const { sink, started } = yield* takeoverSink
      const wanted = site.url("/plain.html")
      const navigation = yield* Effect.forkChild(
        sandbox.use(human, (e) => e.navigate(wanted)).pipe(Effect.provideService(Events.Events, sink))
      )
      assert.deepInclude(yield* Deferred.await(started), { event: "human_takeover", reason: `open ${wanted}` })

      const target = yield* sessionTarget(sandbox)
      const person = yield* NoVncViewer.open(Redacted.value(Option.getOrThrow(yield* handoff.active).link))
      yield* person.click(yield* NoVncViewer.screenPoint(target, "body"))
      yield* NoVncViewer.until<boolean>(target, "document.hasFocus()", (focused) => focused)
      yield* person.press("Control+l")
      // The address bar has the keyboard once the page has lost it: only then type, or keys land in the page.
      yield* NoVncViewer.until<boolean>(target, "document.hasFocus()", (focused) => !focused)
      yield* person.type(wanted)
      yield* person.press("Enter")
      yield* NoVncViewer.until<string>(target, "document.title", (title) => title === "Plain page")

      assert.isTrue(yield* handoff.resume())
      assert.deepStrictEqual(yield* Fiber.join(navigation), { url: wanted, title: "Plain page", status: null })
    })
  )

  it.live.skipIf(skipped)(
    named("handed over by a switch (browser.handoff), the page has the keyboard: the person's first keys reach it"),
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const { sandbox, handoff, human } = yield* vncSession()
        yield* sandbox.use(playwright, (e) => e.navigate(site.url("/forms.html")))
        const target = yield* sessionTarget(sandbox)
        yield* Session.evaluate(
          target.wsEndpoint,
          target.targetId,
          `window.keys = []; addEventListener("keydown", (e) => keys.push(e.key), true); document.getElementById("bio").focus()`
        )
        const takeover = yield* handoff.start("look at the bio")
        yield* sandbox.switchTo(human, "handoff: look at the bio")
        const person = yield* NoVncViewer.open(Redacted.value(takeover.link))
        // No click first: a person who starts typing at once types into the page, not into the address bar.
        yield* person.type("hi")
        const keys = yield* NoVncViewer.until<Array<string>>(target, "keys", (k) => k.length >= 2)
        assert.deepStrictEqual(keys, ["h", "i"])
        assert.strictEqual(
          yield* Session.evaluate<string>(target.wsEndpoint, target.targetId, 'document.getElementById("bio").value'),
          "hi"
        )
        assert.isTrue(yield* handoff.resume())
      }),
    45_000
  )

  it.effect.skipIf(skipped)(
    named("a person who does not finish within 120 s: HumanTimeout on the TestClock, and the takeover ends"),
    () =>
      Effect.gen(function* () {
        const { sandbox, handoff, human } = yield* vncSession()
        const { sink, started } = yield* takeoverSink
        const act = yield* Effect.forkChild(
          sandbox.use(human, (e) => e.act(said("solve the CAPTCHA"))).pipe(Effect.provideService(Events.Events, sink))
        )
        yield* Deferred.await(started)
        yield* TestClock.adjust("119 seconds")
        assert.isUndefined(act.pollUnsafe())
        assert.isTrue(Option.isSome(yield* handoff.active))
        yield* TestClock.adjust("1 second")
        const exit = yield* Fiber.await(act)
        const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        assert.strictEqual(reason?._tag, "Fail")
        assert.deepInclude(reason?._tag === "Fail" ? reason.error : {}, {
          _tag: "HumanTimeout",
          type: "human_timeout",
          timeoutMs: 120_000,
          retryable: false,
          engine: "human",
          action: "solve the CAPTCHA"
        })
        assert.isTrue(Option.isNone(yield* handoff.active), "automation has the browser again")

        // A call that is interrupted while it waits (the cascade's own limit) ends the takeover it started.
        const second = yield* takeoverSink
        const interrupted = yield* Effect.forkChild(
          sandbox.use(human, (e) => e.act(said("log in"))).pipe(Effect.provideService(Events.Events, second.sink))
        )
        yield* Deferred.await(second.started)
        yield* Fiber.interrupt(interrupted)
        assert.isTrue(Option.isNone(yield* handoff.active))
      }),
    30_000
  )

  it.effect(
    "Handoff: one takeover at a time, resumed by id or by anyone; await returns at once when none is active",
    () =>
      Effect.gen(function* () {
        const display = recordingDisplay()
        const handoff = yield* Handoff.make(display.service, { timeoutMs: 5_000, session: "s1" })
        const { events, sink } = Events.memory()
        assert.isFalse(yield* handoff.resume())
        yield* handoff.await()
        const first = yield* handoff.start("log in").pipe(Effect.provideService(Events.Events, sink))
        const again = yield* handoff.start("something else").pipe(Effect.provideService(Events.Events, sink))
        assert.strictEqual(again.id, first.id, "a takeover in progress is returned, not replaced")
        assert.lengthOf(events, 1)
        assert.deepInclude(events[0], { event: "human_takeover", url: "http://127.0.0.1:1/", reason: "log in" })
        assert.notProperty(events[0], "link")
        // The takeover let one person in with a password of its own; its link carries it, its url does not.
        assert.deepStrictEqual(display.calls, ["admit"])
        assert.strictEqual(Redacted.value(first.link), "http://127.0.0.1:1/#password=pw1")
        assert.strictEqual(first.session, "s1")
        assert.deepStrictEqual(first.resume, { tool: 'browser.resume {"session":"s1"}' })
        const waiter = yield* Effect.forkChild(
          handoff.await().pipe(Effect.ensuring(Effect.sync(() => display.calls.push("done"))))
        )
        assert.isFalse(yield* handoff.resume("another-id"))
        assert.isTrue(yield* handoff.resume(first.id))
        yield* Fiber.join(waiter)
        assert.isTrue(Option.isNone(yield* handoff.active))
        // The person's connection was ended before anyone waiting got the browser back.
        assert.deepStrictEqual(display.calls, ["admit", "dismiss", "done"])

        // A takeover that times out fails every waiter on it, whatever their own limits.
        yield* handoff.start("approve the payment")
        const patient = yield* Effect.forkChild(handoff.await({ timeoutMs: 60_000 }))
        const hasty = yield* Effect.forkChild(handoff.await())
        yield* TestClock.adjust("5 seconds")
        for (const waiter of [hasty, patient]) {
          const exit = yield* Fiber.await(waiter)
          const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
          assert.deepInclude(reason?._tag === "Fail" ? reason.error : {}, { _tag: "HumanTimeout", timeoutMs: 5_000 })
        }
        assert.isTrue(Option.isNone(yield* handoff.active))

        const error = Handoff.inControl(first, "browser.act")
        assert.deepInclude(error, {
          type: "human_in_control",
          retryable: true,
          url: first.url,
          engine: "human",
          action: "browser.act"
        })
        assert.include(error.message, "browser.resume")
      })
  )

  it.live.skipIf(skipped)(
    named("reads the page while a person has it (screenshot, pageState, page facts); observe is unsupported"),
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const { sandbox, handoff, human } = yield* vncSession()
        yield* sandbox.use(playwright, (e) => e.navigate(site.url("/forms.html")))
        yield* handoff.start("a judgement call")
        const checks = yield* sandbox.use(human, (e) =>
          Effect.gen(function* () {
            assert.deepStrictEqual(e.capabilities, HumanEngine.capabilities)
            assert.strictEqual(e.kind, "human")
            assert.isTrue(yield* e.connected())
            const shot = yield* e.screenshot()
            const full = yield* e.screenshot({ fullPage: true })
            const state = yield* e.pageState()
            const facts = (yield* e.extract("the form")) as { fields: Array<Record<string, unknown>> }
            const filled = yield* e.extract("the name", {
              type: "object",
              properties: { fullname: { type: "string" } }
            })
            const cannot = yield* e
              .extract("a summary", { type: "object", properties: { summary: { type: "string" } } })
              .pipe(Effect.flip)
            const observe = yield* e.observe(said("the submit button")).pipe(Effect.flip)
            return { shot, full, state, facts, filled, cannot, observe }
          })
        )
        const png = [0x89, 0x50, 0x4e, 0x47]
        assert.deepStrictEqual([...checks.shot.slice(0, 4)], png)
        const height = (bytes: Uint8Array) => Buffer.from(bytes).readUInt32BE(20)
        assert.isAbove(height(checks.full), height(checks.shot) + 1_000, "the full page is taller than the viewport")
        assert.strictEqual(checks.state.url, site.url("/forms.html"))
        assert.strictEqual(checks.state.title, "Sign up")
        assert.deepInclude(checks.facts.fields, {
          label: "Full name",
          name: "fullname",
          type: "text",
          value: "Ada Lovelace"
        })
        assert.deepStrictEqual(checks.filled, { fullname: "Ada Lovelace" })
        assert.deepInclude(checks.cannot, { _tag: "Unsupported", engine: "human" })
        assert.include(checks.cannot.message, "the human engine cannot fill")
        assert.deepInclude(checks.observe, { _tag: "Unsupported", engine: "human" })
        assert.isTrue(Option.isSome(yield* handoff.active), "reading the page leaves the person in control")
      }),
    30_000
  )

  it.live.skipIf(skipped)(named("does not connect to a headless browser or without a running VNC stack"), () =>
    Effect.gen(function* () {
      const vnc = yield* Layer.build(Vnc.layer()).pipe(Effect.map((c) => Context.get(c, Vnc)))
      const display = { name: vnc.display, url: vnc.url, alive: vnc.alive, admit: vnc.admit, dismiss: vnc.dismiss }
      const handoff = yield* Handoff.make(display)
      const headless = yield* TestBrowser.launchSession()
      const connect = (stack: Vnc["Service"]) =>
        Layer.build(HumanEngine.layer()).pipe(
          Effect.map((c) => Context.get(c, Engine)),
          Effect.provideService(BrowserSession, headless),
          Effect.provideService(Display, { ...display, name: stack.display, alive: stack.alive }),
          Effect.provideService(Handoff.Handoff, handoff),
          Effect.flip
        )
      const onHeadless = yield* connect(vnc)
      assert.deepInclude(onHeadless, { _tag: "NotConfigured", engine: "human", retryable: false })
      assert.include(onHeadless.message, "headless")

      const stopped = yield* connect({ ...vnc, alive: Effect.succeed(false) })
      assert.deepInclude(stopped, { _tag: "NotConfigured", engine: "human" })
      assert.include(stopped.message, `the VNC stack on ${vnc.display} is not running`)
    })
  )
})
