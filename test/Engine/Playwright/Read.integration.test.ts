/**
 * What a read (extract) answers when the page changed since the last one, or did not: the page's text and controls as
 * it shows them at the call, references that act on what they name, and text passed on exactly as the page holds it.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Session from "../../../src/Cdp/Session.ts"
import { BrowserSession } from "../../../src/Engine/BrowserSession.ts"
import { Engine } from "../../../src/Engine/Engine.ts"
import * as PlaywrightEngine from "../../../src/Engine/PlaywrightEngine.ts"
import * as TestBrowser from "../../support/TestBrowser.ts"
import { recordScript, type WebPattern } from "../../Web/Pattern.ts"
import * as Server from "../../Web/Server.ts"

/** Text a page may hold that a careless hand-over would change: quotes, backslashes, astral characters, a lone
 * surrogate half. */
const awkward = `Say "hi" \\ back: 𝒜 ❤️ {"a":[1]} \ud800 end`

const offers: WebPattern = {
  name: "reads",
  class: "widgets",
  pages: {
    "/index.html": `<!doctype html><html lang="en"><title>Offers</title>${recordScript}
<h1>Offers</h1>
<p id="note">Two offers wait for you.</p>
<button onclick="record({ clicked: this.textContent })">Read terms</button>
<button id="decline" onclick="record({ clicked: this.textContent })">Decline offer</button>
<label for="amount">Amount</label><input id="amount" value="10">
<iframe id="docs" title="Documents" srcdoc="<p>Files attached: 1</p><button onclick='parent.record({ clicked: this.textContent })'>Remove file</button>"></iframe>`,
    "/awkward.html": `<!doctype html><html lang="en"><title>Awkward</title>
<p id="line"></p><label for="motto">Motto</label><input id="motto">
<script>
const text = ${JSON.stringify(awkward)}
line.textContent = text
motto.value = text
</script>`
  },
  run: async () => undefined
}

/** Changes the page behind the engine's back. */
const change = TestBrowser.evaluate

interface Read {
  readonly text?: string
  readonly controls: ReadonlyArray<{ ref: string; role: string; name: string; value?: string; frame?: string }>
}

const read = (engine: Engine["Service"]) => engine.extract("the page") as Effect.Effect<Read, unknown>

/** Clicks what a reference names, as an agent does with a reference from a read. */
const clickRef = (engine: Engine["Service"], ref: string) =>
  engine.act({ selector: ref, method: "click", arguments: [], description: ref })

layer(Layer.mergeAll(TestBrowser.layer(), Server.Pages.layer([offers])), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("Reads", (it) => {
  it.layer(PlaywrightEngine.layer({ elementWaitMs: 500, actionTimeoutMs: 4_000 }))("playwright", (it) => {
    it.effect("a read after the page changed shows its new text and controls, and their references act on them", () =>
      Effect.gen(function* () {
        const server = yield* Server.Pages
        const engine = yield* Engine
        yield* engine.navigate(server.url("reads", "/index.html"))
        const before = server.recorded("reads").length
        const first = yield* read(engine)
        assert.include(first.text, "Two offers wait for you.")
        assert.include(first.text, "Files attached: 1")
        // The page and its frame change after the read: a control renamed, one added, text rewritten.
        yield* change(`decline.textContent = "Accept offer"; note.textContent = "One offer left.";
            const extra = document.createElement("button"); extra.textContent = "Call me";
            extra.onclick = () => record({ clicked: "Call me" }); document.body.append(extra);
            docs.contentDocument.querySelector("p").textContent = "Files attached: 2";
            docs.contentDocument.querySelector("button").textContent = "Replace file"`)
        const second = yield* read(engine)
        assert.include(second.text, "One offer left.")
        assert.notInclude(second.text, "Two offers wait for you.")
        assert.include(second.text, "Files attached: 2")
        const names = second.controls.map((c) => c.name)
        for (const name of ["Accept offer", "Call me", "Replace file"]) assert.include(names, name)
        for (const name of ["Decline offer", "Remove file"]) assert.notInclude(names, name)
        const refOf = (name: string) => second.controls.find((c) => c.name === name)!.ref
        yield* clickRef(engine, refOf("Accept offer"))
        yield* clickRef(engine, refOf("Call me"))
        yield* clickRef(engine, refOf("Replace file"))
        assert.deepStrictEqual(server.recorded("reads").slice(before), [
          { clicked: "Accept offer" },
          { clicked: "Call me" },
          { clicked: "Replace file" }
        ])
      })
    )

    it.effect("a read of an unchanged page answers as the one before, and its references still act", () =>
      Effect.gen(function* () {
        const server = yield* Server.Pages
        const engine = yield* Engine
        yield* engine.navigate(server.url("reads", "/index.html"))
        const before = server.recorded("reads").length
        const first = yield* read(engine)
        const second = yield* read(engine)
        assert.deepStrictEqual(second, first)
        yield* clickRef(engine, second.controls.find((c) => c.name === "Decline offer")!.ref)
        yield* clickRef(engine, second.controls.find((c) => c.name === "Remove file")!.ref)
        assert.deepStrictEqual(server.recorded("reads").slice(before), [
          { clicked: "Decline offer" },
          { clicked: "Remove file" }
        ])
      })
    )

    it.effect("text and values the page holds are read exactly as the page gives them", () =>
      Effect.gen(function* () {
        const server = yield* Server.Pages
        const engine = yield* Engine
        yield* engine.navigate(server.url("reads", "/awkward.html"))
        const answer = yield* read(engine)
        // What the page itself says it shows, asked over a connection of its own.
        const session = yield* BrowserSession
        const shown = yield* Session.evaluate<string>(session.wsEndpoint, session.targetId, "line.innerText")
        assert.strictEqual(shown, awkward)
        assert.include(answer.text, shown)
        assert.strictEqual(answer.controls.find((c) => c.name === "Motto")?.value, awkward)
      })
    )
  })
})
