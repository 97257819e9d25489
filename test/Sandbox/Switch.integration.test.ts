/**
 * The engine switch protocol with real Playwright clients on one real Chromium: what the agent had on the page must
 * still be there after the old client disconnects and a fresh one connects.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { chromium } from "playwright-core"
import * as Engines from "../../src/Cascade/Engines.ts"
import type { EngineSpec } from "../../src/Engine/EngineSpec.ts"
import { said } from "../../src/Engine/Instruction.ts"
import * as Isolated from "../../src/Engine/Isolated.ts"
import * as PlaywrightEngine from "../../src/Engine/PlaywrightEngine.ts"
import * as Events from "../../src/Logging/Events.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { Sandbox } from "../../src/Sandbox/Sandbox.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import * as ProbeEngine from "../support/ProbeEngine.ts"
import { isAlive } from "../support/Processes.ts"
import { waitFor } from "../support/Wait.ts"

const playwright: EngineSpec = {
  id: { kind: "playwright" },
  capabilities: PlaywrightEngine.capabilities,
  layer: PlaywrightEngine.layer()
}

const makeSandbox = Layer.build(Sandbox.layer().pipe(Layer.provide(LocalChromium.layer()))).pipe(
  Effect.map((context) => Context.get(context, Sandbox))
)

/** Reads the page from a separate, short-lived CDP client, the way a person checking the browser would. */
const inspect = <A>(wsEndpoint: string, read: () => A) =>
  Effect.promise(async () => {
    const browser = await chromium.connectOverCDP(wsEndpoint)
    try {
      const page = browser.contexts()[0]!.pages()[0]!
      return await page.evaluate(read)
    } finally {
      await browser.close()
    }
  })

