/**
 * Every answer's state block tells the truth on a real Router stack and Chromium: the title is the page's own
 * `document.title` when the call ends, and the level is the one the attempt log records for the same attempt.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { Cascade } from "../../src/Cascade/Cascade.ts"
import { Engines } from "../../src/Cascade/Engines.ts"
import type { Policy } from "../../src/Cascade/Policy.ts"
import { Router } from "../../src/Cascade/Router.ts"
import * as Events from "../../src/Logging/Events.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { Sandbox } from "../../src/Sandbox/Sandbox.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"

const stack = (llm: LlmServer.LlmServer, policy: Policy) =>
  Layer.build(
    Router.layer({ policy }).pipe(
      Layer.provideMerge(Cascade.layer),
      Layer.provideMerge(
        Engines.layer({
          model: {
            model: "openai/gpt-4.1-mini",
            apiKeys: { openai: Redacted.make("sk-test") },
            baseURLs: { openai: `${llm.origin}/v1` }
          },
          stagehand: { domSettleTimeoutMs: 100 },
          magnitude: {}
        })
      ),
      Layer.provideMerge(Sandbox.layer()),
      Layer.provide(LocalChromium.layer())
    )
  ).pipe(Effect.map((context) => Context.get(context, Router)))

const playwrightOnly: Policy = {
  default: { totalTimeoutMs: 30_000, levels: [{ engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 10_000 }] }
}

describe("the state's title", () => {
  it.live("is the page's document.title after navigate and act, and empty for a page without one", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const llm = yield* LlmServer.start()
      const router = yield* stack(llm, playwrightOnly)
      const meta = { traceId: "titles" }
      for (const [path, title] of [
        ["/forms.html", "Sign up"],
        ["/plain.html", "Plain page"],
        ["/untitled.html", ""],
        ["/ambiguous.html", "Orders"]
      ] as const) {
        const opened = yield* router.call("browser.navigate", { url: site.url(path) }, meta)
        assert.isTrue(opened.ok, JSON.stringify(opened.error))
        assert.strictEqual(opened.state.url, site.url(path))
        assert.strictEqual(opened.state.title, title, `after navigating to ${path}`)
      }
      const acted = yield* router.call("browser.navigate", { url: site.url("/forms.html") }, meta)
      assert.strictEqual(acted.state.title, "Sign up")
      const filled = yield* router.call("browser.act", { instruction: 'fill "Email" with "ada@example.com"' }, meta)
      assert.isTrue(filled.ok, JSON.stringify(filled.error))
      assert.strictEqual(filled.state.title, "Sign up")
    })
  )
})

describe("the state's level", () => {
  it.live("after Stagehand's fallback is the level the attempt log records for the attempt that served", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      // Every model call fails: Stagehand's act cannot work, and the fallback serves.
      const llm = yield* LlmServer.start(() => ({ status: 500, error: "model overloaded" }))
      const router = yield* stack(llm, {
        default: {
          totalTimeoutMs: 60_000,
          retryBaseDelayMs: 10,
          levels: [
            { engine: "stagehand", mode: "dom", retryCount: 0, timeoutPerAttemptMs: 20_000 },
            { engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 20_000 }
          ]
        }
      })
      const { events, sink } = Events.memory()
      const call = (tool: string, args: unknown) =>
        router.call(tool, args, { traceId: "levels" }).pipe(Effect.provideService(Events.Events, sink))
      assert.isTrue((yield* call("browser.navigate", { url: site.url("/forms.html") })).ok)
      const act = { instruction: 'fill "Email" with "ada@example.com"' }
      const first = yield* call("browser.act", act)
      assert.isFalse(first.ok)
      const second = yield* call("browser.act", act)
      assert.isTrue(second.ok, JSON.stringify(second.error))
      assert.strictEqual(second.state.engine, "playwright")
      const served = events.flatMap((e) => (e.event === "success" && e.action === "browser.act" ? [e] : []))
      assert.lengthOf(served, 1)
      assert.strictEqual(served[0]!.engine, "playwright")
      assert.strictEqual(second.state.level, 1, "the index in the page's full cascade, as browser.status lists it")
      assert.strictEqual(served[0]!.level, second.state.level)
    })
  )
})
