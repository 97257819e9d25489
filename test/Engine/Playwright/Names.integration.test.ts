/**
 * One name per control, as a person reads it, and the context that tells same-named controls apart — on pages built
 * the way application forms and job boards are, in a real Chromium. What the page holds is read back over a separate
 * CDP connection, so a test sees what a person looking at the browser would see.
 */
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Engine } from "../../../src/Engine/Engine.ts"
import { said } from "../../../src/Engine/Instruction.ts"
import type { Field } from "../../../src/Engine/PageFacts.ts"
import * as PlaywrightEngine from "../../../src/Engine/PlaywrightEngine.ts"
import * as SiteServer from "../../fixtures/SiteServer.ts"
import * as TestBrowser from "../../support/TestBrowser.ts"

class Site extends Context.Service<Site, SiteServer.SiteServer>()("test/Site") {}

const evaluate = TestBrowser.evaluate
const inputValue = (id: string) => evaluate<string>(`document.getElementById(${JSON.stringify(id)}).value`)
const checked = (id: string) => evaluate<boolean>(`document.getElementById(${JSON.stringify(id)}).checked`)
const clicks = evaluate<ReadonlyArray<string>>("window.clicks")

const open = (path: string) =>
  Effect.gen(function* () {
    const site = yield* Site
    const engine = yield* Engine
    return yield* engine.navigate(site.url(path))
  })

const uploads = join(import.meta.dirname, "../../fixtures/uploads")
const browserAndSite = Layer.mergeAll(TestBrowser.layer(), Layer.effect(Site, SiteServer.start))

