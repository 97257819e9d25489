/**
 * Playwright's injected script (a third of a megabyte) is compiled once per document, in the world the snapshot reads
 * from, never in the page's own world, and while the page still waits for its images rather than on the first act's
 * path: watched through the scripts V8 reports compiling, while every act still reads back from the page what the
 * control shows.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, PubSub, Ref, Schedule } from "effect"
import * as Connection from "../../../src/Cdp/Connection.ts"
import { BrowserSession } from "../../../src/Engine/BrowserSession.ts"
import { type ActResult, Engine } from "../../../src/Engine/Engine.ts"
import { said } from "../../../src/Engine/Instruction.ts"
import * as PlaywrightEngine from "../../../src/Engine/PlaywrightEngine.ts"
import * as TestBrowser from "../../support/TestBrowser.ts"
import { waitFor } from "../../support/Wait.ts"
import { reportState, type WebPattern } from "../../Web/Pattern.ts"
import * as Server from "../../Web/Server.ts"

const form: WebPattern = {
  name: "form",
  class: "widgets",
  pages: {
    "/index.html": `<!doctype html><html lang="en"><title>Apply</title>
<h1>Apply</h1>
<label for="name">Full name</label>
<input id="name" oninput="this.value = this.value.replace(/\\b[a-z]/g, (c) => c.toUpperCase())">
<label for="country">Country</label>
<select id="country"><option value="">Choose</option><option value="no">Norway</option><option value="se">Sweden</option></select>
<label><input id="terms" type="checkbox"> I accept the terms</label>
<button type="button" id="send" onclick="this.textContent = 'Sent'">Send</button>
<div id="host"></div>
<iframe title="Extra" srcdoc="<label for=city>City</label><input id=city oninput='parent.reportSoon()'>"></iframe>
<script>
host.attachShadow({ mode: "open" }).innerHTML = '<label for="code">Promo code</label><input id="code">'
// Promo codes are capitals and digits only.
host.shadowRoot.getElementById("code").addEventListener("input", (e) => {
  e.target.value = e.target.value.replace(/[^A-Z0-9]/g, "")
})
function state() {
  return {
    name: document.getElementById("name").value,
    country: document.getElementById("country").value,
    terms: document.getElementById("terms").checked,
    send: document.getElementById("send").textContent,
    code: host.shadowRoot.getElementById("code").value,
    city: document.querySelector("iframe").contentDocument?.getElementById("city")?.value
  }
}
</script>${reportState}`
  },
  run: async () => undefined
}

/** The photo of the gallery page, held by the server until the test lets it go, as a slow image host holds a page's
 * load event: the page's DOM is parsed and shown long before it loads. */
let photo = Promise.withResolvers<void>()
let photoAsked = Promise.withResolvers<void>()
const gallery: WebPattern = {
  name: "gallery",
  class: "widgets",
  pages: {
    "/index.html": `<!doctype html><html lang="en"><title>Our team</title>
<h1>Our team</h1>
<img src="photo.png" alt="The team at the summer party" width="320" height="200">
<label for="email">Work email</label><input id="email" type="email">
<button type="button">Subscribe</button>`,
    "/photo.png": async (_req, res) => {
      photoAsked.resolve()
      await photo.promise
      res.writeHead(404).end()
    }
  },
  run: async () => undefined
}

/** A script V8 compiled in the page: its size and whether it ran in the page's own world. */
interface Compiled {
  readonly length: number
  readonly mainWorld: boolean
}

/**
 * Watches, over a CDP connection of its own, the scripts V8 compiles in the page while `act` runs, and answers the
 * large ones (Playwright's injected script is about 330 kB; the page's own scripts and Playwright's calls are small).
 */
