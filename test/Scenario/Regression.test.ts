/**
 * The regression policy on synthetic numbers: a Stagehand success rate more than 10 points below the baseline fails,
 * exactly 10 does not; an error type the baseline never saw fails above 5% of attempts, not at 5%; `update` accepts.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Rate, Stats } from "../../src/Scenario/Analyzer.ts"
import * as Regression from "../../src/Scenario/Regression.ts"

const rate = (attempts: number, successes: number): Rate => ({
  attempts,
  successes,
  failures: attempts - successes,
  successRate: attempts === 0 ? 0 : successes / attempts
})

/** Numbers of a run: Stagehand `successes` of `attempts`, Playwright 10 of 10, and the given error counts. */
const stats = (stagehand: [number, number], errorTypes: Record<string, number> = {}): Stats => {
  const providers = { playwright: rate(10, 10), stagehand: rate(stagehand[0], stagehand[1]) }
  const attempts = stagehand[0] + 10
  return {
    traces: 10,
    attempts,
    successes: stagehand[1] + 10,
    failures: stagehand[0] - stagehand[1],
    providers,
    levels: { playwright: providers.playwright, "stagehand:dom": providers.stagehand },
    errorTypes
  }
}

const baseline = Regression.baselineOf(stats([100, 90], { element_not_found: 6, timeout: 4 }), { suite: "synthetic" })

describe("Regression", () => {
  it("the same numbers pass, with nothing to say", () => {
    const verdict = Regression.compare(baseline, stats([100, 90], { element_not_found: 6, timeout: 4 }))
    assert.deepStrictEqual(verdict, { ok: true, reasons: [], notes: [] })
  })

  it("a Stagehand drop of exactly 10 points passes; a drop of more fails, naming the rates", () => {
    const ten = Regression.compare(baseline, stats([100, 80], { element_not_found: 16, timeout: 4 }))
    assert.isTrue(ten.ok, ten.reasons.join("; "))
    assert.match(ten.notes[0]!, /Stagehand success rate 90\.0% → 80\.0%/)

    const more = Regression.compare(baseline, stats([100, 79], { element_not_found: 17, timeout: 4 }))
    assert.isFalse(more.ok)
    assert.lengthOf(more.reasons, 1)
    assert.match(more.reasons[0]!, /Stagehand success rate 90\.0% → 79\.0% \(79\/100\): down 11\.0 points/)

    // Rates, not counts: fewer attempts at the same rate are no regression.
    assert.isTrue(Regression.compare(baseline, stats([10, 9], { element_not_found: 1 })).ok)
    // Better is fine.
    assert.isTrue(Regression.compare(baseline, stats([100, 100])).ok)
  })

  it("a new error type fails above 5% of attempts, and is only noted at or below it", () => {
    // 110 attempts: 5.5 would be 5%; 5 is below, 6 is above.
    const below = Regression.compare(baseline, stats([100, 85], { element_not_found: 6, timeout: 4, cdp_closed: 5 }))
    assert.isTrue(below.ok, below.reasons.join("; "))
    assert.isTrue(below.notes.some((n) => n.startsWith('new error type "cdp_closed": 5 of 110 attempts (4.5%)')))

    const above = Regression.compare(baseline, stats([100, 84], { element_not_found: 6, timeout: 4, cdp_closed: 6 }))
    assert.isFalse(above.ok)
    assert.deepStrictEqual(above.reasons, [
      'new error type "cdp_closed": 6 of 110 attempts (5.5%), more than the 5.0% allowed'
    ])

    // A known type may grow (within the Stagehand rule), and one that disappears is noted.
    const known = Regression.compare(baseline, stats([100, 85], { element_not_found: 15 }))
    assert.isTrue(known.ok)
    assert.include(known.notes, 'error type "timeout" no longer occurs')

    const exactly = Regression.compare(
      { ...baseline, errorTypes: {} },
      { ...stats([90, 90]), attempts: 100, errorTypes: { llm_error: 5 } }
    )
    assert.isTrue(exactly.ok, "5 of 100 is not more than 5%")
  })

  it("both rules at once give both reasons; a Stagehand that stopped running fails", () => {
    const both = Regression.compare(baseline, stats([100, 50], { llm_error: 50 }))
    assert.isFalse(both.ok)
    assert.lengthOf(both.reasons, 2)

    const gone: Stats = { ...stats([0, 0]), providers: { playwright: rate(10, 10) } }
    const verdict = Regression.compare(baseline, gone)
    assert.isFalse(verdict.ok)
    assert.match(verdict.reasons[0]!, /Stagehand made no attempts \(the baseline had 100\)/)

    const noStagehand = Regression.compare({ ...baseline, providers: {} }, gone)
    assert.isTrue(noStagehand.ok)
    assert.match(noStagehand.notes[0]!, /not gated/)
  })

  it("thresholds can be changed, and scenario changes are noted", () => {
    const strict = Regression.compare(baseline, stats([100, 85], { element_not_found: 11, timeout: 4 }), {
      maxDropPoints: 2
    })
    assert.isFalse(strict.ok)
    const withScenarios = Regression.compare(
      { ...baseline, scenarios: { a: { passes: 1, runs: 1 }, b: { passes: 0, runs: 1 } } },
      stats([100, 90], { element_not_found: 6, timeout: 4 }),
      {},
      [
        { name: "a", passes: 0, runs: 1 },
        { name: "b", passes: 1, runs: 1 },
        { name: "c", passes: 1, runs: 1 }
      ]
    )
    assert.isTrue(withScenarios.ok)
    assert.deepStrictEqual(withScenarios.notes, [
      "scenario a now fails (0/1)",
      "scenario b now passes",
      "scenario c is not in the baseline"
    ])
  })

  it.effect("gate: reads the baseline file; update writes the current numbers and passes", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "switchyard-baseline-"))
      const file = join(dir, "baseline.json")
      const missing = yield* Effect.flip(Regression.gate({ baseline: file, stats: stats([10, 9]) }))
      assert.strictEqual(missing._tag, "RegressionError")
      assert.include(missing.message, "--update-baseline")

      const created = yield* Regression.gate({
        baseline: file,
        stats: stats([100, 90], { timeout: 10 }),
        update: true,
        suite: "synthetic",
        scenarios: [{ name: "a", passes: 1, runs: 1 }]
      })
      assert.isTrue(created.ok && created.updated)
      const written = JSON.parse(readFileSync(file, "utf8"))
      assert.deepStrictEqual(written.providers.stagehand, { attempts: 100, successes: 90, successRate: 0.9 })
      assert.deepStrictEqual(written.scenarios, { a: { passes: 1, runs: 1 } })

      const worse = yield* Regression.gate({ baseline: file, stats: stats([100, 70], { timeout: 30 }) })
      assert.isFalse(worse.ok)
      assert.isFalse(worse.updated)
      assert.match(Regression.format(worse, file), /^Regression check against .*baseline\.json: FAIL\n {2}✗ Stagehand/)

      const accepted = yield* Regression.gate({
        baseline: file,
        stats: stats([100, 70], { timeout: 30 }),
        update: true
      })
      assert.isTrue(accepted.ok)
      assert.isTrue(accepted.notes.some((n) => n.startsWith("accepted: Stagehand success rate")))
      assert.isTrue((yield* Regression.gate({ baseline: file, stats: stats([100, 70], { timeout: 30 }) })).ok)

      writeFileSync(file, JSON.stringify({ version: 2, attempts: "many" }))
      const invalid = yield* Effect.flip(Regression.load(file))
      assert.include(invalid.message, "is not a baseline")
    })
  )
})
