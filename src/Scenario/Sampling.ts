/**
 * Production sampling: a logged trace becomes a scenario file, redacted, so real failures join the suite. The steps
 * come from the arguments the log recorded (the runner's `scenario_step` events, or `toolArgs` on any event), else
 * from what failure reasons reveal (the URL of a failed navigation, the instruction of an act the model could not
 * place); a step whose arguments cannot be recovered is left out and named in the scenario's `origin.notes`.
 */
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Data, Effect, Schema } from "effect"
import type * as Events from "../Logging/Events.ts"
import * as Redact from "../Logging/Redact.ts"
import * as Analyzer from "./Analyzer.ts"
import { stringify } from "./JsonFile.ts"
import * as Sites from "./Sites.ts"
import { Scenario, type Step } from "./Suite.ts"

export class ImportError extends Data.TaggedError("ImportError")<{ readonly path: string; readonly message: string }> {}

export interface ImportOptions {
  /** A `.json` file to write, or a directory (the file is named after the scenario). Nothing is written without it. */
  readonly out?: string
  /** The scenario's name; default `imported-<traceId>`. */
  readonly name?: string
  /** The fixture sites' origins during the traced run, so their URLs come back as `site:`/`site2:` URLs. */
  readonly sites?: { readonly origin: string; readonly origin2: string }
  readonly redactor?: Redact.Redactor
}

export interface Imported {
  readonly scenario: Scenario
  /** Where it was written, when `out` was given. */
  readonly file?: string
  /** What could not be recovered (also in `scenario.origin.notes`). */
  readonly notes: ReadonlyArray<string>
}

interface Call {
  readonly callId: string
  readonly stepId: string | undefined
  readonly tool: string
  readonly argsHash: string | undefined
  toolArgs: Record<string, unknown> | undefined
  readonly reasons: Array<string>
  readonly urls: Array<string>
  outcome: "success" | "failure" | "unfinished"
}

const callOf = (attemptId: string) => attemptId.replace(/\.\d+$/, "")
const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The calls of a trace in order, with whatever each one's events say. */
const callsOf = (events: ReadonlyArray<Events.Stamped>) => {
  const calls = new Map<string, Call>()
  for (const e of events) {
    if (e.event === "scenario_step" || e.attemptId === undefined || e.action === undefined) continue
    const id = callOf(e.attemptId)
    let call = calls.get(id)
    if (call === undefined) {
      call = {
        callId: id,
        stepId: e.stepId,
        tool: e.action,
        argsHash: e.toolArgsHash,
        toolArgs: undefined,
        reasons: [],
        urls: [],
        outcome: "unfinished"
      }
      calls.set(id, call)
    }
    if (isRecord(e.toolArgs)) call.toolArgs ??= e.toolArgs
    if (e.event === "success") call.outcome = "success"
    if (e.event === "failure") {
      call.outcome = "failure"
      call.reasons.push(e.reason)
    }
    if ("url" in e && e.url !== "") call.urls.push(e.url)
  }
  return [...calls.values()]
}

const urlRe = /\bhttps?:\/\/[^\s"'<>)]+/

/** Arguments recovered from failure reasons, for logs that did not record them. */
const recover = (call: Call): Record<string, unknown> | undefined => {
  switch (call.tool) {
    case "browser.navigate": {
      const url = call.reasons.map((r) => urlRe.exec(r)?.[0]).find((u) => u !== undefined)
      return url === undefined ? undefined : { url: url.replace(/[.,;:]+$/, "") }
    }
    case "browser.act": {
      for (const reason of call.reasons) {
        const placed = /^(.+?): the model found no element for /s.exec(reason)?.[1]
        if (placed !== undefined) return { instruction: placed }
        const grammar = /cannot understand the instruction "(.+?)"/s.exec(reason)?.[1]
        if (grammar !== undefined) return { instruction: grammar }
      }
      return undefined
    }
    case "browser.screenshot":
    case "browser.status":
      return {}
    default:
      return undefined
  }
}

const slug = (s: string) =>
  s
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 80) || "trace"

/** Rewrites URLs on the fixture sites' origins as `site:`/`site2:` URLs, anywhere in a value. */
const unresolve = (value: unknown, sites: Sites.Sites | undefined): unknown => {
  if (sites === undefined) return value
  if (typeof value === "string") return sites.unresolve(value)
  if (Array.isArray(value)) return value.map((v) => unresolve(v, sites))
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unresolve(v, sites)]))
  return value
}