const watching = <A, E, R>(act: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const session = yield* BrowserSession
      const cdp = yield* Connection.connect(session.wsEndpoint)
      const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId: session.targetId, flatten: true })
      const seen = yield* Ref.make<ReadonlyArray<Compiled>>([])
      const armed = yield* Ref.make(false)
      const events = yield* cdp.events
      const fiber = yield* PubSub.take(events).pipe(
        Effect.flatMap((event) =>
          event.method === "Debugger.scriptParsed" && (event.params.length ?? 0) > 100_000
            ? Effect.flatMap(Ref.get(armed), (on) =>
                on
                  ? Ref.update(seen, (all) => [
                      ...all,
                      {
                        length: event.params.length ?? 0,
                        mainWorld: (event.params.executionContextAuxData as { isDefault?: boolean })?.isDefault === true
                      }
                    ])
                  : Effect.void
              )
            : Effect.void
        ),
        Effect.forever,
        Effect.forkScoped
      )
      // Scripts compiled before the act are reported when the debugger is turned on: they are not counted.
      yield* cdp.send("Debugger.enable", {}, sessionId)
      yield* cdp.send("Runtime.evaluate", { expression: "1" }, sessionId)
      yield* Effect.sleep("200 millis")
      yield* Ref.set(armed, true)
      const result = yield* act
      yield* cdp.send("Runtime.evaluate", { expression: "1" }, sessionId)
      yield* Effect.sleep("200 millis")
      yield* Fiber.interrupt(fiber)
      yield* cdp.send("Debugger.disable", {}, sessionId)
      return { result, compiled: yield* Ref.get(seen) }
    })
  )

/** How far the session's page has loaded, asked behind the engine's back. */
const readyState = TestBrowser.evaluate<string>("document.readyState")

/** The engine on a freshly loaded form, and the page's last reported state. */
const onForm = Effect.gen(function* () {
  const server = yield* Server.Pages
  const engine = yield* Engine
  yield* engine.navigate(server.url("form", "/index.html"))
  const state = () => {
    const states = server.recorded("form").filter((r): r is { state: Record<string, unknown> } => "state" in r)
    return states.at(-1)?.state
  }
  /** What the page last reported, once it reports `expected` (or after ten seconds, for the assertion to say). */
  const shows = (expected: Record<string, unknown>) =>
    Effect.promise(async () => {
      const matches = () => Object.entries(expected).every(([k, v]) => state()?.[k] === v)
      await waitFor(matches)
      return state()
    })
  return { engine, state, shows }
})

const targetOf = (result: ActResult) => result.target

/** The sentence acts a person makes on the form, and what the page reports after each. */
const acts = [
  { kind: "fill", sentence: 'fill "Full name" with "ada lovelace"', shows: { name: "Ada Lovelace" } },
  { kind: "select", sentence: 'select "Sweden" in "Country"', shows: { country: "se" } },
  { kind: "check", sentence: 'check "I accept the terms"', shows: { terms: true } },
  { kind: "click", sentence: 'click "Send"', shows: { send: "Sent" } },
  { kind: "fill in an open shadow root", sentence: 'fill "Promo code" with "SPRING"', shows: { code: "SPRING" } },
  { kind: "fill in a frame", sentence: 'fill "City" with "Bergen"', shows: { city: "Bergen" } }
]

