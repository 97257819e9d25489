/**
 * Runs a scenario suite through the whole stack — Router → Cascade → engines on a real Chromium — k times, writing
 * the normal attempt logs under a log root, and reports pass/fail per scenario, pass^k, engine success rates and
 * failures per error type. Every run gets a fresh stack (browser, breakers, Stagehand retry state), so runs are
 * independent; the fixture sites and the scripted model are shared by the whole suite.
 */
import { mkdir, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Clock, Console, Context, Data, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import { Cascade } from "../Cascade/Cascade.ts"
import { Engines, type EnginesOptions } from "../Cascade/Engines.ts"
import { Router, type ToolAnswer } from "../Cascade/Router.ts"
import type * as Model from "../Engine/Model.ts"
import * as Artifacts from "../Logging/Artifacts.ts"
import * as AttemptLog from "../Logging/AttemptLog.ts"
import type * as Events from "../Logging/Events.ts"
import * as SystemLog from "../Logging/SystemLog.ts"
import * as LocalChromium from "../Sandbox/Provider/LocalChromium.ts"
import { Sandbox } from "../Sandbox/Sandbox.ts"
import * as Analyzer from "./Analyzer.ts"
import * as Expect from "./Expect.ts"
import * as ScriptedModel from "./ScriptedModel.ts"
import * as Sites from "./Sites.ts"
import * as Suite from "./Suite.ts"

export interface RunSuiteOptions {
  /** The suite file (e.g. `scenarios/suite.json`). */
  readonly suite: string
  /** Runs per scenario (k of pass^k); default 1. */
  readonly repeat?: number
  /** Log root: traces go to `<logDir>/browser-automation/…`, the run report to `<logDir>/scenario-runs/`. */
  readonly logDir: string
  /**
   * The model for every scenario, overriding the suite: `"scripted"` (the bundled deterministic model), `"env"`
   * (real providers from the environment), or an explicit configuration. Default: what each scenario names.
   */
  readonly model?: "scripted" | "env" | Model.ModelConfig
  /** Only the scenarios with these names. */
  readonly only?: ReadonlyArray<string>
  /** Leave out the scenarios carrying any of these tags. */
  readonly skipTags?: ReadonlyArray<string>
  readonly headless?: boolean
  readonly executablePath?: string
  /** Retries and per-attempt limit for levels written by name; default 0 retries, 8 s. */
  readonly limits?: { readonly retryCount: number; readonly timeoutPerAttemptMs: number }
  /** Engine options beyond the model; default Stagehand settles the DOM for 250 ms. */
  readonly engines?: Omit<EnginesOptions, "model">
  /** Runs at once, each on its own browser; default 1. Two suit a 2-core machine. */
  readonly concurrency?: number
  /** Longest one run of one scenario may take, steps and checks included; default 120 s. */
  readonly scenarioTimeoutMs?: number
  /** Screenshot artifact per attempt; default true. */
  readonly screenshots?: boolean
  /** Print the table (default: to stdout through Console); false to stay quiet. */
  readonly print?: boolean | ((table: string) => void)
  /** Fixture sites directory; default `scenarios/sites/`. */
  readonly sitesRoot?: string
}

export class RunError extends Data.TaggedError("RunError")<{ readonly message: string }> {}

export interface StepResult {
  readonly stepId: string
  readonly tool: string
  /** Calls made for the step: 1, plus the repeats an agent makes after a failure. */
  readonly calls: number
  readonly ok: boolean
  readonly engine: string | null
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

// ---------------------------------------------------------------------------------------------------------------
// Models.

const modelName = (model: RunSuiteOptions["model"] | Suite.ModelRef) =>
  typeof model === "string" ? model : "configured"

/** A suite's model reference made concrete; environment variables are read here, at run time, never stored. */
const modelConfig = (
  ref: "scripted" | "env" | Model.ModelConfig | Suite.ModelRef,
  scripted: ScriptedModel.ScriptedModel | undefined,
  seed: number
): Model.ModelConfig => {
  if (ref === "scripted") return scripted!.modelConfig(seed)
  if (ref === "env") return {}
  if (!("apiKeyEnv" in ref || "baseURLEnv" in ref)) return ref as Model.ModelConfig
  const fromEnv = (names: Readonly<Record<string, string>> | undefined) =>
    Object.fromEntries(
      Object.entries(names ?? {}).flatMap(([provider, name]) => {
        const value = process.env[name]
        return value === undefined || value === "" ? [] : [[provider, value] as const]
      })
    )
  const { apiKeyEnv, baseURLEnv, ...models } = ref as Extract<Suite.ModelRef, { apiKeyEnv?: unknown }>
  const keys = fromEnv(apiKeyEnv)
  const names = Object.fromEntries(Object.entries(models).filter(([, v]) => v !== undefined)) as Pick<
    Model.ModelConfig,
    "model" | "stagehandDom" | "stagehandCua" | "magnitude"
  >
  return {
    ...names,
    apiKeys: Object.fromEntries(Object.entries(keys).map(([p, k]) => [p, Redacted.make(k)])),
    baseURLs: fromEnv(baseURLEnv)
  }
}

const usesScripted = (scenarios: ReadonlyArray<Suite.LoadedScenario>, override: RunSuiteOptions["model"]) =>
  override === undefined ? scenarios.some((s) => s.model === "scripted") : override === "scripted"

// ---------------------------------------------------------------------------------------------------------------
// One run of one scenario.

interface Planned {
  readonly stepId: string
  readonly tool: string
  /** As written in the scenario (`site:` URLs kept), for the log. */
  readonly written: Record<string, unknown>
  /** As sent (URLs resolved). */
  readonly args: Record<string, unknown>
  readonly allowFailure: boolean
  readonly retries: number
  readonly retryDelayMs: number
}

const resolveArgs = (value: unknown, sites: Sites.Sites): unknown =>
  typeof value === "string"
    ? sites.resolve(value)
    : Array.isArray(value)
      ? value.map((v) => resolveArgs(v, sites))
      : typeof value === "object" && value !== null
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveArgs(v, sites)]))
        : value

