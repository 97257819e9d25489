/**
 * The replay level measured: the scenario suite run twice on the scripted model servers, the first time with nothing
 * kept (every act resolved by the cascade, and kept), the second on what the first kept. Per run: model requests,
 * acts replayed, pass^k; per act and per scenario, wall time against the first run. A form that changed between the
 * runs (a renamed field, a moved button, a new required field, a second field of the same name) is in the suite.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { Effect } from "effect"
import * as Runner from "../src/Scenario/Runner.ts"
import * as ScriptedModel from "../src/Scenario/ScriptedModel.ts"
import * as Sites from "../src/Scenario/Sites.ts"
import * as Resolutions from "../src/Store/Resolutions.ts"
import * as Stats from "./Stats.ts"

export interface ReplayRun {
  /** Requests the scripted model servers answered during the run. */
  readonly modelRequests: number
  readonly acts: number
  readonly replayedActs: number
  readonly passAllK: number
  readonly scenarios: number
  readonly durationMs: number
}

export interface ReplayResult {
  readonly k: number
  readonly first: ReplayRun
  readonly second: ReplayRun
  /** Wall time of an act step (its calls included): every act of each run, and the replayed ones of the second. */
  readonly act: { readonly first: Stats.Summary; readonly second: Stats.Summary; readonly replayed: Stats.Summary }
  /** Per scenario: median run time in each run, how many of its acts replayed, pass^k in each run. */
  readonly perScenario: ReadonlyArray<{
    readonly name: string
    readonly firstMs: number
    readonly secondMs: number
    readonly replayed: string
    readonly passFirst: boolean
    readonly passSecond: boolean
  }>
  /** Why acts of the second run were not replayed, and why what the first resolved was not kept: reason → count. */
  readonly notReplayed: Readonly<Record<string, number>>
  /** Why what the first run resolved was not kept: reason → count. */
  readonly notKept: Readonly<Record<string, number>>
  /** The changed form in the second run: its page's values read back, with nothing written to a wrong field. */
  readonly changedForm: {
    readonly passed: boolean
    readonly replayed: string
    readonly failures: ReadonlyArray<string>
  }
}

const suiteFile = join(import.meta.dirname, "..", "scenarios", "suite.json")

const person = [
  { instruction: 'fill "Full name" with "Ada Lovelace"' },
  { instruction: 'fill "Email" with "ada@example.com"' },
  { instruction: 'fill "Phone" with "555 0100"' },
  { instruction: 'select "Data" in "Team"' }
]
const sent = { instruction: 'click "Send application"' }

/**
 * The form as it is at the first run, and as it changed by the second: "Phone" is "Mobile phone", the button sits in
 * a review section, a Postcode is required, and a referee's "Email" field sits beside the applicant's (left empty).
 */
const changingForm = (changed: boolean) => ({
  name: "changing-form",
  description: "An application form that changed between the runs; what replays must not write a wrong field.",
  start: `site:/changing-form.html?v=${changed ? 2 : 1}`,
  steps: changed ? [...person, { instruction: 'fill "Postcode" with "NW1 6XE"' }, sent] : [...person, sent],
  expect: {
    text: ["Received Ada Lovelace"],
    values: {
      "#name": "Ada Lovelace",
      "#email": "ada@example.com",
      "#phone": "555 0100",
      "#team": "Data",
      ...(changed ? { "#postcode": "NW1 6XE", "#referee-email": "" } : {})
    }
  }
})

/** The bundled suite with the changing form, written for one run (its scenarios inline, so paths need no care). */
const suiteFor = (dir: string, changed: boolean) => {
  const suite = JSON.parse(readFileSync(suiteFile, "utf8")) as { scenarios: Array<unknown> }
  const scenarios = suite.scenarios.map((s) => (typeof s === "string" ? resolve(dirname(suiteFile), s) : s))
  const file = join(dir, `suite-${changed ? "second" : "first"}.json`)
  writeFileSync(file, JSON.stringify({ ...suite, scenarios: [...scenarios, changingForm(changed)] }))
  return file
}

/** A store that keeps what is resolved and replays nothing: the first run, as a service with nothing kept yet. */
const keepOnly = (store: Resolutions.Resolutions["Service"]): Resolutions.Resolutions["Service"] => ({
  ...store,
  lookup: () => Effect.succeed({ _tag: "absent" })
})

/** The replay level's misses and what it did not keep, from a run's attempt logs, by reason (a site's own words cut). */
const reasons = (logDir: string) => {
  const counted: Record<string, number> = {}
  for (const file of readdirSync(logDir, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".jsonl")) continue
    for (const line of readFileSync(join(logDir, file), "utf8").split("\n")) {
      if (!line.includes('"event":"replay"')) continue
      const event = JSON.parse(line) as { outcome?: string; reason?: string }
      if (event.outcome !== "miss" && event.outcome !== "not_recorded") continue
      const reason = `${event.outcome}: ${(event.reason ?? "").replace(/"[^"]*"/g, '"…"').slice(0, 90)}`
      counted[reason] = (counted[reason] ?? 0) + 1
    }
  }
  return counted
}

