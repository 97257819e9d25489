/**
 * The self-improvement loop end to end, offline: the bundled suite runs through Router → Cascade → Stagehand (with the
 * scripted model) and Playwright on real Chromium, the report and the attempt logs agree, the regression policy passes
 * against the committed baseline, the analyzer reads the run's log root, and a logged trace imported as a scenario
 * runs again.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Regression from "../../src/Scenario/Regression.ts"
import * as Report from "../../src/Scenario/Report.ts"
import * as Runner from "../../src/Scenario/Runner.ts"
import * as Sampling from "../../src/Scenario/Sampling.ts"

const scenarios = resolve(import.meta.dirname, "../../scenarios")
const suiteFile = join(scenarios, "suite.json")

describe("the bundled suite", () => {
  it.live(
    "runs offline through the whole stack, passes the regression gate, and its traces come back as scenarios",
    () =>
      Effect.gen(function* () {
        const logDir = mkdtempSync(join(tmpdir(), "switchyard-scenarios-"))
        const printed: Array<string> = []
        const report = yield* Runner.runSuite({
          suite: suiteFile,
          logDir,
          repeat: 1,
          concurrency: 2,
          print: (table) => printed.push(table)
        })

        // The report: every scenario ran once, with its trace logged in the normal layout.
        const suite = JSON.parse(readFileSync(suiteFile, "utf8")) as { scenarios: Array<{ name: string }> }
        assert.deepStrictEqual(
          report.scenarios.map((s) => s.name),
          suite.scenarios.map((s) => s.name)
        )
        assert.strictEqual(report.totals.runs, suite.scenarios.length)
        for (const s of report.scenarios) {
          assert.lengthOf(s.runs, 1)
          assert.strictEqual(s.passAll, s.passes === 1)
          const run = s.runs[0]!
          assert.strictEqual(run.steps[0]!.stepId, "start")
          const day = readdirSync(join(logDir, "browser-automation"))[0]!
          const dir = join(logDir, "browser-automation", day, run.traceId)
          assert.isTrue(existsSync(join(dir, "attempt.jsonl")), `${s.name} has an attempt log`)
          assert.isTrue(existsSync(join(dir, "summary.json")), `${s.name} has a summary`)
        }
        assert.isTrue(existsSync(report.reportFile))
        assert.lengthOf(printed, 1)
        assert.match(printed[0]!, /pass\^1: \d+\/\d+ scenarios/)
        assert.strictEqual(printed[0], report.table)
        // Stagehand really ran, driven by the scripted model, and the fallback really happened.
        assert.isAbove(report.stats.providers.stagehand?.attempts ?? 0, 20)
        assert.isAbove(report.stats.providers.playwright?.attempts ?? 0, 0)
        const fallback = report.scenarios.find((s) => s.name === "fallback-go-back")!.runs[0]!
        assert.strictEqual(fallback.steps[2]!.engine, "playwright")
        assert.isTrue(existsSync(join(logDir, "system")), "the system log is under the log root")

        // The gate against the committed baseline, as `switchyard scenarios run` applies it.
        const baselineFile = Regression.baselinePathFor(suiteFile)
        const outcomes = report.scenarios.map((s) => ({ name: s.name, passes: s.passes, runs: s.runs.length }))
        const verdict = yield* Regression.gate({ baseline: baselineFile, stats: report.stats, scenarios: outcomes })
        assert.isTrue(verdict.ok, `${Regression.format(verdict, baselineFile)}\n\n${report.table}`)
        // Scenarios are not gated one by one by the policy; here every one that passed in the baseline must pass.
        const baseline = yield* Regression.load(baselineFile)
        for (const s of report.scenarios) {
          const before = baseline.scenarios?.[s.name]
          if (before !== undefined && before.passes === before.runs) {
            assert.isTrue(
              s.passAll,
              `${s.name} passed in the baseline and fails now: ${s.runs[0]!.failures.join("; ")}`
            )
          }
        }

        // The analyzer reads the same log root to the same numbers.
        const analyzed = yield* Report.write({ logs: logDir, out: join(logDir, "report", "report.md") })
        assert.deepStrictEqual(analyzed.analysis.stats, report.stats)
        assert.strictEqual(analyzed.analysis.skipped, 0, "every line the runs wrote is an event of the shared union")
        assert.isTrue(existsSync(analyzed.html))

        // A logged trace imported as a scenario (redacted) runs again and passes.
        const forms = report.scenarios.find((s) => s.name === "forms-subscribe")!.runs[0]!
        const day = readdirSync(join(logDir, "browser-automation"))[0]!
        const importDir = mkdtempSync(join(tmpdir(), "switchyard-imported-"))
        const imported = yield* Sampling.importTrace(join(logDir, "browser-automation", day, forms.traceId), {
          out: join(importDir, "imported")
        })
        assert.deepStrictEqual(imported.notes, [])
        assert.strictEqual(imported.scenario.start, "site:/forms.html")
        assert.deepStrictEqual(imported.scenario.steps, [
          { instruction: 'fill "Full name" with "[redacted:typed]"' },
          { instruction: 'fill "Email" with "[redacted:typed]"' },
          { instruction: 'select "Research" in "Topic"' },
          { instruction: 'check "I agree to the terms"' },
          { instruction: 'click "Subscribe"' }
        ])
        writeFileSync(join(importDir, "suite.json"), JSON.stringify({ name: "imported", scenarios: ["imported/"] }))
        const replay = yield* Runner.runSuite({
          suite: join(importDir, "suite.json"),
          logDir: join(importDir, "logs"),
          print: false
        })
        assert.strictEqual(replay.totals.passedRuns, 1, replay.table)
        assert.deepStrictEqual(
          replay.scenarios[0]!.runs[0]!.steps.map((s) => s.ok),
          [true, true, true, true, true, true]
        )
      }),
    { timeout: 240_000 }
  )
})
