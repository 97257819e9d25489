/**
 * The LLM-free engine against a real Chromium and the fixture sites. Page effects are read back through a separate
 * raw CDP connection, so a test sees what a person looking at the browser would see.
 */

import type { AddressInfo } from "node:net"
import { createServer } from "node:net"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { said } from "../../src/Engine/Instruction.ts"
import type { PageFacts } from "../../src/Engine/PageFacts.ts"
import * as PlaywrightEngine from "../../src/Engine/PlaywrightEngine.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { isAlive } from "../support/Processes.ts"
import * as TestBrowser from "../support/TestBrowser.ts"

class Site extends Context.Service<Site, SiteServer.SiteServer>()("test/Site") {}

const evaluate = <A>(expression: string) =>
  Effect.gen(function* () {
    const session = yield* BrowserSession
    return yield* Session.evaluate<A>(session.wsEndpoint, session.targetId, expression)
  })
const byId = (id: string) => `document.getElementById(${JSON.stringify(id)})`
const inputValue = (id: string) => evaluate<string>(`${byId(id)}.value`)
const checkedOf = (id: string) => evaluate<boolean>(`${byId(id)}.checked`)
const textOf = (id: string) => evaluate<string>(`${byId(id)}.textContent`)
const scrollY = evaluate<number>("window.scrollY")

const open = (path: string) =>
  Effect.gen(function* () {
    const site = yield* Site
    const engine = yield* Engine
    return yield* engine.navigate(site.url(path))
  })

/** A loopback port that nothing listens on. */
const unusedPort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })
)

/** Width and height from a PNG's IHDR chunk. */
const pngSize = (png: Uint8Array) => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}
/** How many pixels of a PNG are plainly red. */
const redPixels = async (png: Uint8Array) => {
  const sharp = (await import("sharp")).default
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true })
  let n = 0
  for (let i = 0; i < data.length; i += info.channels) if (data[i]! > 200 && data[i + 1]! < 80 && data[i + 2]! < 80) n++
  return n
}
const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

const browserAndSite = Layer.mergeAll(TestBrowser.layer(), Layer.effect(Site, SiteServer.start))

