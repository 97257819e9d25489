/**
 * What a suite run reports: each step, run and scenario, the suite's totals and engine statistics, and the table
 * printed at the end. Written as JSON under the log root and read back by the regression check.
 */
import type * as Analyzer from "../Analyzer.ts"

export interface StepResult {
  readonly stepId: string
  readonly tool: string
  /** Calls made for the step: 1, plus the repeats an agent makes after a failure. */
  readonly calls: number
  readonly ok: boolean
  readonly engine: string | null
  /** The cascade level that answered the last call, or `replay` (the replay level, in front of the cascade). */
  readonly level?: number | "replay" | null
  readonly errorType?: string
  readonly message?: string
  readonly durationMs: number
}

export interface RunResult {
  readonly scenario: string
  /** 1-based repeat number. */
  readonly repeat: number
  readonly seed: number
  readonly traceId: string
  readonly passed: boolean
  /** Why it failed: a step that failed, an expectation that did not hold. */
  readonly failures: ReadonlyArray<string>
  readonly steps: ReadonlyArray<StepResult>
  readonly durationMs: number
}

export interface ScenarioResult {
  readonly name: string
  readonly file: string
  readonly seed: number
  readonly runs: ReadonlyArray<RunResult>
  readonly passes: number
  /** pass^k: every one of the k runs passed. */
  readonly passAll: boolean
  /** Engine attempts of this scenario's runs. */
  readonly stats: Analyzer.Stats
}

export interface SuiteReport {
  readonly suite: string
  readonly file: string
  readonly runId: string
  readonly startedAt: string
  readonly durationMs: number
  readonly repeat: number
  readonly logDir: string
  readonly model: string
  readonly scenarios: ReadonlyArray<ScenarioResult>
  readonly totals: {
    readonly scenarios: number
    readonly runs: number
    readonly passedRuns: number
    /** Share of runs that passed (pass@1 averaged). */
    readonly passRate: number
    /** Scenarios whose every run passed. */
    readonly passAllK: number
    readonly passAllKRate: number
  }
  /** Engine attempts over every run: per provider, per level, per error type. */
  readonly stats: Analyzer.Stats
  readonly traceIds: ReadonlyArray<string>
  /** Where the JSON form of this report was written. */
  readonly reportFile: string
  readonly table: string
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`
const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))

const rates = (stats: Analyzer.Stats) =>
  Object.entries(stats.levels)
    .map(([name, r]) => `${name} ${r.successes}/${r.attempts}`)
    .join(", ") || "–"

/** The printed summary: one row per scenario, then engines, error types and pass^k. */
export const formatTable = (report: Omit<SuiteReport, "table">): string => {
  const k = report.repeat
  const rows = report.scenarios.map((s) => {
    const failure = s.runs.find((r) => !r.passed)?.failures[0] ?? ""
    return [s.name, `${s.passes}/${s.runs.length}`, s.passAll ? "yes" : "no", rates(s.stats), failure.slice(0, 110)]
  })
  const header = ["Scenario", "Passed", `pass^${k}`, "Engine attempts (successes/attempts)", "First failure"]
  const widths = header.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => r[i]!.length))))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i]!)))
      .join("  ")
      .trimEnd()
  const { stats, totals } = report
  const engines = Object.entries(stats.providers)
    .map(([name, r]) => `${name} ${r.successes}/${r.attempts} (${pct(r.successRate)})`)
    .join(", ")
  const errors = Object.entries(stats.errorTypes)
    .sort(([, a], [, b]) => b - a)
    .map(([type, n]) => `${type} ${n}`)
    .join(", ")
  return [
    `Suite ${report.suite}: ${totals.scenarios} scenarios × ${k} (model: ${report.model}; logs: ${report.logDir})`,
    "",
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map(line),
    "",
    `Runs passed: ${totals.passedRuns}/${totals.runs} (${pct(totals.passRate)})`,
    `pass^${k}: ${totals.passAllK}/${totals.scenarios} scenarios (${pct(totals.passAllKRate)})`,
    `Engines: ${engines || "no attempts"}`,
    `Levels: ${rates(stats)}`,
    `Errors: ${errors || "none"} (of ${stats.attempts} attempts)`,
    `Report: ${report.reportFile}`
  ].join("\n")
}
