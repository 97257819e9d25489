/**
 * The analyzer on a synthetic log root: statistics per engine, level and error type (an attempt id used twice in one
 * call counts twice), failing and recovered traces, personal data redacted in both reports, and the HTML report
 * opened in a real Chromium: it renders, lists the failing traces, and every inlined screenshot decodes.
 */
import { chmodSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { chromium } from "playwright-core"
import * as Report from "../../src/Scenario/Report.ts"
import * as TestBrowser from "../support/TestBrowser.ts"
import { attempt, canaries, png, writeTrace } from "./LogRoot.ts"

/** Three traces: one fails after a fallback, one fails twice with a screenshot each, one recovers. */
const logRoot = () => {
  const root = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
  // The report is opened in a browser that, as root, runs as an unprivileged user: it must get through to it.
  chmodSync(root, 0o711)
  const checkout = { attemptId: "prod-1/checkout#1", stepId: "checkout", action: "browser.act", toolArgsHash: "aa11" }
  writeTrace(root, {
    day: "2026-11-20",
    traceId: "prod-1",
    events: [
      ...attempt(
        checkout,
        1,
        { provider: "stagehand", mode: "dom" },
        {
          ok: false,
          errorType: "element_not_found",
          reason: `fill "Email" with "${canaries.email}": the model found no element for it on https://shop.example.com/pay?card=4111111111111111&session=${canaries.token}`
        }
      ),
      { event: "fallback", attemptId: "prod-1/checkout#1", from: "stagehand", to: "playwright", reason: "again" },
      // The Router's fallback inside one call numbers its levels afresh: the same attempt id, a second attempt.
      ...attempt(
        checkout,
        1,
        { provider: "playwright" },
        {
          ok: false,
          errorType: "timeout",
          reason: `browser.act took longer than 8000 ms (password: ${canaries.password})`
        }
      )
    ],
    artifacts: {
      "prod-1_checkout_1.1.png": png(320, 200, [200, 40, 40]),
      "prod-1_checkout_1.1.snapshot.json": JSON.stringify({
        dom: { url: `https://shop.example.com/pay?session=${canaries.token}` }
      })
    }
  })
  const search = { attemptId: "prod-2#1", action: "browser.act", toolArgsHash: "bb22" }
  writeTrace(root, {
    day: "2026-11-21",
    traceId: "prod-2",
    events: [
      ...attempt(
        search,
        1,
        { provider: "stagehand", mode: "dom" },
        {
          ok: false,
          errorType: "llm_error",
          reason: `the model provider answered 500 for card ${canaries.card}`
        }
      ),
      ...attempt(
        { ...search, attemptId: "prod-2#2" },
        1,
        { provider: "stagehand", mode: "dom" },
        {
          ok: false,
          errorType: "llm_error",
          reason: "the model provider answered 500"
        }
      ),
      // The second call's picture would have equalled the first's: its log points at it.
      {
        event: "screenshot_shared",
        attemptId: "prod-2#2.1",
        sameAs: "prod-2#1.1",
        sameAsTrace: "prod-2",
        file: "artifacts/prod-2_1.1.png"
      }
    ],
    artifacts: {
      "prod-2_1.1.png": png(160, 100, [40, 40, 200])
    }
  })
  const open = { attemptId: "prod-3#1", action: "browser.navigate" }
  writeTrace(root, {
    day: "2026-11-21",
    traceId: "prod-3",
    summary: false,
    events: [
      ...attempt(
        open,
        1,
        { provider: "stagehand", mode: "dom" },
        {
          ok: false,
          errorType: "navigation_failed",
          reason: "navigation to https://example.org/ failed: net::ERR_CONNECTION_RESET"
        }
      ),
      ...attempt({ ...open, attemptId: "prod-3#2" }, 1, { provider: "stagehand", mode: "dom" }, { ok: true })
    ]
  })
  return root
}

describe("Analyzer", () => {
  it.effect("statistics, failing and recovered traces, redacted reports", () =>
    Effect.gen(function* () {
      const root = logRoot()
      const out = join(root, "report", "browser-automation-report.md")
      const { analysis, markdown, html } = yield* Report.write({ logs: root, out })
      assert.strictEqual(html, join(root, "report", "browser-automation-report.html"))
      const { stats } = analysis
      assert.strictEqual(stats.traces, 3)
      assert.strictEqual(stats.attempts, 6)
      assert.deepStrictEqual(stats.providers.stagehand, { attempts: 5, successes: 1, failures: 4, successRate: 0.2 })
      assert.deepStrictEqual(stats.providers.playwright, { attempts: 1, successes: 0, failures: 1, successRate: 0 })
      assert.deepStrictEqual(Object.keys(stats.levels), ["playwright", "stagehand:dom"])
      assert.deepStrictEqual(stats.errorTypes, { element_not_found: 1, llm_error: 2, navigation_failed: 1, timeout: 1 })
      assert.deepStrictEqual(
        analysis.failing.map((t) => t.traceId),
        ["prod-1", "prod-2"]
      )
      assert.deepStrictEqual(
        analysis.recovered.map((t) => t.traceId),
        ["prod-3"]
      )
      // prod-3 has no summary.json: it was folded from its lines.
      assert.strictEqual(analysis.traces.find((t) => t.traceId === "prod-3")?.summary.totals.attempts, 2)
      // The screenshot named after a reused id belongs to the last attempt with it.
      const prod1 = analysis.failing[0]!.attempts
      assert.deepStrictEqual(
        prod1.map((a) => [a.provider, a.screenshot !== undefined, a.snapshot !== undefined]),
        [
          ["stagehand", false, false],
          ["playwright", true, true]
        ]
      )

      // An attempt whose log points at an equal picture has it as its screenshot.
      const prod2 = analysis.failing[1]!.attempts
      assert.deepStrictEqual(
        prod2.map((a) => a.screenshot?.split("/").at(-1)),
        ["prod-2_1.1.png", "prod-2_1.1.png"]
      )

      const text = readFileSync(markdown, "utf8")
      assert.include(text, "| stagehand | 5 | 1 | 4 | 20.0% |")
      assert.include(text, "`llm_error` | 2 | 33.3%")
      assert.include(text, "### `prod-1`")
      assert.include(text, "[redacted:")
      for (const file of [markdown, html]) {
        const content = readFileSync(file, "utf8")
        for (const [what, canary] of Object.entries(canaries)) {
          assert.notInclude(content, canary, `${what} leaked into ${file}`)
        }
        assert.notInclude(content, "4111111111111111")
      }
    })
  )

  it.live(
    "the HTML report renders in Chromium: failing traces listed, every screenshot decodes",
    () =>
      Effect.gen(function* () {
        const root = logRoot()
        const { html } = yield* Report.write({ logs: root, out: join(root, "report.md") })
        const session = yield* TestBrowser.launchSession()
        const seen = yield* Effect.promise(async () => {
          const browser = await chromium.connectOverCDP(session.wsEndpoint)
          try {
            const page = browser.contexts()[0]!.pages()[0]!
            // No network: the report must stand alone.
            const requests: Array<string> = []
            page.on("request", (r) => {
              if (!r.url().startsWith("data:") && !r.url().startsWith("file:")) requests.push(r.url())
            })
            await page.goto(`file://${html}`)
            await page.waitForFunction(() => Array.from(document.images).every((img) => img.complete))
            return {
              requests,
              title: await page.title(),
              heading: (await page.locator("h1").textContent()) ?? "",
              traces: await page
                .locator("article.trace")
                .evaluateAll((els) => els.map((el) => el.getAttribute("data-trace-id"))),
              images: await page.evaluate(() =>
                Array.from(document.images).map((img) => ({
                  width: img.naturalWidth,
                  height: img.naturalHeight,
                  inline: img.src.startsWith("data:image/png;base64,")
                }))
              ),
              text: (await page.locator("body").textContent()) ?? ""
            }
          } finally {
            await browser.close()
          }
        })
        assert.strictEqual(seen.title, "Browser automation report")
        assert.strictEqual(seen.heading, "Browser automation report")
        assert.deepStrictEqual(seen.traces, ["prod-1", "prod-2"])
        assert.deepStrictEqual(seen.images, [
          { width: 320, height: 200, inline: true },
          { width: 160, height: 100, inline: true },
          { width: 160, height: 100, inline: true }
        ])
        assert.deepStrictEqual(seen.requests, [])
        assert.include(seen.text, "element_not_found")
        for (const canary of Object.values(canaries)) assert.notInclude(seen.text, canary)
      }),
    { timeout: 60_000 }
  )
})
