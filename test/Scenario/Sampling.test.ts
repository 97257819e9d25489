/**
 * importTrace on production-like traces: steps from logged arguments when the log has them, else recovered from
 * failure reasons; what cannot be recovered is named; the result is redacted and a valid scenario file that a suite
 * can include; sampleFailures imports each failing trace once.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Sampling from "../../src/Scenario/Sampling.ts"
import * as Suite from "../../src/Scenario/Suite.ts"
import { attempt, canaries, writeTrace } from "./LogRoot.ts"

describe("importTrace", () => {
  it.effect("a trace without logged arguments: navigation and act recovered from reasons, the rest named", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      const dir = writeTrace(root, {
        day: "2026-11-21",
        traceId: "prod-7",
        events: [
          ...attempt(
            { attemptId: "prod-7#1", action: "browser.navigate", toolArgsHash: "n1" },
            1,
            { provider: "stagehand" },
            {
              ok: false,
              errorType: "navigation_failed",
              reason: `navigation to https://jobs.example.com/apply?email=${canaries.email}&ref=x failed: net::ERR_TIMED_OUT`
            }
          ),
          ...attempt(
            { attemptId: "prod-7#2", action: "browser.navigate", toolArgsHash: "n1" },
            1,
            { provider: "stagehand" },
            {
              ok: true
            }
          ),
          ...attempt(
            { attemptId: "prod-7#3", action: "browser.extract", toolArgsHash: "e1" },
            1,
            { provider: "stagehand" },
            {
              ok: true
            }
          ),
          ...attempt(
            { attemptId: "prod-7#4", action: "browser.act", toolArgsHash: "a1" },
            1,
            { provider: "stagehand" },
            {
              ok: false,
              errorType: "element_not_found",
              reason: `fill "Email" with "${canaries.email}": the model found no element for "fill "Email" with "${canaries.email}"" on the page`
            }
          )
        ]
      })
      const imported = yield* Sampling.importTrace(dir)
      const { scenario } = imported
      assert.strictEqual(scenario.name, "imported-prod-7")
      // The two navigate calls with the same arguments are one step repeated; its URL came from the failure reason.
      assert.match(
        scenario.start,
        /^https:\/\/jobs\.example\.com\/apply\?email=\[redacted:query\]&ref=\[redacted:query\]$/
      )
      assert.deepStrictEqual(scenario.steps, [{ instruction: 'fill "Email" with "[redacted:typed]"' }])
      assert.deepStrictEqual(scenario.tags, ["imported"])
      assert.strictEqual(scenario.origin?.outcome, "failure")
      assert.lengthOf(imported.notes, 1)
      assert.match(
        imported.notes[0]!,
        /call prod-7#3 \(browser\.extract\) left out: its arguments were not logged \(hash e1\)/
      )
      assert.notInclude(JSON.stringify(scenario), canaries.email)
    })
  )

  it.effect("logged arguments (toolArgs) are used as they are, redacted; the file joins a suite", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      const call = (n: number, toolArgs: Record<string, unknown>, action: string) =>
        attempt(
          { attemptId: `prod-8/s${n}#1`, stepId: `s${n}`, action, toolArgsHash: `h${n}` },
          1,
          { provider: "stagehand" },
          {
            ok: true
          }
        ).map((e) => ({ ...e, toolArgs }))
      const dir = writeTrace(root, {
        day: "2026-11-21",
        traceId: "prod-8",
        events: [
          ...call(1, { url: "http://127.0.0.1:4100/forms.html" }, "browser.navigate"),
          ...call(2, { instruction: `fill "Email" with "${canaries.email}"` }, "browser.act"),
          ...call(3, { instruction: "the total", schema: { type: "object" } }, "browser.extract"),
          ...call(4, { url: "http://localhost:4200/payment.html?card=4111111111111111" }, "browser.navigate")
        ]
      })
      const suiteDir = mkdtempSync(join(tmpdir(), "switchyard-suite-"))
      const out = join(suiteDir, "imported")
      const imported = yield* Sampling.importTrace(dir, {
        out,
        sites: { origin: "http://127.0.0.1:4100", origin2: "http://localhost:4200" }
      })
      assert.strictEqual(imported.file, join(out, "imported-prod-8.json"))
      assert.deepStrictEqual(imported.notes, [])
      assert.strictEqual(imported.scenario.start, "site:/forms.html")
      assert.deepStrictEqual(imported.scenario.steps, [
        { instruction: 'fill "Email" with "[redacted:typed]"' },
        { tool: "browser.extract", args: { instruction: "the total", schema: { type: "object" } } },
        { tool: "browser.navigate", args: { url: "site2:/payment.html?card=[redacted:query]" } }
      ])
      const onDisk = readFileSync(imported.file!, "utf8")
      assert.notInclude(onDisk, canaries.email)
      assert.notInclude(onDisk, "4111111111111111")

      writeFileSync(join(suiteDir, "suite.json"), JSON.stringify({ name: "s", scenarios: ["imported/"] }))
      const suite = yield* Suite.load(join(suiteDir, "suite.json"))
      assert.deepStrictEqual(
        suite.scenarios.map((s) => s.name),
        ["imported-prod-8"]
      )
    })
  )

  it.effect("a directory that is no trace is an ImportError; sampleFailures imports each failing trace once", () =>
    Effect.gen(function* () {
      const empty = mkdtempSync(join(tmpdir(), "switchyard-empty-"))
      const error = yield* Effect.flip(Sampling.importTrace(empty))
      assert.strictEqual(error._tag, "ImportError")

      const root = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      const failing = (traceId: string) =>
        writeTrace(root, {
          day: "2026-11-21",
          traceId,
          events: attempt(
            { attemptId: `${traceId}#1`, action: "browser.act" },
            1,
            { provider: "stagehand" },
            {
              ok: false,
              errorType: "element_not_found",
              reason: 'click "Apply": the model found no element for "click "Apply"" on the page'
            }
          )
        })
      failing("prod-a")
      failing("prod-b")
      writeTrace(root, {
        day: "2026-11-21",
        traceId: "prod-ok",
        events: attempt({ attemptId: "prod-ok#1", action: "browser.act" }, 1, { provider: "stagehand" }, { ok: true })
      })
      const outDir = join(root, "imported")
      mkdirSync(outDir)
      const first = yield* Sampling.sampleFailures({ logs: root, outDir })
      assert.deepStrictEqual(first.map((i) => i.scenario.name).sort(), ["imported-prod-a", "imported-prod-b"])
      assert.deepStrictEqual(first[0]!.scenario.steps, [{ instruction: 'click "Apply"' }])
      assert.strictEqual(first[0]!.scenario.start, "about:blank")
      const again = yield* Sampling.sampleFailures({ logs: root, outDir })
      assert.lengthOf(again, 0)
      assert.lengthOf(readdirSync(outDir), 2)
    })
  )
})