const total = (counts: Readonly<Record<string, number>>) => Object.values(counts).reduce((a, b) => a + b, 0)

const median = (xs: ReadonlyArray<number>) => Stats.summarize(xs, 0).median

export const run = (options: { readonly k: number }) =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-bench-replay-"))),
      (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
    )
    const store = yield* Resolutions.make({ location: { kind: "embedded", file: join(dir, "store.db") } })
    // One origin for the fixture sites and one model server across both runs, as one deployment sees them.
    const sites = yield* Sites.start()
    const scripted = yield* ScriptedModel.start

    const once = (label: "first" | "second") =>
      Effect.gen(function* () {
        const before = total(scripted.counts())
        const report = yield* Runner.runSuite({
          suite: suiteFor(dir, label === "second"),
          repeat: options.k,
          logDir: join(dir, label),
          model: "scripted",
          sites,
          scripted,
          screenshots: false,
          print: false,
          replay: { enabled: true, store: label === "first" ? keepOnly(store) : store }
        })
        const steps = report.scenarios.flatMap((s) => s.runs.flatMap((r) => r.steps))
        const acts = steps.filter((s) => s.tool === "browser.act")
        return {
          report,
          acts,
          summary: {
            modelRequests: total(scripted.counts()) - before,
            acts: acts.length,
            replayedActs: acts.filter((s) => s.level === "replay").length,
            passAllK: report.totals.passAllK,
            scenarios: report.totals.scenarios,
            durationMs: report.durationMs
          } satisfies ReplayRun
        }
      })

    const first = yield* once("first")
    const second = yield* once("second")
    const perScenario = second.report.scenarios.map((s) => {
      const before = first.report.scenarios.find((f) => f.name === s.name)
      const acts = s.runs.flatMap((r) => r.steps.filter((st) => st.tool === "browser.act"))
      return {
        name: s.name,
        firstMs: median(before?.runs.map((r) => r.durationMs) ?? []),
        secondMs: median(s.runs.map((r) => r.durationMs)),
        replayed: `${acts.filter((a) => a.level === "replay").length}/${acts.length}`,
        passFirst: before?.passAll ?? false,
        passSecond: s.passAll
      }
    })
    const changed = second.report.scenarios.find((s) => s.name === "changing-form")
    return {
      k: options.k,
      first: first.summary,
      second: second.summary,
      act: {
        first: Stats.summarize(first.acts.map((a) => a.durationMs)),
        second: Stats.summarize(second.acts.map((a) => a.durationMs)),
        replayed: Stats.summarize(second.acts.filter((a) => a.level === "replay").map((a) => a.durationMs))
      },
      perScenario,
      notReplayed: reasons(join(dir, "second")),
      notKept: Object.fromEntries(
        Object.entries(reasons(join(dir, "first"))).filter(([reason]) => reason.startsWith("not_recorded"))
      ),
      changedForm: {
        passed: changed?.passAll ?? false,
        replayed: perScenario.find((s) => s.name === "changing-form")?.replayed ?? "",
        failures: changed?.runs.flatMap((r) => r.failures) ?? []
      }
    } satisfies ReplayResult
  }).pipe(Effect.scoped)

/** Reasons as list items, the most frequent first. */
const byCount = (counts: Readonly<Record<string, number>>) =>
  Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `- ${n} × ${reason}`)

/** The section of the bench's report. */
export const section = (r: ReplayResult) => {
  const row = (label: string, x: ReplayRun) =>
    `| ${label} | ${x.modelRequests} | ${x.replayedActs}/${x.acts} | ${x.passAllK}/${x.scenarios} | ${(x.durationMs / 1000).toFixed(1)} s |`
  return [
    `## Replay: the scenario suite twice on the scripted model (k = ${r.k}; the first run with nothing kept)`,
    "",
    "| run | model requests | acts replayed | pass^k | wall time |",
    "|---|---|---|---|---|",
    row("first", r.first),
    row("second", r.second),
    "",
    `Act wall time: first run ${Stats.show(r.act.first)}; second run ${Stats.show(r.act.second)}; replayed acts ${Stats.show(r.act.replayed)}.`,
    "",
    "| scenario | first run (median) | second run (median) | acts replayed | pass^k first / second |",
    "|---|---|---|---|---|",
    ...r.perScenario.map(
      (s) =>
        `| ${s.name} | ${s.firstMs} ms | ${s.secondMs} ms | ${s.replayed} | ${s.passFirst ? "yes" : "no"} / ${s.passSecond ? "yes" : "no"} |`
    ),
    "",
    "Not replayed in the second run, by reason (a miss goes on to the cascade at once):",
    "",
    ...byCount(r.notReplayed),
    "",
    "Not kept in the first run, by reason:",
    "",
    ...byCount(r.notKept),
    "",
    `Changed form (renamed field, moved button, new required field, a second "Email"): ${r.changedForm.passed ? "passed" : "FAILED"}, ${r.changedForm.replayed} acts replayed, the rest repaired by the cascade${r.changedForm.failures.length > 0 ? `; ${r.changedForm.failures.join("; ")}` : ""}.`
  ].join("\n")
}