layer(browserAndSite, { excludeTestServices: true, timeout: "60 seconds" })("PlaywrightEngine", (it) => {
  it.layer(PlaywrightEngine.layer({ elementWaitMs: 500 }))("on the session's page", (it) => {
    it.effect("navigates and reports where the page is", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        const site = yield* Site
        assert.strictEqual(engine.kind, "playwright")
        assert.strictEqual(engine.mode, undefined)
        assert.deepStrictEqual(engine.capabilities, PlaywrightEngine.capabilities)
        assert.isTrue(yield* engine.connected())

        const result = yield* engine.navigate(site.url("/forms.html"))
        assert.deepStrictEqual(result, { url: site.url("/forms.html"), title: "Sign up", status: 200 })
        // The session's own target (the one other engines drive) is the page that moved.
        assert.strictEqual(yield* evaluate<string>("document.title"), "Sign up")

        const state = yield* engine.pageState()
        assert.strictEqual(state.url, site.url("/forms.html"))
        assert.strictEqual(state.title, "Sign up")
        assert.strictEqual(state.scrollX, 0)
        assert.strictEqual(state.scrollY, 0)
        assert.isBelow(Math.abs(Date.parse(state.timestamp) - Date.now()), 60_000)

        const missing = yield* engine.navigate(site.url("/no-such-page.html"))
        assert.strictEqual(missing.status, 404)
      })
    )

    it.effect("types navigation failures", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        const invalid = yield* Effect.flip(engine.navigate("not a url"))
        assert.strictEqual(invalid._tag, "InvalidInput")
        assert.include(invalid.message, "not a url")

        const closedPort = `http://127.0.0.1:${yield* unusedPort}/`
        const refused = yield* Effect.flip(engine.navigate(closedPort))
        if (refused._tag !== "NavigationFailed") return assert.fail(`expected NavigationFailed, got ${refused._tag}`)
        assert.strictEqual(refused.url, closedPort)
        assert.include(refused.message, "ERR_CONNECTION_REFUSED")
        assert.strictEqual(refused.engine, "playwright")

        // A failed navigation leaves nothing behind that disturbs the next one.
        const next = yield* open("/forms.html")
        assert.strictEqual(next.title, "Sign up")
      })
    )

    it.effect("fill, select, check, uncheck and click fill in and submit the form", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/forms.html")

        const filled = yield* engine.act(said('fill "Email" with "ada@example.com"'))
        assert.strictEqual(filled.action?.method, "fill")
        assert.deepStrictEqual(filled.action?.arguments, ["ada@example.com"])
        assert.strictEqual(filled.action?.description, 'textbox "Email"')
        assert.strictEqual(filled.description, 'filled textbox "Email" with "ada@example.com"')
        yield* engine.act(said("fill Full name with Grace Hopper"))
        yield* engine.act(said('select "Green" in "Colour"'))
        yield* engine.act(said('check "I agree"'))
        yield* engine.act(said("uncheck Send me news"))
        yield* engine.act(said('click "Submit"'))

        assert.strictEqual(yield* inputValue("email"), "ada@example.com")
        assert.strictEqual(yield* inputValue("fullname"), "Grace Hopper")
        assert.strictEqual(yield* inputValue("colour"), "green")
        assert.isTrue(yield* checkedOf("agree"))
        assert.isFalse(yield* checkedOf("news"))
        assert.strictEqual(yield* textOf("status"), "Submitted ada@example.com")

        const noOption = yield* Effect.flip(engine.act(said('select "Purple" from "Colour"')))
        if (noOption._tag !== "ElementNotFound") return assert.fail(`expected ElementNotFound, got ${noOption._tag}`)
        assert.strictEqual(noOption.target, 'option "Purple"')
        assert.include(noOption.message, '"Blue"')
        assert.strictEqual(yield* inputValue("colour"), "green")
      })
    )

    it.effect("type, press, double click and hover reach the page", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/forms.html")

        yield* engine.act(said('type "hello" into "Search"'))
        yield* engine.act(said('press Enter in "Search"'))
        assert.strictEqual(yield* textOf("search-result"), "Searched for hello")

        // Without a target the key goes to the focused element (still the search box).
        yield* engine.act(said('type " world"'))
        yield* engine.act(said("press enter"))
        assert.strictEqual(yield* textOf("search-result"), "Searched for hello world")

        yield* engine.act(said('double click "Double me"'))
        assert.strictEqual(yield* textOf("double-result"), "Double clicks: 1")

        yield* engine.act(said("hover Menu"))
        assert.strictEqual(yield* textOf("hover-result"), "Menu opened")
      })
    )

    it.effect("scrolls and moves through history", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        const site = yield* Site
        yield* open("/forms.html")
        yield* open("/long.html")
        const bottom = yield* evaluate<number>("document.documentElement.scrollHeight - window.innerHeight")
        assert.isAbove(bottom, 1000)

        const down = yield* engine.act(said("scroll down"))
        const afterDown = yield* scrollY
        assert.isAbove(afterDown, 0)
        assert.isBelow(afterDown, bottom)
        assert.strictEqual(down.action?.method, "scrollTo")

        yield* engine.act(said("scroll to bottom"))
        assert.approximately(yield* scrollY, bottom, 1)
        yield* engine.act(said("scroll up"))
        assert.isBelow(yield* scrollY, bottom)
        yield* engine.act(said("scroll to top"))
        assert.strictEqual(yield* scrollY, 0)

        // The scroll Action replays to the same place.
        yield* engine.act(down.action!)
        assert.approximately(yield* scrollY, afterDown, 2)

        yield* engine.act(said("go back"))
        assert.strictEqual(yield* evaluate<string>("location.href"), site.url("/forms.html"))
        yield* engine.act(said("go forward"))
        assert.strictEqual(yield* evaluate<string>("location.href"), site.url("/long.html"))
        const noForward = yield* Effect.flip(engine.act(said("go forward")))
        assert.strictEqual(noForward._tag, "ActionFailed")
      })
    )

    it.effect("ambiguous and missing targets fail with the target named and nothing clicked", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/ambiguous.html")

        const ambiguous = yield* Effect.flip(engine.act(said('click "Delete"')))
        if (ambiguous._tag !== "AmbiguousTarget") return assert.fail(`expected AmbiguousTarget, got ${ambiguous._tag}`)
        assert.strictEqual(ambiguous.target, 'button or link named "Delete"')
        // Each candidate says what it sits in: the row of its order.
        assert.deepStrictEqual(ambiguous.candidates, [
          'button "Delete" in row "Order 1"',
          'button "Delete" in row "Order 2"'
        ])
        assert.strictEqual(ambiguous.sideEffect, "none")
        assert.strictEqual(ambiguous.action, 'click "Delete"')
        assert.strictEqual(yield* textOf("status"), "")

        const missing = yield* Effect.flip(engine.act(said('click "Refund"')))
        if (missing._tag !== "ElementNotFound") return assert.fail(`expected ElementNotFound, got ${missing._tag}`)
        assert.strictEqual(missing.target, 'button or link named "Refund"')
        assert.include(missing.message, 'button "Archive all"')
        assert.isTrue(missing.retryable)

        // A unique prefix is one clear best.
        yield* engine.act(said("click Archive"))
        assert.strictEqual(yield* textOf("status"), "Archived")

        yield* open("/forms.html")
        const noField = yield* Effect.flip(engine.act(said('fill "Phone number" with "123"')))
        if (noField._tag !== "ElementNotFound") return assert.fail(`expected ElementNotFound, got ${noField._tag}`)
        assert.strictEqual(noField.target, 'text field named "Phone number"')

        const nonsense = yield* Effect.flip(engine.act(said("dance with the Submit button")))
        assert.strictEqual(nonsense._tag, "InvalidInput")
        assert.include(nonsense.message, '"dance"')
        assert.include(nonsense.message, 'click "Submit"')
      })
    )

    it.effect("observe ranks the intended element first and its Action replays through act", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/forms.html")

        const [field] = yield* engine.observe(said("the email field"))
        assert.strictEqual(field?.description, 'textbox "Email" in section "Your details"')
        // Observe hands out element references: `aria-ref=e12`, acted on by this engine.
        assert.match(field?.selector ?? "", /^aria-ref=(f\d+)?e\d+$/)

        const [submit] = yield* engine.observe(said("Submit"))
        assert.strictEqual(submit?.description, 'button "Submit" in section "Your details"')
        assert.strictEqual(submit?.method, "click")

        const [fill] = yield* engine.observe(said('fill "Email" with "observed@example.com"'))
        assert.strictEqual(fill?.method, "fill")
        assert.deepStrictEqual(fill?.arguments, ["observed@example.com"])
        assert.strictEqual(yield* inputValue("email"), "", "observe must not act")

        yield* engine.act(fill!)
        yield* engine.act(submit!)
        assert.strictEqual(yield* textOf("status"), "Submitted observed@example.com")

        const [agree] = yield* engine.observe(said('check "agree"'))
        assert.strictEqual(agree?.description, 'checkbox "I agree to the terms" in section "Your details"')

        assert.deepStrictEqual(yield* engine.observe(said("zebra crossing")), [])
        yield* open("/ambiguous.html")
        const deletes = yield* engine.observe(said('click "Delete"'))
        assert.deepStrictEqual(
          deletes.slice(0, 2).map((a) => a.description),
          ['button "Delete" in row "Order 1"', 'button "Delete" in row "Order 2"']
        )
        yield* engine.act(deletes[1]!)
        assert.strictEqual(yield* textOf("status"), "Deleted order 2")
      })
    )

    it.effect("runs Actions and types selector and method problems", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/ambiguous.html")
        const action = (selector: string, method: string, args: ReadonlyArray<string> = []) =>
          engine.act({ selector, method, arguments: args, description: "" })

        const many = yield* Effect.flip(action("button.delete", "click"))
        if (many._tag !== "AmbiguousTarget") return assert.fail(`expected AmbiguousTarget, got ${many._tag}`)
        assert.strictEqual(many.target, "button.delete")
        assert.strictEqual(many.candidates.length, 2)

        const none = yield* Effect.flip(action("xpath=/html/body/button[9]", "click"))
        if (none._tag !== "ElementNotFound") return assert.fail(`expected ElementNotFound, got ${none._tag}`)
        assert.strictEqual(none.target, "xpath=/html/body/button[9]")

        const unknown = yield* Effect.flip(action("button.delete >> nth=0", "teleport"))
        assert.strictEqual(unknown._tag, "Unsupported")
        assert.include(unknown.message, '"teleport"')
        assert.isFalse(unknown.retryable)

        const failed = yield* Effect.flip(action("xpath=/html/body/button[1]", "fill", ["text"]))
        if (failed._tag !== "ActionFailed") return assert.fail(`expected ActionFailed, got ${failed._tag}`)
        assert.strictEqual(failed.sideEffect, "possible")
        assert.strictEqual(failed.engine, "playwright")
        assert.strictEqual(failed.action, "fill xpath=/html/body/button[1]")

        const done = yield* action("xpath=/html/body/table/tbody/tr[2]/td[2]/button", "click")
        assert.strictEqual(done.success, true)
        assert.strictEqual(yield* textOf("status"), "Deleted order 2")

        // A grammar act returns the concrete Action it ran; replaying it on a fresh page does the same.
        const archived = yield* engine.act(said('click "Archive all"'))
        yield* open("/ambiguous.html")
        yield* engine.act(archived.action!)
        assert.strictEqual(yield* textOf("status"), "Archived")

        yield* open("/long.html")
        yield* action("#panel", "scrollTo", ["100%"])
        assert.isAbove(yield* evaluate<number>(`${byId("panel")}.scrollTop`), 800)
        yield* action("#bottom", "scrollIntoView")
        assert.isAbove(yield* scrollY, 1000)
      })
    )

    it.effect("extracts page facts with labels and current values, never a password", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        const site = yield* Site
        yield* open("/forms.html")
        yield* engine.act(said('fill "Password" with "s3cret-pass"'))
        yield* engine.act(said('check "I agree"'))
        yield* engine.act(said('select "Blue" in "Colour"'))

        const facts = (yield* engine.extract("everything")) as PageFacts
        assert.strictEqual(facts.url, site.url("/forms.html"))
        assert.strictEqual(facts.title, "Sign up")
        assert.deepStrictEqual(facts.headings, ["Sign up", "Your details"])
        assert.deepInclude(facts.links, { text: "Long page", href: site.url("/long.html") })
        assert.include(facts.text, "Double clicks: 0")
        assert.notInclude(facts.text, "Profile", "hidden menu items are not visible text")

        const field = (label: string) => facts.fields.find((f) => f.label === label)
        assert.deepStrictEqual(field("Full name"), {
          label: "Full name",
          name: "fullname",
          type: "text",
          value: "Ada Lovelace"
        })
        assert.deepStrictEqual(field("I agree to the terms"), {
          label: "I agree to the terms",
          name: "agree",
          type: "checkbox",
          value: "on",
          checked: true
        })
        assert.deepStrictEqual(field("Colour"), {
          label: "Colour",
          name: "colour",
          type: "select-one",
          value: "blue",
          options: ["Choose one", "Red", "Green", "Blue"]
        })
        assert.strictEqual(field("Search")?.type, "search")
        assert.strictEqual(field("Password")?.value, "[redacted]")
        assert.isUndefined(
          facts.fields.find((f) => f.name === "csrf"),
          "hidden inputs are not fields"
        )
        const json = JSON.stringify(facts)
        assert.notInclude(json, "s3cret-pass")
        assert.notInclude(json, "hunter2")
      })
    )

    it.effect("fills a schema of page facts and form fields, and refuses one it cannot fill", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/forms.html")
        yield* engine.act(said('fill "Email" with "ada@example.com"'))

        const filled = yield* engine.extract("the form", {
          type: "object",
          properties: {
            title: { type: "string" },
            email: { type: "string" },
            fullName: { type: "string" },
            "send me news": { type: "boolean" },
            colour: { type: "string" },
            password: { type: "string" }
          }
        })
        assert.deepStrictEqual(filled, {
          title: "Sign up",
          email: "ada@example.com",
          fullName: "Ada Lovelace",
          "send me news": true,
          colour: "",
          password: "[redacted]"
        })

        const refused = yield* Effect.flip(
          engine.extract("prices", { type: "object", properties: { title: {}, price: { type: "number" }, rating: {} } })
        )
        assert.strictEqual(refused._tag, "Unsupported")
        assert.include(refused.message, '"price", "rating"')
        assert.notInclude(refused.message, '"title"')
        assert.isFalse(refused.retryable)

        const notObject = yield* Effect.flip(engine.extract("names", { type: "array", items: { type: "string" } }))
        assert.strictEqual(notObject._tag, "Unsupported")
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
        const innerHeight = yield* evaluate<number>("window.innerHeight")
        assert.strictEqual(pngSize(viewport).height, innerHeight)
        assert.isAbove(pngSize(full).height, innerHeight * 3)
      })
    )

    it.effect("hides the focused field's caret in its screenshot and shows it again after", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        const session = yield* BrowserSession
        yield* open("/screens/caret.html")
        yield* evaluate(`${byId("field")}.focus()`)
        // The page's own red caret blinks: some of eight captures taken behind the engine's back show it.
        const redIn = (png: Uint8Array) => Effect.promise(() => redPixels(png))
        const behind = Session.withTarget(session.wsEndpoint, session.targetId, (cdp, sessionId) =>
          cdp
            .send("Page.captureScreenshot", { format: "png" }, sessionId)
            .pipe(Effect.map((shot) => new Uint8Array(Buffer.from(shot.data, "base64"))))
        )
        const blinking = (yield* Effect.forEach(Array.from({ length: 8 }), () =>
          Effect.andThen(Effect.sleep("130 millis"), Effect.flatMap(behind, redIn))
        )).filter((n) => n > 0)
        assert.isAbove(blinking.length, 0)
        const shots = yield* Effect.forEach(Array.from({ length: 6 }), () =>
          Effect.andThen(Effect.sleep("130 millis"), Effect.flatMap(engine.screenshot(), redIn))
        )
        assert.deepStrictEqual(shots, [0, 0, 0, 0, 0, 0])
        assert.strictEqual(yield* evaluate<string>(`getComputedStyle(${byId("field")}).caretColor`), "rgb(255, 0, 0)")
        const after = (yield* Effect.forEach(Array.from({ length: 8 }), () =>
          Effect.andThen(Effect.sleep("130 millis"), Effect.flatMap(behind, redIn))
        )).filter((n) => n > 0)
        assert.isAbove(after.length, 0)
      })
    )
  })

  it.effect("connecting fails typed on a dead endpoint and falls back to the first page when the target is gone", () =>
    Effect.gen(function* () {
      const session = yield* BrowserSession
      const site = yield* Site
      const port = yield* unusedPort
      const dead = BrowserSession.of({ ...session, wsEndpoint: `ws://127.0.0.1:${port}/devtools/browser/gone` })
      const unreachable = yield* Effect.flip(
        Layer.build(PlaywrightEngine.layer().pipe(Layer.provide(Layer.succeed(BrowserSession, dead))))
      )
      if (unreachable._tag !== "EndpointUnreachable")
        return assert.fail(`expected EndpointUnreachable, got ${unreachable._tag}`)
      assert.strictEqual(unreachable.endpoint, dead.wsEndpoint)

      const gone = BrowserSession.of({ ...session, targetId: "0000GONE" })
      const fallback = Context.get(
        yield* Layer.build(PlaywrightEngine.layer().pipe(Layer.provide(Layer.succeed(BrowserSession, gone)))),
        Engine
      )
      yield* fallback.navigate(site.url("/ambiguous.html"))
      // The browser has one page, so the fallback drove the session's page.
      assert.strictEqual(yield* evaluate<string>("document.title"), "Orders")
    })
  )

  it.effect("releasing the engine leaves the browser running, and the next engine sees the same page", () =>
    Effect.gen(function* () {
      const session = yield* BrowserSession
      const site = yield* Site
      const scope = yield* Scope.make()
      const first = Context.get(yield* Layer.buildWithScope(PlaywrightEngine.layer(), scope), Engine)
      yield* first.navigate(site.url("/forms.html"))
      yield* first.act(said('fill "Email" with "kept@example.com"'))
      yield* first.act(said('check "I agree"'))
      yield* Scope.close(scope, Exit.void)

      assert.isFalse(yield* first.connected())
      assert.isNotNull(session.pid)
      assert.isTrue(isAlive(session.pid!))
      const version = yield* CdpHttp.version(session.httpEndpoint)
      assert.include(version.webSocketDebuggerUrl, "/devtools/browser/")
      const closedCall = yield* Effect.flip(first.pageState())
      assert.strictEqual(closedCall._tag, "CdpClosed")

      const second = Context.get(yield* Layer.build(PlaywrightEngine.layer()), Engine)
      const facts = (yield* second.extract("")) as PageFacts
      assert.strictEqual(facts.url, site.url("/forms.html"))
      assert.strictEqual(facts.fields.find((f) => f.name === "email")?.value, "kept@example.com")
      assert.isTrue(facts.fields.find((f) => f.name === "agree")?.checked)
    })
  )
})