/** Turns one logged trace directory into a scenario (redacted), and writes it when `out` is given. */
export const importTrace = (traceDir: string, options: ImportOptions = {}): Effect.Effect<Imported, ImportError> =>
  Effect.gen(function* () {
    const dir = resolve(traceDir)
    const redactor = options.redactor ?? Redact.defaultRedactor
    const trace = yield* Analyzer.readTrace(dir, redactor).pipe(
      Effect.mapError((e) => new ImportError({ path: dir, message: e.message }))
    )
    if (trace === undefined) {
      return yield* new ImportError({ path: dir, message: "no attempt.jsonl or summary.json in this directory" })
    }
    const events = trace.events
    const sites = options.sites === undefined ? undefined : Sites.make(options.sites.origin, options.sites.origin2)
    const notes: Array<string> = []
    // The runner's record of each step, as written in its scenario.
    const written = new Map<string, { tool: string; args: Record<string, unknown>; seed?: number }>()
    let seed: number | undefined
    for (const e of events) {
      if (e.event !== "scenario_step" || e.stepId === undefined || e.action === undefined) continue
      if (isRecord(e.toolArgs)) written.set(e.stepId, { tool: e.action, args: e.toolArgs })
      if (e.seed !== undefined) seed ??= e.seed
    }

    // Consecutive calls of one step with the same tool and arguments are an agent repeating it.
    const steps: Array<{ tool: string; args: Record<string, unknown> | undefined; calls: Array<Call> }> = []
    for (const call of callsOf(events)) {
      const last = steps[steps.length - 1]
      const previous = last?.calls[last.calls.length - 1]
      if (
        last !== undefined &&
        previous !== undefined &&
        previous.stepId === call.stepId &&
        previous.tool === call.tool &&
        previous.argsHash === call.argsHash
      ) {
        last.calls.push(call)
        continue
      }
      const fromRunner = call.stepId === undefined ? undefined : written.get(call.stepId)
      const args =
        (fromRunner?.tool === call.tool ? fromRunner.args : undefined) ?? call.toolArgs ?? recover(call) ?? undefined
      steps.push({ tool: call.tool, args, calls: [call] })
    }

    const kept: Array<Step> = []
    let start: string | undefined
    for (const [i, step] of steps.entries()) {
      const label = `call ${step.calls[0]!.callId} (${step.tool})`
      if (step.tool === "browser.close" || step.tool === "browser.handoff") {
        notes.push(`${label} left out: it ends or hands over the session`)
        continue
      }
      if (step.args === undefined) {
        notes.push(
          `${label} left out: its arguments were not logged (hash ${step.calls[0]!.argsHash ?? "unknown"}); add it by hand`
        )
        continue
      }
      const args = unresolve(step.args, sites) as Record<string, unknown>
      if (i === 0 && step.tool === "browser.navigate" && typeof args.url === "string") {
        start = args.url
        continue
      }
      kept.push(
        step.tool === "browser.act" && typeof args.instruction === "string" && Object.keys(args).length === 1
          ? { instruction: args.instruction }
          : { tool: step.tool as NonNullable<Step["tool"]>, args }
      )
    }
    if (start === undefined) {
      const seen = trace.urls[0]
      start = seen === undefined ? "about:blank" : (unresolve(seen, sites) as string)
      notes.push(
        seen === undefined
          ? "no start page was logged: the scenario starts on about:blank"
          : `the first navigation was not logged: the scenario starts on the first page seen (${start})`
      )
    }

    const name = options.name ?? `imported-${slug(trace.traceId)}`
    const candidate = redactor.value({
      name,
      description: `Imported from trace ${trace.traceId} (${trace.date}), which ended in ${trace.outcome === "none" ? "no engine attempt" : `a ${trace.outcome}`}. Without an expect, it passes when every step succeeds.`,
      start,
      steps: kept,
      ...(seed === undefined ? {} : { seed }),
      tags: ["imported"],
      origin: {
        traceId: trace.traceId,
        importedFrom: dir,
        outcome: trace.outcome,
        ...(notes.length === 0 ? {} : { notes })
      }
    })
    const scenario = yield* Schema.decodeUnknownEffect(Scenario)(candidate).pipe(
      Effect.mapError(
        (e) => new ImportError({ path: dir, message: `the imported scenario is not valid: ${e.message}` })
      )
    )
    if (options.out === undefined) return { scenario, notes }
    const target = resolve(options.out)
    const file = target.endsWith(".json") ? target : join(target, `${name}.json`)
    yield* Effect.tryPromise({
      try: async () => {
        await mkdir(resolve(file, ".."), { recursive: true })
        await writeFile(file, `${stringify(scenario)}\n`)
      },
      catch: (cause) => new ImportError({ path: file, message: `cannot write: ${(cause as Error).message}` })
    })
    return { scenario, file, notes }
  })

export interface SampleOptions {
  /** The log root to sample (production's `$SWITCHYARD_LOG_DIR`). */
  readonly logs: string
  /** Directory the scenario files go to, e.g. `scenarios/imported/` (listed in the suite file). */
  readonly outDir: string
  /** Most traces imported per call; default 10 (the newest failing ones). */
  readonly max?: number
  /** Only days on or after this date (`YYYY-MM-DD`). */
  readonly since?: string
}

/** Imports the newest failing traces of a log root that are not in `outDir` yet. */
export const sampleFailures = (options: SampleOptions): Effect.Effect<ReadonlyArray<Imported>, ImportError> =>
  Effect.gen(function* () {
    const traces = yield* Analyzer.readTraces(
      options.logs,
      options.since === undefined ? {} : { since: options.since }
    ).pipe(Effect.mapError((e) => new ImportError({ path: options.logs, message: e.message })))
    const known = yield* Effect.promise(async () => {
      const ids = new Set<string>()
      const dir = resolve(options.outDir)
      if (
        !(await stat(dir).then(
          (s) => s.isDirectory(),
          () => false
        ))
      )
        return ids
      for (const name of (await readdir(dir)).filter((n) => n.endsWith(".json"))) {
        try {
          const json = JSON.parse(await readFile(join(dir, name), "utf8")) as { origin?: { traceId?: unknown } }
          if (typeof json.origin?.traceId === "string") ids.add(json.origin.traceId)
        } catch {}
      }
      return ids
    })
    const fresh = traces.filter((t) => t.outcome === "failure" && !known.has(t.traceId)).slice(-(options.max ?? 10))
    const imported: Array<Imported> = []
    for (const trace of fresh) imported.push(yield* importTrace(trace.dir, { out: options.outDir }))
    return imported
  })