layer(browserAndSite, { excludeTestServices: true, timeout: "60 seconds" })("names and context", (it) => {
  it.layer(PlaywrightEngine.layer({ elementWaitMs: 500 }))("on the session's page", (it) => {
    it.effect("a grid of labels over a grid of inputs: each input is the label in its column, everywhere", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/names/application.html")
        const filled = yield* engine.act(said('fill "Expected salary" with "95000"'))
        assert.strictEqual(filled.description, 'filled textbox "Expected salary" with "95000"')
        assert.strictEqual(yield* inputValue("expected"), "95000")
        assert.strictEqual(yield* inputValue("current"), "", "the other column's input is untouched")
        yield* engine.act(said('fill "Current salary" with "80000"'))
        assert.strictEqual(yield* inputValue("current"), "80000")
        yield* engine.act(said('select "1 month" in "Notice period"'))
        assert.strictEqual(yield* inputValue("notice"), "1 month")

        const listed = (yield* engine.observe(said(""))).map((a) => a.description)
        for (const name of ["Current salary", "Expected salary", "Notice period", "Earliest start"]) {
          assert.isTrue(
            listed.some((d) => d.includes(`"${name}"`)),
            `observe names "${name}": ${listed.join("; ")}`
          )
        }
        // extract's fields and controls say the same names.
        const facts = (yield* engine.extract("")) as { fields: ReadonlyArray<Field>; controls: ReadonlyArray<any> }
        const byName = (name: string) => facts.fields.find((f) => f.name === name)?.label
        assert.strictEqual(byName("current_salary"), "Current salary")
        assert.strictEqual(byName("expected_salary"), "Expected salary")
        assert.strictEqual(byName("notice"), "Notice period")
        assert.isTrue(facts.controls.some((c) => c.role === "textbox" && c.name === "Expected salary"))
      })
    )

    it.effect("floating labels, labels under fields and CJK labels name their inputs", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/names/application.html")
        yield* engine.act(said('fill "Email" with "ada@example.com"'))
        yield* engine.act(said('fill "Phone" with "+44 20 7946 0000"'))
        yield* engine.act(said('fill "City" with "London"'))
        yield* engine.act(said('fill "氏名" with "山田太郎"'))
        yield* engine.act(said('fill "メールアドレス" with "taro@example.jp"'))
        assert.strictEqual(yield* inputValue("email"), "ada@example.com")
        assert.strictEqual(yield* inputValue("phone"), "+44 20 7946 0000")
        assert.strictEqual(yield* inputValue("city"), "London")
        assert.strictEqual(yield* inputValue("shimei"), "山田太郎")
        assert.strictEqual(yield* inputValue("mail-ja"), "taro@example.jp")
      })
    )

    it.effect("a file input is named by the text beside it, in extract, observe and upload alike", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/names/application.html")
        const facts = (yield* engine.extract("")) as { fields: ReadonlyArray<Field> }
        assert.strictEqual(facts.fields.find((f) => f.name === "cv")?.label, "Your CV")
        const listed = (yield* engine.observe(said(""))).map((a) => a.description)
        assert.isTrue(
          listed.some((d) => d.startsWith('file upload "Your CV"')),
          listed.join("; ")
        )
        yield* engine.act(said(`upload ${JSON.stringify(join(uploads, "resume.pdf"))} to "Your CV"`))
        yield* engine.act(said(`upload ${JSON.stringify(join(uploads, "cover-letter.txt"))} to "Cover letter"`))
        assert.strictEqual(yield* evaluate<string>("document.getElementById('cv').files[0]?.name"), "resume.pdf")
        assert.strictEqual(
          yield* evaluate<string>("document.getElementById('letter').files[0]?.name"),
          "cover-letter.txt"
        )
      })
    )

    it.effect("same-named choices carry their question; a scope picks one; observe finds one by its context", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/names/questions.html")
        const ambiguous = yield* Effect.flip(engine.act(said('check "Yes"')))
        if (ambiguous._tag !== "AmbiguousTarget") return assert.fail(`expected AmbiguousTarget, got ${ambiguous._tag}`)
        assert.deepStrictEqual(
          ambiguous.elements?.map((e) => e.context),
          [
            'group "Are you legally authorized to work in the country?" in form "Screening"',
            'group "Will you now or in the future require sponsorship?" in form "Screening"',
            'group "Do you hold a driving licence?" in form "Screening"'
          ]
        )
        assert.include(ambiguous.message, 'in "Are you legally authorized to work in the country?"')

        yield* engine.act(said('check "Yes" in "Are you legally authorized to work"'))
        yield* engine.act(said('check "No" in "sponsorship"'))
        yield* engine.act(said('check "Yes" in "Do you hold a driving licence?"'))
        assert.deepStrictEqual(
          [
            yield* checked("auth-yes"),
            yield* checked("auth-no"),
            yield* checked("spons-yes"),
            yield* checked("spons-no")
          ],
          [true, false, false, true]
        )
        assert.isTrue(yield* checked("lic-yes"))

        const missing = yield* Effect.flip(engine.act(said('check "Yes" in "Do you need a visa?"')))
        if (missing._tag !== "ElementNotFound") return assert.fail(`expected ElementNotFound, got ${missing._tag}`)
        assert.include(missing.message, 'nothing on the page sits in "Do you need a visa?"')
      })
    )

    it.effect("three Apply buttons in three job cards: told apart by card, acted on by scope", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/names/questions.html")
        const ambiguous = yield* Effect.flip(engine.act(said('click "Apply"')))
        if (ambiguous._tag !== "AmbiguousTarget") return assert.fail(`expected AmbiguousTarget, got ${ambiguous._tag}`)
        assert.deepStrictEqual(ambiguous.candidates, [
          'button "Apply" in card "Data Engineer"',
          'button "Apply" in card "Analytics Engineer"',
          'button "Apply" in card "Senior Data Engineer"'
        ])
        yield* engine.act(said('click "Apply" in "Data Engineer"'))
        yield* engine.act(said('click "Apply" in "the Senior Data Engineer card"'))
        assert.deepStrictEqual(yield* clicks, ["data", "senior"])

        const found = yield* engine.observe(said("the Apply button of the Analytics Engineer job"))
        assert.deepStrictEqual(
          found.map((a) => a.description),
          ['button "Apply" in card "Analytics Engineer"']
        )
        const listed = (yield* engine.observe(said(""))).map((a) => a.description)
        assert.include(listed, 'link "Jobs" in navigation "Main"')
      })
    )

    it.effect("symbols are names: ♥♥♥ is not ♥♥", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/names/questions.html")
        yield* engine.act(said('click "♥♥♥"'))
        yield* engine.act(said('click "♥♥"'))
        assert.deepStrictEqual(yield* clicks, ["three", "two"])
      })
    )

    it.effect("a clickable word inside a sentence is the click target; a focusable handle has a reference", () =>
      Effect.gen(function* () {
        const engine = yield* Engine
        yield* open("/names/clickables.html")
        yield* engine.act(said('click "dolor"'))
        assert.deepStrictEqual(yield* clicks, ["dolor"])

        const listed = yield* engine.observe(said(""))
        const handle = listed.find((a) => a.description.startsWith("slider"))
        assert.isDefined(handle, listed.map((a) => a.description).join("; "))
        yield* engine.act({ selector: handle!.selector, method: "press", arguments: ["ArrowRight"], description: "" })
        assert.strictEqual(yield* evaluate<string>("document.getElementById('value').textContent"), "1")
      })
    )
  })
})
