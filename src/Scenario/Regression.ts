/**
 * The regression policy of seed 003 against a committed baseline: a run fails when the Stagehand success rate drops
 * more than 10 percentage points below the baseline's, or when an error type the baseline never saw exceeds 5% of
 * attempts. `update` accepts the current numbers as the new baseline.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { Data, Effect, Schema } from "effect"
import type { Stats } from "./Analyzer.ts"
import { stringify } from "./JsonFile.ts"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const ProviderRate = Schema.Struct({ attempts: Count, successes: Count, successRate: Schema.Number })

export const Baseline = Schema.Struct({
  version: Schema.Literal(1),
  /** The suite the numbers came from (informational). */
  suite: Schema.optional(Schema.String),
  repeat: Schema.optional(Schema.Int),
  /** Engine attempts in the run. */
  attempts: Count,
  providers: Schema.Record(Schema.String, ProviderRate),
  errorTypes: Schema.Record(Schema.String, Count),
  /** Per scenario: runs that passed, of runs (informational: scenarios are not gated one by one). */
  scenarios: Schema.optional(Schema.Record(Schema.String, Schema.Struct({ passes: Count, runs: Count })))
})
export type Baseline = typeof Baseline.Type

export interface Thresholds {
  /** The provider whose success rate is gated; default `stagehand`. */
  readonly provider: string
  /** Largest allowed drop of its success rate, in percentage points; default 10. */
  readonly maxDropPoints: number
  /** Largest share of attempts an error type unknown to the baseline may reach; default 0.05. */
  readonly maxNewErrorShare: number
}

export const defaultThresholds: Thresholds = { provider: "stagehand", maxDropPoints: 10, maxNewErrorShare: 0.05 }

export interface Verdict {
  readonly ok: boolean
  /** Why the run fails the policy (empty when it passes). */
  readonly reasons: ReadonlyArray<string>
  /** What changed without failing the policy. */
  readonly notes: ReadonlyArray<string>
}