describe("engine switch", () => {
  it.live("Playwright → fresh Playwright keeps URL, scroll, cookies, localStorage and typed values", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const sb = yield* makeSandbox
      const url = site.url("/forms.html")
      yield* sb.use(playwright, (e) =>
        Effect.gen(function* () {
          yield* e.navigate(url)
          yield* e.act(said('fill "Email" with "ada@example.com"'))
          yield* e.act(said("scroll to bottom"))
        })
      )
      const { browserPid, wsEndpoint } = yield* sb.status
      // State the agent's session built up in the browser itself.
      yield* inspect(wsEndpoint!, () => {
        // biome-ignore lint/suspicious/noDocumentCookie: a page script setting a cookie is the state under test
        document.cookie = "session=abc123; path=/"
        localStorage.setItem("draft", "step-2")
      })
      const before = yield* sb.use(playwright, (e) => e.pageState())
      assert.isAbove(before.scrollY, 0)

      const record = yield* sb.switchTo(playwright, "test: fresh client")
      assert.isTrue(record.success)
      assert.strictEqual(record.from, "playwright")
      assert.strictEqual(record.pageState.url, url)

      const after = yield* sb.use(playwright, (e) => e.pageState())
      assert.strictEqual(after.url, url)
      assert.strictEqual(after.scrollY, before.scrollY)
      const facts = (yield* sb.use(playwright, (e) => e.extract("form values"))) as {
        fields: ReadonlyArray<{ label: string; value: string }>
      }
      assert.strictEqual(facts.fields.find((f) => f.label.startsWith("Email"))?.value, "ada@example.com")
      const stored = yield* inspect(wsEndpoint!, () => ({
        cookie: document.cookie,
        draft: localStorage.getItem("draft")
      }))
      assert.deepStrictEqual(stored, { cookie: "session=abc123", draft: "step-2" })
      const status = yield* sb.status
      assert.strictEqual(status.browserPid, browserPid, "the same browser process served both clients")
      assert.isTrue(isAlive(browserPid!))
      const history = yield* sb.history
      assert.strictEqual(history.length, 1)
    })
  )

  it.live("a switch between two modes of one engine names both modes, in its event and in the history", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const sb = yield* makeSandbox
      const log = ProbeEngine.makeLog()
      const mode = (m: "dom" | "cua"): EngineSpec => ({
        id: { kind: "stagehand", mode: m },
        capabilities: ProbeEngine.capabilities,
        layer: ProbeEngine.layer(log, m)
      })
      const { events, sink } = Events.memory()
      yield* sb
        .use(mode("dom"), (e) => e.navigate(site.url("/forms.html")))
        .pipe(Effect.provideService(Events.Events, sink))
      yield* sb.use(mode("cua"), (e) => e.pageState()).pipe(Effect.provideService(Events.Events, sink))
      const switches = events.flatMap((e) => (e.event === "engine_switch" ? [[e.from, e.to]] : []))
      assert.deepStrictEqual(switches, [["stagehand:dom", "stagehand:cua"]])
      assert.deepStrictEqual(
        (yield* sb.history).map((h) => [h.from, h.to]),
        switches
      )
    })
  )

  it.live("after kill -9 of Chromium the next Playwright call succeeds on a relaunched browser at the same URL", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const sb = yield* makeSandbox
      const url = site.url("/forms.html")
      yield* sb.use(playwright, (e) => e.navigate(url))
      const { browserPid } = yield* sb.status
      process.kill(browserPid!, "SIGKILL")
      const result = yield* sb.use(playwright, (e) => e.act(said('fill "Email" with "after@crash.test"')))
      assert.isTrue(result.success)
      const state = yield* sb.use(playwright, (e) => e.pageState())
      assert.strictEqual(state.url, url)
      assert.notStrictEqual((yield* sb.status).browserPid, browserPid)
    })
  )

  it.live(
    "switching back to Magnitude reuses the session's loaded worker; no other session gets it; close ends it",
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const llm = yield* LlmServer.start()
        const url = site.url("/forms.html")
        // The model is configured but never called: connecting and switching make no model request.
        const magnitude = yield* (yield* Engines.make({
          model: {
            model: "openai/gpt-4.1-mini",
            apiKeys: { openai: Redacted.make("sk-test") },
            baseURLs: { openai: `${llm.origin}/v1` }
          }
        })).specFor({ engine: "magnitude", retryCount: 0, timeoutPerAttemptMs: 60_000 })
        const before = Isolated.runningThreads()
        const threads = () => Isolated.runningThreads() - before
        const settled = (n: number) => Effect.promise(() => waitFor(() => threads() === n, 5_000))

        const first = yield* makeSandbox
        yield* first.use(playwright, (e) => e.navigate(url))
        assert.isTrue((yield* first.switchTo(magnitude, "test")).success)
        assert.strictEqual(threads(), 1)
        assert.isTrue((yield* first.switchTo(playwright, "test")).success)
        assert.strictEqual(threads(), 1, "kept, loaded, while Playwright drives the page")
        assert.isTrue((yield* first.switchTo(magnitude, "test")).success)
        assert.strictEqual(threads(), 1, "the kept worker, not a second one")
        assert.strictEqual((yield* first.use(magnitude, (e) => e.pageState())).url, url)
        yield* first.use(playwright, (e) => e.pageState())

        // Another session's Magnitude starts its own worker: nothing of the first session's is shared.
        const second = yield* makeSandbox
        yield* second.use(magnitude, (e) => e.navigate(url))
        assert.strictEqual(threads(), 2)

        // A relaunched browser (kill -9) is a new endpoint: the kept worker attaches to it.
        yield* first.use(playwright, (e) => e.pageState())
        const { browserPid } = yield* first.status
        process.kill(browserPid!, "SIGKILL")
        assert.strictEqual((yield* first.use(magnitude, (e) => e.pageState())).url, url)
        assert.notStrictEqual((yield* first.status).browserPid, browserPid)
        assert.strictEqual(threads(), 2, "the first session's kept worker, on its new browser")

        yield* first.close
        assert.isTrue(yield* settled(1), "closing the session ended its kept worker")
        yield* second.close
        assert.isTrue(yield* settled(0))
        assert.strictEqual(llm.requests.length, 0)
      })
  )
})