const plan = (scenario: Suite.LoadedScenario, sites: Sites.Sites): ReadonlyArray<Planned> => [
  {
    stepId: "start",
    tool: "browser.navigate",
    written: { url: scenario.start },
    args: { url: sites.resolve(scenario.start) },
    allowFailure: false,
    retries: 1,
    retryDelayMs: 1_500
  },
  ...scenario.steps.map((step, i): Planned => {
    const written = step.instruction === undefined ? { ...step.args } : { instruction: step.instruction }
    return {
      stepId: `s${i + 1}`,
      tool: step.tool ?? "browser.act",
      written,
      args: resolveArgs(written, sites) as Record<string, unknown>,
      allowFailure: step.allowFailure ?? false,
      retries: step.retries ?? 1,
      retryDelayMs: step.retryDelayMs ?? 1_500
    }
  })
]

interface RunContext {
  readonly runId: string
  readonly sites: Sites.Sites
  readonly scripted: ScriptedModel.ScriptedModel | undefined
  readonly options: RunSuiteOptions
}

/** The stack for one run: Router ← Cascade ← Engines ← Sandbox ← a local Chromium, built fresh. */
const stack = (scenario: Suite.LoadedScenario, ctx: RunContext) => {
  const { options } = ctx
  const policy = Suite.policyOf(scenario.engines, options.limits ?? { retryCount: 0, timeoutPerAttemptMs: 8_000 })
  const model = modelConfig(options.model ?? scenario.model, ctx.scripted, scenario.seed)
  return Router.layer({ policy, fallback: scenario.engines.fallback ?? true }).pipe(
    Layer.provideMerge(Cascade.layer),
    Layer.provideMerge(
      Engines.layer({
        ...options.engines,
        model,
        stagehand: { domSettleTimeoutMs: 250, ...options.engines?.stagehand }
      })
    ),
    Layer.provideMerge(Sandbox.layer({ idleTimeoutMs: null })),
    Layer.provide(
      LocalChromium.layer({
        headless: options.headless ?? true,
        ...(options.executablePath === undefined ? {} : { executablePath: options.executablePath })
      })
    )
  )
}

const traceIdOf = (runId: string, scenario: string, repeat: number) => `${runId}-${scenario}-r${repeat}`.slice(0, 120)