export class RegressionError extends Data.TaggedError("RegressionError")<{
  readonly path: string
  readonly message: string
}> {}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`
const points = (x: number) => `${(x * 100).toFixed(1)} points`
/** Rates are ratios of small integers: compare with a tolerance so 10.0 points is not "more than 10". */
const epsilon = 1e-9

export interface ScenarioOutcome {
  readonly name: string
  readonly passes: number
  readonly runs: number
}

/** The baseline a run's numbers make. */
export const baselineOf = (
  stats: Stats,
  meta: { readonly suite?: string; readonly repeat?: number; readonly scenarios?: ReadonlyArray<ScenarioOutcome> } = {}
): Baseline => ({
  version: 1,
  ...(meta.suite === undefined ? {} : { suite: meta.suite }),
  ...(meta.repeat === undefined ? {} : { repeat: meta.repeat }),
  attempts: stats.attempts,
  providers: Object.fromEntries(
    Object.entries(stats.providers).map(([name, r]) => [
      name,
      { attempts: r.attempts, successes: r.successes, successRate: Number(r.successRate.toFixed(4)) }
    ])
  ),
  errorTypes: { ...stats.errorTypes },
  ...(meta.scenarios === undefined
    ? {}
    : {
        scenarios: Object.fromEntries(
          [...meta.scenarios]
            .sort((a, b) => a.name.localeCompare(b.name))
            .map((s) => [s.name, { passes: s.passes, runs: s.runs }])
        )
      })
})

/** Applies the policy: the current run's numbers against the baseline's. */
export const compare = (
  baseline: Baseline,
  current: Stats,
  thresholds: Partial<Thresholds> = {},
  scenarios: ReadonlyArray<ScenarioOutcome> = []
): Verdict => {
  const t = { ...defaultThresholds, ...thresholds }
  const reasons: Array<string> = []
  const notes: Array<string> = []
  const name = t.provider.charAt(0).toUpperCase() + t.provider.slice(1)

  const before = baseline.providers[t.provider]
  const now = current.providers[t.provider]
  if (before === undefined || before.attempts === 0) {
    notes.push(`${name} made no attempts in the baseline: its success rate is not gated`)
  } else if (now === undefined || now.attempts === 0) {
    reasons.push(`${name} made no attempts (the baseline had ${before.attempts}): its success rate cannot be checked`)
  } else {
    const drop = before.successRate - now.successRate
    const change = `${name} success rate ${pct(before.successRate)} → ${pct(now.successRate)} (${now.successes}/${now.attempts})`
    if (drop * 100 > t.maxDropPoints + epsilon) {
      reasons.push(`${change}: down ${points(drop)}, more than the ${t.maxDropPoints} allowed`)
    } else if (Math.abs(drop) > epsilon) notes.push(`${change}`)
  }

  for (const [type, count] of Object.entries(current.errorTypes)) {
    if (count === 0 || (baseline.errorTypes[type] ?? 0) > 0) continue
    const share = current.attempts === 0 ? 0 : count / current.attempts
    const what = `new error type "${type}": ${count} of ${current.attempts} attempts (${pct(share)})`
    if (share > t.maxNewErrorShare + epsilon) reasons.push(`${what}, more than the ${pct(t.maxNewErrorShare)} allowed`)
    else notes.push(`${what}, within the ${pct(t.maxNewErrorShare)} allowed`)
  }
  for (const [type, count] of Object.entries(baseline.errorTypes)) {
    if (count > 0 && (current.errorTypes[type] ?? 0) === 0) notes.push(`error type "${type}" no longer occurs`)
  }
  for (const s of scenarios) {
    const was = baseline.scenarios?.[s.name]
    if (was === undefined) notes.push(`scenario ${s.name} is not in the baseline`)
    else if (was.passes === was.runs && s.passes < s.runs)
      notes.push(`scenario ${s.name} now fails (${s.passes}/${s.runs})`)
    else if (was.passes < was.runs && s.passes === s.runs) notes.push(`scenario ${s.name} now passes`)
  }
  return { ok: reasons.length === 0, reasons, notes }
}

/** The baseline beside a suite: `scenarios/suite.json` → `scenarios/baseline.json`, `x.json` → `x.baseline.json`. */
export const baselinePathFor = (suite: string) => {
  const name = basename(suite, ".json")
  return join(dirname(suite), name === "suite" ? "baseline.json" : `${name}.baseline.json`)
}

/** Reads and validates a baseline file. */
export const load = (path: string): Effect.Effect<Baseline, RegressionError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (cause) =>
      new RegressionError({
        path,
        message: `no baseline at ${path} (${(cause as Error).message.split(":")[0]}); create one with --update-baseline`
      })
  }).pipe(
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: (cause) => new RegressionError({ path, message: `${path} is not JSON: ${(cause as Error).message}` })
      })
    ),
    Effect.flatMap((json) =>
      Schema.decodeUnknownEffect(Baseline)(json).pipe(
        Effect.mapError((e) => new RegressionError({ path, message: `${path} is not a baseline: ${e.message}` }))
      )
    )
  )

export const save = (path: string, baseline: Baseline): Effect.Effect<void, RegressionError> =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true })
      await writeFile(path, `${stringify(baseline)}\n`)
    },
    catch: (cause) => new RegressionError({ path, message: `cannot write ${path}: ${(cause as Error).message}` })
  })

export interface GateOptions {
  /** The baseline file (e.g. `scenarios/baseline.json`). */
  readonly baseline: string
  readonly stats: Stats
  readonly suite?: string
  readonly repeat?: number
  readonly scenarios?: ReadonlyArray<ScenarioOutcome>
  /** Accept the current numbers: write them as the baseline and pass. */
  readonly update?: boolean
  readonly thresholds?: Partial<Thresholds>
}

export interface GateResult extends Verdict {
  /** The baseline file was (re)written. */
  readonly updated: boolean
}

/** Compares against the baseline file, or with `update` writes the current numbers there (what the old said is kept as notes). */
export const gate = (options: GateOptions): Effect.Effect<GateResult, RegressionError> =>
  Effect.gen(function* () {
    const current = baselineOf(options.stats, {
      ...(options.suite === undefined ? {} : { suite: options.suite }),
      ...(options.repeat === undefined ? {} : { repeat: options.repeat }),
      ...(options.scenarios === undefined ? {} : { scenarios: options.scenarios })
    })
    if (options.update) {
      const previous = yield* Effect.option(load(options.baseline))
      const was =
        previous._tag === "Some"
          ? compare(previous.value, options.stats, options.thresholds, options.scenarios)
          : { ok: true, reasons: [], notes: ["no previous baseline"] }
      yield* save(options.baseline, current)
      return {
        ok: true,
        reasons: [],
        notes: [`baseline written to ${options.baseline}`, ...was.reasons.map((r) => `accepted: ${r}`), ...was.notes],
        updated: true
      }
    }
    const baseline = yield* load(options.baseline)
    return { ...compare(baseline, options.stats, options.thresholds, options.scenarios), updated: false }
  })

/** The verdict as lines to print: PASS or FAIL, then reasons, then notes. */
export const format = (verdict: Verdict, baselinePath?: string): string =>
  [
    `Regression check${baselinePath ? ` against ${baselinePath}` : ""}: ${verdict.ok ? "PASS" : "FAIL"}`,
    ...verdict.reasons.map((r) => `  ✗ ${r}`),
    ...verdict.notes.map((n) => `  · ${n}`)
  ].join("\n")
