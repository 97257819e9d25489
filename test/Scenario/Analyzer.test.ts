/**
 * The analyzer on logs it does not fully understand: lines cut short, events of other producers or versions and a
 * foreign `summary.json` are skipped and counted; what does decode is still analysed, and the report says so.
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Analyzer from "../../src/Scenario/Analyzer.ts"
import * as Report from "../../src/Scenario/Report.ts"
import { attempt, writeTrace } from "./LogRoot.ts"

describe("Analyzer", () => {
  it.effect("an undecodable line is skipped and counted, never fatal", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      const dir = writeTrace(root, {
        day: "2026-11-22",
        traceId: "mixed-1",
        events: [
          ...attempt({ attemptId: "mixed-1#1", action: "browser.act" }, 1, { provider: "playwright" }, { ok: true }),
          {
            event: "engine_switch",
            from: "none",
            to: "playwright",
            reason: "first",
            durationMs: 3,
            success: true,
            url: "https://example.org/"
          }
        ]
      })
      appendFileSync(
        join(dir, "attempt.jsonl"),
        [
          '{"ts":"2026-11-22T10:01:00.000Z","traceId":"mixed-1","event":"sta', // cut short by a crash
          JSON.stringify({ ts: "2026-11-22T10:01:01.000Z", traceId: "mixed-1", event: "quantum_leap", to: "1985" }),
          // An engine this version does not know, and a level that is not a number.
          JSON.stringify({
            ts: "2026-11-22T10:01:02.000Z",
            event: "start",
            attemptId: "mixed-1#2.1",
            provider: "selenium",
            engine: "selenium",
            level: 0,
            attempt: 1
          }),
          JSON.stringify({
            ts: "2026-11-22T10:01:03.000Z",
            event: "failure",
            attemptId: "mixed-1#2.1",
            provider: "playwright",
            engine: "playwright",
            level: "zero",
            attempt: 1,
            outcome: "failure",
            durationMs: 5,
            reason: "x",
            errorType: "timeout",
            retryable: true
          }),
          "42",
          ""
        ].join("\n")
      )
      // A summary of another shape: ignored, the trace's summary is folded from its lines.
      writeFileSync(join(dir, "summary.json"), JSON.stringify({ trace: "mixed-1", total: "many" }))

      const trace = yield* Analyzer.readTrace(dir)
      assert.isDefined(trace)
      assert.strictEqual(trace!.skipped, 5)
      assert.deepStrictEqual(
        trace!.events.map((e) => e.event),
        ["start", "success", "engine_switch"]
      )
      assert.strictEqual(trace!.summary.traceId, "mixed-1")
      assert.strictEqual(trace!.summary.totals.events, 3)
      assert.deepStrictEqual(
        trace!.attempts.map((a) => [a.engine, a.outcome]),
        [["playwright", "success"]]
      )
      assert.deepStrictEqual(trace!.urls, ["https://example.org/"])

      const { analysis, markdown } = yield* Report.write({ logs: root, out: join(root, "report.md") })
      assert.strictEqual(analysis.skipped, 5)
      assert.strictEqual(analysis.stats.attempts, 1)
      assert.deepStrictEqual(analysis.stats.levels, {
        playwright: { attempts: 1, successes: 1, failures: 0, successRate: 1 }
      })
      assert.include(readFileSync(markdown, "utf8"), "5 log lines were skipped")
    })
  )
})
