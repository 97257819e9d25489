/**
 * Runs a scenario suite through the whole stack — Router → Cascade → engines on a real Chromium — k times, writing
 * the normal attempt logs under a log root, and reports pass/fail per scenario, pass^k, engine success rates and
 * failures per error type. Every run gets a fresh stack (browser, breakers, Stagehand retry state), so runs are
 * independent; the fixture sites and the scripted model are shared by the whole suite. Its parts: one run of one
 * scenario in `Runner/ScenarioRun.ts`, the results and their table in `Runner/Results.ts`.
 */
import { mkdir, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Console, Context, Data, Effect, Layer } from "effect"
import * as AttemptLog from "../Logging/AttemptLog.ts"
import * as SystemLog from "../Logging/SystemLog.ts"
import * as SessionStack from "../Server/SessionStack.ts"
import * as Analyzer from "./Analyzer.ts"
import { formatTable, type RunResult, type ScenarioResult, type SuiteReport } from "./Runner/Results.ts"
import { modelName, type RunContext, type RunOptions, runOnce, usesScripted } from "./Runner/ScenarioRun.ts"
import * as ScriptedModel from "./ScriptedModel.ts"
import * as Sites from "./Sites.ts"
import * as Suite from "./Suite.ts"

export type { RunResult, ScenarioResult, StepResult, SuiteReport } from "./Runner/Results.ts"
export { formatTable } from "./Runner/Results.ts"

export interface RunSuiteOptions extends RunOptions {
  /** The suite file (e.g. `scenarios/suite.json`). */
  readonly suite: string
  /** Runs per scenario (k of pass^k); default 1. */
  readonly repeat?: number
  /** Log root: traces go to `<logDir>/browser-automation/…`, the run report to `<logDir>/scenario-runs/`. */
  readonly logDir: string
  /** Only the scenarios with these names. */
  readonly only?: ReadonlyArray<string>
  /** Leave out the scenarios carrying any of these tags. */
  readonly skipTags?: ReadonlyArray<string>
  /** Runs at once, each on its own browser; default 1. Two suit a 2-core machine. */
  readonly concurrency?: number
  /** Screenshot artifact per attempt; default true. */
  readonly screenshots?: boolean
  /** Print the table (default: to stdout through Console); false to stay quiet. */
  readonly print?: boolean | ((table: string) => void)
  /** Fixture sites directory; default `scenarios/sites/`. */
  readonly sitesRoot?: string
  /** The fixture sites, when the caller serves them (on the same origins across suites); default served here. */
  readonly sites?: Sites.Sites
  /** The scripted model to answer with, when the caller counts its requests; default one started for the suite. */
  readonly scripted?: ScriptedModel.ScriptedModel
}

export class RunError extends Data.TaggedError("RunError")<{ readonly message: string }> {}

const runIdOf = (now: Date) =>
  `run-${now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "z")
    .toLowerCase()}-${Math.random().toString(36).slice(2, 6)}`

