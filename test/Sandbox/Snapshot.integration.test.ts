/** Artifacts read over raw CDP from a real page: masked screenshots and the failure snapshot. */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import * as Redact from "../../src/Logging/Redact.ts"
import * as Snapshot from "../../src/Sandbox/Snapshot.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import * as TestBrowser from "../support/TestBrowser.ts"

const evaluate = <A>(session: BrowserSession["Service"], expression: string) =>
  Session.evaluate<A>(session.wsEndpoint, session.targetId, expression)

layer(Layer.merge(TestBrowser.layer(), Layer.empty))("Snapshot", (it) => {
  describe("screenshots", () => {
    it.effect("mask typed text for the capture, then leave the page as it was", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const site = yield* SiteServer.start
        yield* Session.navigate(session.wsEndpoint, session.targetId, site.url("/forms.html"))
        const empty = yield* Snapshot.screenshot(Session.fresh(session))
        yield* evaluate(session, `document.querySelector("#email").value = "4111111111111111 secret@example.test"`)
        const masked = yield* Snapshot.screenshot(Session.fresh(session))
        const raw = yield* Session.withTarget(session.wsEndpoint, session.targetId, (cdp, sessionId) =>
          cdp.send("Page.captureScreenshot", Snapshot.captureParams, sessionId)
        )
        assert.strictEqual(Buffer.from(masked).subarray(1, 4).toString(), "PNG")
        assert.notDeepEqual(Buffer.from(raw.data, "base64"), Buffer.from(empty), "unmasked, the typed value shows")
        assert.deepEqual(Buffer.from(masked), Buffer.from(empty), "masked, the typed value leaves no trace")
        const unmasked = yield* evaluate<boolean>(session, `!document.getElementById("switchyard-mask")`)
        assert.isTrue(unmasked, "the mask is removed after the capture")
        const value = yield* evaluate<string>(session, `document.querySelector("#email").value`)
        assert.include(value, "secret@example.test", "the page's own value is untouched")
      })
    )
    it.effect("mask what is typed in a frame of the page's origin, as in the page itself", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const site = yield* SiteServer.start
        yield* Session.navigate(session.wsEndpoint, session.targetId, site.url("/forms.html"))
        // A sign-in form in a same-origin frame, as payment and login widgets embed theirs.
        yield* evaluate(
          session,
          `new Promise((done) => {
            const frame = document.createElement("iframe")
            frame.style.cssText = "width:400px;height:120px;border:0"
            frame.onload = () => done(true)
            frame.srcdoc = '<label>Password <input id="secret" style="font-size:28px"></label>'
            document.body.prepend(frame)
          })`
        )
        const empty = yield* Snapshot.screenshot(Session.fresh(session))
        yield* evaluate(
          session,
          `document.querySelector("iframe").contentDocument.getElementById("secret").value = "hunter2 WWWW"`
        )
        const masked = yield* Snapshot.screenshot(Session.fresh(session))
        const raw = yield* Session.withTarget(session.wsEndpoint, session.targetId, (cdp, sessionId) =>
          cdp.send("Page.captureScreenshot", Snapshot.captureParams, sessionId)
        )
        assert.notDeepEqual(Buffer.from(raw.data, "base64"), Buffer.from(empty), "unmasked, the typed value shows")
        assert.deepEqual(Buffer.from(masked), Buffer.from(empty), "masked, the frame's typed value leaves no trace")
        const left = yield* evaluate<number>(
          session,
          `document.querySelector("iframe").contentDocument.adoptedStyleSheets.length`
        )
        assert.strictEqual(left, 0, "the frame's mask is removed after the capture")
      })
    )
  })

  describe("the mask", () => {
    it.effect("changes paint only: typed text keeps its layout, so DOM work may run during a capture", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const site = yield* SiteServer.start
        yield* Session.navigate(session.wsEndpoint, session.targetId, site.url("/forms.html"))
        const width = `(() => {
          let e = document.getElementById("typed")
          if (!e) {
            e = document.createElement("span")
            e.id = "typed"
            e.contentEditable = "true"
            e.textContent = "WWWW iiii typed by the agent"
            document.body.appendChild(e)
          }
          return e.getBoundingClientRect().width
        })()`
        const before = yield* evaluate<number>(session, width)
        yield* evaluate(session, Redact.maskInputsScript)
        const masked = yield* evaluate<number>(session, width)
        yield* evaluate(session, Redact.unmaskInputsScript)
        assert.isAbove(before, 0)
        assert.strictEqual(masked, before)
      })
    )
  })

  describe("failure snapshot", () => {
    it.effect("holds the accessibility tree and the DOM around what the failure looked for", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const site = yield* SiteServer.start
        yield* Session.navigate(session.wsEndpoint, session.targetId, site.url("/forms.html"))
        const snapshot = (yield* Snapshot.failureSnapshot(Session.fresh(session), 'textbox named "Email"')) as {
          accessibilityTree: Array<{ role?: string; name?: string }>
          dom: {
            looked_for: string
            matches: Array<{ element: { tag: string; id?: string }; parent: object; siblings: Array<object> }>
          }
        }
        assert.isTrue(snapshot.accessibilityTree.some((n) => n.role === "textbox" && n.name === "Email"))
        assert.strictEqual(snapshot.dom.looked_for, "email")
        assert.isTrue(snapshot.dom.matches.some((m) => m.element.id === "email" || m.element.tag === "label"))
        assert.isAbove(snapshot.dom.matches[0]!.siblings.length, 0)
      })
    )
  })
})