layer(Layer.mergeAll(TestBrowser.layer(), Server.Pages.layer([form, gallery])), {
  excludeTestServices: true,
  timeout: "90 seconds"
})("Playwright's injected script on the first act", (it) => {
  it.layer(PlaywrightEngine.layer({ elementWaitMs: 500, actionTimeoutMs: 6_000 }))("playwright", (it) => {
    /** The act, run after a navigation, compiled no large script in the page's world, and one at most per frame. */
    const compiledOnlyOutside = (compiled: ReadonlyArray<Compiled>) => {
      assert.deepStrictEqual(
        compiled.filter((c) => c.mainWorld),
        [],
        "no large script compiled in the page's own world"
      )
      assert.isAtMost(compiled.length, 2, "the snapshot's script once per frame")
    }

    for (const { kind, sentence, shows } of acts) {
      it.effect(`a ${kind} after a navigation compiles the injected script only outside the page's world`, () =>
        Effect.gen(function* () {
          const { engine, shows: reported } = yield* onForm
          const { compiled } = yield* watching(engine.act(said(sentence)))
          compiledOnlyOutside(compiled)
          assert.deepInclude(yield* reported(shows), shows)
        })
      )
    }

    it.effect("the injected script is compiled while the page still waits for an image, not after its load", () =>
      Effect.gen(function* () {
        const server = yield* Server.Pages
        const engine = yield* Engine
        photo = Promise.withResolvers<void>()
        photoAsked = Promise.withResolvers<void>()
        const { result: navigating, compiled } = yield* watching(
          Effect.gen(function* () {
            const navigating = yield* Effect.forkChild(engine.navigate(server.url("gallery", "/index.html")), {
              startImmediately: true
            })
            yield* Effect.promise(() => photoAsked.promise)
            // The page's DOM is parsed; its load waits for the photo.
            yield* readyState.pipe(
              Effect.repeat({ until: (state) => state !== "loading", schedule: Schedule.spaced("20 millis") })
            )
            yield* Effect.sleep("1500 millis")
            return navigating
          })
        )
        assert.strictEqual(yield* readyState, "interactive", "the page had not loaded while it was watched")
        photo.resolve()
        const loaded = yield* Fiber.join(navigating)
        assert.strictEqual(loaded.title, "Our team")
        assert.deepStrictEqual(
          compiled.map((c) => c.mainWorld),
          [false],
          "the injected script compiled once, outside the page's world, before the page loaded"
        )
        // The first act then compiles nothing large.
        const { compiled: after } = yield* watching(engine.act(said('fill "Work email" with "ada@example.com"')))
        assert.deepStrictEqual(after, [])
        assert.strictEqual(
          yield* TestBrowser.evaluate<string>("document.getElementById('email').value"),
          "ada@example.com"
        )
      })
    )

    it.effect("acts by reference after a snapshot compile no large script in the page's world", () =>
      Effect.gen(function* () {
        const { engine, shows } = yield* onForm
        const { result: elements, compiled: read } = yield* watching(engine.elements!())
        compiledOnlyOutside(read)
        const ref = (name: string) => elements.find((e) => e.name === name)!.ref
        const { compiled } = yield* watching(
          Effect.gen(function* () {
            yield* engine.act({ selector: ref("Full name"), method: "fill", arguments: ["grace"], description: "" })
            yield* engine.act({
              selector: ref("Country"),
              method: "selectOption",
              arguments: ["Norway"],
              description: ""
            })
            yield* engine.act({
              selector: ref("I accept the terms"),
              method: "check",
              arguments: [],
              description: ""
            })
            yield* engine.act({ selector: ref("City"), method: "fill", arguments: ["Oslo"], description: "" })
          })
        )
        assert.deepStrictEqual(compiled, [], "nothing large compiled again")
        const expected = { name: "Grace", country: "no", terms: true, city: "Oslo" }
        assert.deepInclude(yield* shows(expected), expected)
      })
    )

    it.effect("a fill answers what the field shows after the page changed it, read from the page", () =>
      Effect.gen(function* () {
        const { engine, state, shows } = yield* onForm
        // The page capitalises each word as it is typed: the answer says what the field shows.
        const typed = yield* engine.act(said('fill "Full name" with "ada lovelace"'))
        assert.strictEqual(targetOf(typed)?.value, "Ada Lovelace")
        const framed = yield* engine.act(said('fill "City" with "bergen"'))
        assert.strictEqual(targetOf(framed)?.value, "bergen")
        assert.deepInclude(yield* shows({ name: "Ada Lovelace", city: "bergen" }), {
          name: "Ada Lovelace",
          city: "bergen"
        })
        // A field that takes no letters shows nothing: the fill fails saying so.
        const refused = yield* Effect.flip(engine.act(said('fill "Promo code" with "spring"')))
        assert.strictEqual(refused.type, "verification_failed", refused.message)
        assert.strictEqual(state()?.code, "")
      })
    )
  })
})