/** Runs a suite `repeat` times through the full stack and reports; the table is printed unless `print` is false. */
export const runSuite = (options: RunSuiteOptions): Effect.Effect<SuiteReport, Suite.SuiteError | RunError> =>
  Effect.gen(function* () {
    const repeat = options.repeat ?? 1
    if (!Number.isInteger(repeat) || repeat < 1)
      return yield* new RunError({ message: `repeat must be ≥ 1, not ${repeat}` })
    const suite = yield* Suite.load(options.suite)
    const scenarios = suite.scenarios.filter(
      (s) =>
        (options.only === undefined || options.only.includes(s.name)) &&
        !(s.tags ?? []).some((t) => options.skipTags?.includes(t))
    )
    const unknown = (options.only ?? []).filter((name) => !suite.scenarios.some((s) => s.name === name))
    if (unknown.length > 0) {
      return yield* new RunError({ message: `no scenario named ${unknown.join(", ")} in ${options.suite}` })
    }
    const logDir = resolve(options.logDir)
    const startedAt = new Date()
    const runId = runIdOf(startedAt)
    const results = new Map<string, Array<RunResult>>()
    yield* Effect.scoped(
      Effect.gen(function* () {
        const sites = options.sites ?? (yield* Sites.start(options.sitesRoot))
        const scripted = !usesScripted(scenarios, options.model)
          ? undefined
          : (options.scripted ?? (yield* ScriptedModel.start))
        const ctx: RunContext = { runId, sites, scripted, options }
        const logging = SessionStack.attemptLog(logDir, { screenshots: options.screenshots ?? true }).pipe(
          Layer.merge(SystemLog.layer({ root: logDir, stderr: false }))
        )
        const services = yield* Layer.build(logging)
        const jobs = scenarios.flatMap((scenario) => Array.from({ length: repeat }, (_, i) => ({ scenario, k: i + 1 })))
        const runs = yield* Effect.forEach(
          jobs,
          ({ scenario, k }) => runOnce(scenario, k, ctx).pipe(Effect.provide(services)),
          { concurrency: options.concurrency ?? 1 }
        )
        for (const scenario of scenarios)
          results.set(
            scenario.name,
            runs.filter((r) => r.scenario === scenario.name)
          )
        // Everything the runs logged is on disk before the report reads it back.
        yield* Context.get(services, AttemptLog.AttemptLog).flush
      })
    )
    const traceIds = [...results.values()].flat().map((r) => r.traceId)
    const traces = yield* Analyzer.readTraces(logDir, { traceIds }).pipe(
      Effect.mapError((e) => new RunError({ message: e.message }))
    )
    const byTrace = new Map(traces.map((t) => [t.traceId, t]))
    const scenarioResults = scenarios.map((s): ScenarioResult => {
      const runs = results.get(s.name) ?? []
      const passes = runs.filter((r) => r.passed).length
      return {
        name: s.name,
        file: s.file,
        seed: s.seed,
        runs,
        passes,
        passAll: runs.length > 0 && passes === runs.length,
        stats: Analyzer.statsOf(runs.flatMap((r) => byTrace.get(r.traceId) ?? []))
      }
    })
    const runsTotal = scenarioResults.reduce((n, s) => n + s.runs.length, 0)
    const passedRuns = scenarioResults.reduce((n, s) => n + s.passes, 0)
    const passAllK = scenarioResults.filter((s) => s.passAll).length
    const reportFile = join(logDir, "scenario-runs", `${runId}.json`)
    const report: Omit<SuiteReport, "table"> = {
      suite: suite.name,
      file: suite.file,
      runId,
      startedAt: startedAt.toISOString(),
      durationMs: Date.now() - startedAt.getTime(),
      repeat,
      logDir,
      model:
        options.model === undefined
          ? [...new Set(scenarios.map((s) => modelName(s.model)))].join(", ")
          : modelName(options.model),
      scenarios: scenarioResults,
      totals: {
        scenarios: scenarioResults.length,
        runs: runsTotal,
        passedRuns,
        passRate: runsTotal === 0 ? 0 : passedRuns / runsTotal,
        passAllK,
        passAllKRate: scenarioResults.length === 0 ? 0 : passAllK / scenarioResults.length
      },
      stats: Analyzer.statsOf(traces),
      traceIds,
      reportFile
    }
    const table = formatTable(report)
    yield* Effect.tryPromise({
      try: async () => {
        await mkdir(join(logDir, "scenario-runs"), { recursive: true })
        await writeFile(reportFile, `${JSON.stringify({ ...report, table }, null, 2)}\n`)
      },
      catch: (cause) => new RunError({ message: `cannot write ${reportFile}: ${(cause as Error).message}` })
    })
    if (typeof options.print === "function") options.print(table)
    else if (options.print !== false) yield* Console.log(table)
    return { ...report, table }
  })
