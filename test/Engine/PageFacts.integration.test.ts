/**
 * Reading a page whole and honestly, in a real Chromium: a label with its value, a table as header and every row,
 * a pager's links apart, and a long page's text cut only with the answer saying so and a way to read on.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Engine } from "../../src/Engine/Engine.ts"
import * as PlaywrightEngine from "../../src/Engine/PlaywrightEngine.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import * as TestBrowser from "../support/TestBrowser.ts"

class Site extends Context.Service<Site, SiteServer.SiteServer>()("test/Site") {}

const open = (path: string) =>
  Effect.gen(function* () {
    const site = yield* Site
    const engine = yield* Engine
    return yield* engine.navigate(site.url(path))
  })

interface Read {
  readonly answer?: ReadonlyArray<string>
  readonly text?: string
  readonly truncated?: { readonly shown: number; readonly total: number; readonly nextOffset: number }
  readonly tables?: ReadonlyArray<{
    readonly name?: string
    readonly headers: ReadonlyArray<string>
    readonly rows: ReadonlyArray<ReadonlyArray<string>>
  }>
  readonly links?: ReadonlyArray<{ readonly text: string }>
}

const read = (instruction: string, offset?: number) =>
  Effect.gen(function* () {
    const engine = yield* Engine
    return (yield* engine.extract(instruction, undefined, offset === undefined ? undefined : { offset })) as Read
  })

const browserAndSite = Layer.mergeAll(TestBrowser.layer(), Layer.effect(Site, SiteServer.start))

layer(browserAndSite, { excludeTestServices: true, timeout: "60 seconds" })("reading a page", (it) => {
  it.layer(PlaywrightEngine.layer({ elementWaitMs: 500 }))("on the session's page", (it) => {
    it.effect("a label and its value come together, wherever the markup breaks the line", () =>
      Effect.gen(function* () {
        yield* open("/reading/schedule.html")
        assert.deepStrictEqual((yield* read("the reward")).answer, ["Last reward: 0.97"])
        assert.deepStrictEqual((yield* read("the status")).answer, ["Status: Interviewing"])
      })
    )

    it.effect("a table named by the instruction comes whole: its header and every row", () =>
      Effect.gen(function* () {
        yield* open("/reading/schedule.html")
        const { tables, answer } = yield* read("the interview schedule table")
        assert.isUndefined(answer)
        assert.deepStrictEqual(tables, [
          {
            name: "Interview schedule",
            headers: ["Round", "Date", "Interviewer"],
            rows: [
              ["Phone screen", "March 3", "Ana Ruiz"],
              ["Technical", "March 10", "Li Wei"],
              ["System design", "March 12", "Sam Okafor"],
              ["Final", "March 17", "Jo Park"]
            ]
          }
        ])
      })
    )

    it.effect("a pager's links stay apart in the page's text", () =>
      Effect.gen(function* () {
        yield* open("/reading/schedule.html")
        const { text } = yield* read("")
        assert.include(text, "1 2 3 >")
        assert.notInclude(text, "123")
      })
    )

    it.effect(
      "a long page's text is cut with the answer saying so; an offset reads on; a line at the end is found",
      () =>
        Effect.gen(function* () {
          yield* open("/reading/long.html")
          const first = yield* read("")
          assert.strictEqual(first.text?.length, 20_000)
          const total = first.truncated?.total ?? 0
          assert.isAbove(total, 250_000)
          assert.deepStrictEqual(first.truncated, { shown: 20_000, total, nextOffset: 20_000 })

          const next = yield* read("", first.truncated!.nextOffset)
          assert.strictEqual(`${first.text}${next.text}`.length, 40_000)
          assert.deepStrictEqual(next.truncated, { shown: 20_000, total, nextOffset: 40_000 })

          const end = yield* read("", total - 100)
          assert.isTrue(end.text?.endsWith("Application reference: 7731-XK"), end.text)
          assert.deepStrictEqual(end.truncated, { shown: 100, total, nextOffset: total })

          assert.deepStrictEqual((yield* read("the application reference")).answer, ["Application reference: 7731-XK"])
        })
    )
  })
})