const runOnce = (scenario: Suite.LoadedScenario, repeat: number, ctx: RunContext) =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const traceId = traceIdOf(ctx.runId, scenario.name, repeat)
    const log = yield* AttemptLog.AttemptLog
    const steps: Array<StepResult> = []
    const failures: Array<string> = []
    const scope = yield* Scope.make()
    const body = Effect.gen(function* () {
      const built = yield* Layer.buildWithMemoMap(stack(scenario, ctx), yield* Layer.makeMemoMap, scope)
      const router = Context.get(built, Router)
      const sandbox = Context.get(built, Sandbox)
      let lastUrl: string | null = null
      let extracted: unknown
      for (const step of plan(scenario, ctx.sites)) {
        const stepStarted = yield* Clock.currentTimeMillis
        // What the step asked, as written (site: URLs kept): lets importTrace turn this trace back into a scenario.
        yield* log.record({
          event: "scenario_step",
          ts: new Date().toISOString(),
          traceId,
          stepId: step.stepId,
          action: step.tool,
          scenario: scenario.name,
          seed: scenario.seed,
          toolArgs: step.written
        } as unknown as Events.Stamped)
        let answer: ToolAnswer | undefined
        let calls = 0
        while (calls <= step.retries) {
          if (calls > 0) yield* Effect.sleep(step.retryDelayMs)
          calls++
          answer = yield* router.call(step.tool, step.args, { traceId, stepId: step.stepId })
          if (answer.ok) break
          // An agent repeats a failed step when the error may pass or the router says to try again.
          if (!(answer.error?.retryable || answer.message !== undefined)) break
        }
        const done = answer!
        if (done.state.url !== null) lastUrl = done.state.url
        if (step.tool === "browser.extract" && done.ok) extracted = done.result
        steps.push({
          stepId: step.stepId,
          tool: step.tool,
          calls,
          ok: done.ok,
          engine: done.state.engine,
          ...(done.error === undefined ? {} : { errorType: done.error.type, message: done.error.message }),
          durationMs: (yield* Clock.currentTimeMillis) - stepStarted
        })
        if (!done.ok && !step.allowFailure) {
          failures.push(
            `step ${step.stepId} (${step.tool}) failed after ${calls} call${calls === 1 ? "" : "s"}: ${done.error?.type}: ${done.error?.message}`
          )
          return
        }
      }
      if (scenario.expect !== undefined) {
        const { wsEndpoint } = yield* sandbox.status
        if (wsEndpoint === null) failures.push("no browser is running to check the outcome on")
        else
          failures.push(
            ...(yield* Expect.check({ wsEndpoint, expect: scenario.expect, lastUrl, extracted, sites: ctx.sites }))
          )
      }
    })
    const limit = ctx.options.scenarioTimeoutMs ?? 120_000
    const sink = yield* Artifacts.Artifacts
    const outcome = yield* body.pipe(
      Effect.provideService(Artifacts.Artifacts, {
        ...sink,
        screenshots: sink.screenshots && (scenario.artifacts?.screenshots ?? true),
        snapshots: sink.snapshots && (scenario.artifacts?.snapshots ?? true)
      }),
      Effect.timeoutOption(limit),
      Effect.exit
    )
    if (Exit.isFailure(outcome)) failures.push(`the run failed: ${String(outcome.cause).slice(0, 500)}`)
    else if (Option.isNone(outcome.value)) failures.push(`the run took longer than ${limit} ms and was stopped`)
    yield* Scope.close(scope, Exit.void).pipe(Effect.timeoutOption(30_000))
    return {
      scenario: scenario.name,
      repeat,
      seed: scenario.seed,
      traceId,
      passed: failures.length === 0,
      failures,
      steps,
      durationMs: (yield* Clock.currentTimeMillis) - started
    } satisfies RunResult
  })

// ---------------------------------------------------------------------------------------------------------------
// The table.

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

// ---------------------------------------------------------------------------------------------------------------
// The suite.

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
        const sites = yield* Sites.start(options.sitesRoot)
        const scripted = usesScripted(scenarios, options.model) ? yield* ScriptedModel.start : undefined
        const ctx: RunContext = { runId, sites, scripted, options }
        const logging = Layer.mergeAll(
          AttemptLog.eventsLayer,
          AttemptLog.artifactsLayer({ screenshots: options.screenshots ?? true })
        ).pipe(
          Layer.provideMerge(AttemptLog.AttemptLog.layer({ root: logDir })),
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
