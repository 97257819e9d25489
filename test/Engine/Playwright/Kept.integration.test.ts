/**
 * The elements an act keeps from the last read while the page has not changed: a page changed between calls (its
 * document, an open shadow root, a frame) is read again, so an act never lands on what an element became.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Engine } from "../../../src/Engine/Engine.ts"
import { said } from "../../../src/Engine/Instruction.ts"
import * as PlaywrightEngine from "../../../src/Engine/PlaywrightEngine.ts"
import * as TestBrowser from "../../support/TestBrowser.ts"
import { recordScript, type WebPattern } from "../../Web/Pattern.ts"
import * as Server from "../../Web/Server.ts"

const offers: WebPattern = {
  name: "offers",
  class: "widgets",
  pages: {
    "/index.html": `<!doctype html><html lang="en"><title>Offers</title>${recordScript}
<h1>Offers</h1>
<button onclick="record({ clicked: this.textContent })">Read terms</button>
<button id="decline" onclick="record({ clicked: this.textContent })">Decline offer</button>
<label for="amount">Amount</label><input id="amount" value="10">
<label><input id="gift" type="checkbox"> Gift</label>
<div id="host"></div>
<iframe id="docs" title="Documents" srcdoc="<button onclick='parent.record({ clicked: this.textContent })'>Remove file</button><label>PIN <input id='pin' type='password'></label>"></iframe>
<script>
host.attachShadow({ mode: "open" }).innerHTML =
  '<button onclick="record({ clicked: this.textContent })">Archive thread</button>'
</script>`
  },
  run: async () => undefined
}

/** Changes the page behind the engine's back. */
const change = TestBrowser.evaluate

/** The engine on the offers page, and what the page recorded from then on. */
const onOffers = Effect.gen(function* () {
  const server = yield* Server.Pages
  const engine = yield* Engine
  yield* engine.navigate(server.url("offers", "/index.html"))
  const before = server.recorded("offers").length
  return { engine, recorded: () => server.recorded("offers").slice(before) }
})

const renames = [
  { where: "the document", from: "Decline offer", to: "Accept offer", script: `decline.textContent = "Accept offer"` },
  {
    where: "an open shadow root",
    from: "Archive thread",
    to: "Delete thread",
    script: `host.shadowRoot.querySelector("button").textContent = "Delete thread"`
  },
  {
    where: "a frame",
    from: "Remove file",
    to: "Replace file",
    script: `docs.contentDocument.querySelector("button").textContent = "Replace file"`
  }
]

layer(Layer.mergeAll(TestBrowser.layer(), Server.Pages.layer([offers])), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("Elements kept between acts", (it) => {
  it.layer(PlaywrightEngine.layer({ elementWaitMs: 500, actionTimeoutMs: 4_000 }))("playwright", (it) => {
    for (const { where, from, to, script } of renames) {
      it.effect(`an element renamed in ${where} since the last act is not acted on under its old name`, () =>
        Effect.gen(function* () {
          const { engine, recorded } = yield* onOffers
          // The first act reads the page; the page then renames an element before the next act.
          yield* engine.act(said('click "Read terms"'))
          yield* change(script)
          const error = yield* Effect.flip(engine.act(said(`click "${from}"`)))
          assert.strictEqual(error.type, "element_not_found", error.message)
          yield* engine.act(said(`click "${to}"`))
          assert.deepStrictEqual(recorded(), [{ clicked: "Read terms" }, { clicked: to }])
        })
      )
    }

    it.effect(
      "values and ticks a script set between calls (no event, no change of the document) are read as shown",
      () =>
        Effect.gen(function* () {
          const { engine } = yield* onOffers
          yield* engine.act(said('click "Read terms"'))
          yield* engine.extract("the form")
          yield* change(`amount.value = "42"; gift.checked = true`)
          const read = (yield* engine.extract("the form")) as {
            controls: ReadonlyArray<{ name: string; value?: string; checked?: boolean | "mixed" }>
          }
          assert.strictEqual(read.controls.find((c) => c.name === "Amount")?.value, "42")
          assert.strictEqual(read.controls.find((c) => c.name === "Gift")?.checked, true)
        })
    )

    it.effect("text and values a script changed after a click's answer are read as the page shows them", () =>
      Effect.gen(function* () {
        const { engine } = yield* onOffers
        // The click's page is read in the background after its answer; the page changes after that.
        yield* engine.act(said('click "Read terms"'))
        yield* Effect.sleep("300 millis")
        yield* change(`document.querySelector("h1").textContent = "Offers renewed"; amount.value = "42"`)
        const read = (yield* engine.extract("the page")) as {
          headings: ReadonlyArray<string>
          controls: ReadonlyArray<{ name: string; value?: string }>
        }
        assert.deepStrictEqual(read.headings, ["Offers renewed"])
        assert.strictEqual(read.controls.find((c) => c.name === "Amount")?.value, "42")
      })
    )

    it.effect(
      "a password a script typed into a frame is not shown by the read after another part of the page changed",
      () =>
        Effect.gen(function* () {
          const { engine } = yield* onOffers
          // The elements as a batch fill reads them: kept while their names and places hold.
          const elementsNow = engine.elements!
          yield* engine.act(said('click "Read terms"'))
          yield* elementsNow()
          // Only the frame's values change (no change of its document); the page's own document changes too.
          yield* change(`docs.contentDocument.getElementById("pin").value = "s3cret-9"; decline.textContent = "Accept"`)
          const elements = yield* elementsNow()
          assert.strictEqual(elements.find((e) => e.name === "PIN")?.value, "[redacted]")
          assert.notInclude(JSON.stringify(elements), "s3cret-9")
          assert.notInclude(JSON.stringify(yield* engine.extract("the form")), "s3cret-9")
        })
    )

    it.effect("an unchanged page is acted on twice in a row as it shows", () =>
      Effect.gen(function* () {
        const { engine, recorded } = yield* onOffers
        yield* engine.act(said('click "Read terms"'))
        yield* engine.act(said('click "Archive thread"'))
        yield* engine.act(said('click "Remove file"'))
        yield* engine.act(said('click "Read terms"'))
        assert.deepStrictEqual(recorded(), [
          { clicked: "Read terms" },
          { clicked: "Archive thread" },
          { clicked: "Remove file" },
          { clicked: "Read terms" }
        ])
      })
    )
  })
})
