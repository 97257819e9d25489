/**
 * Reads any log root (scenario runs or production) — each trace's `summary.json` and `attempt.jsonl` — into per-trace
 * timelines and suite-wide statistics; Report.ts renders and writes them.
 */
import { access, readdir, readFile, stat } from "node:fs/promises"
import { basename, dirname, join, resolve } from "node:path"
import { Data, Effect, Option } from "effect"
import * as EngineId from "../EngineId.ts"
import * as Events from "../Logging/Events.ts"
import * as Redact from "../Logging/Redact.ts"
import * as Summary from "../Logging/Summary.ts"

export class AnalyzeError extends Data.TaggedError("AnalyzeError")<{
  readonly path: string
  readonly message: string
}> {}

export interface Rate {
  readonly attempts: number
  readonly successes: number
  readonly failures: number
  /** successes / attempts; 0 when there were no attempts. */
  readonly successRate: number
}

/** What the regression policy compares: engine attempts, per provider and per level, and failures per error type. */
export interface Stats {
  readonly traces: number
  readonly attempts: number
  readonly successes: number
  readonly failures: number
  /** By provider as seed 003 names it: `stagehand`, `playwright`, `magnitude`, `human`. */
  readonly providers: Readonly<Record<string, Rate>>
  /** By cascade level: `stagehand:dom`, `stagehand:cua`, `playwright`, … */
  readonly levels: Readonly<Record<string, Rate>>
  readonly errorTypes: Readonly<Record<string, number>>
}

export interface AttemptInfo {
  readonly attemptId: string
  /** The tool call the attempt belongs to (`<traceId>[/<stepId>]#<n>`). */
  readonly callId: string
  readonly stepId?: string
  readonly action?: string
  readonly provider: string
  /** `stagehand:dom`, `playwright`, … */
  readonly engine: string
  readonly level?: number
  readonly attempt?: number
  readonly ts: string
  readonly outcome: "success" | "failure" | "unfinished"
  readonly durationMs?: number
  readonly errorType?: string
  readonly reason?: string
  /** Absolute paths of the attempt's artifacts, when they exist. */
  readonly screenshot?: string
  readonly snapshot?: string
}

export interface TraceInfo {
  readonly traceId: string
  readonly date: string
  readonly dir: string
  readonly summary: Summary.Summary
  readonly events: ReadonlyArray<Events.Stamped>
  /** Lines of `attempt.jsonl` that are not events of this version (cut short, foreign, older): left out. */
  readonly skipped: number
  readonly attempts: ReadonlyArray<AttemptInfo>
  /** The last engine attempt's outcome; `none` for a trace without engine attempts. */
  readonly outcome: "success" | "failure" | "none"
  /** Pages the trace was seen on (engine switches, snapshots), redacted. */
  readonly urls: ReadonlyArray<string>
}

export interface Analysis {
  readonly logs: string
  readonly traces: ReadonlyArray<TraceInfo>
  readonly stats: Stats
  /** Log lines left out across all traces (see `TraceInfo.skipped`). */
  readonly skipped: number
  /** Traces whose last attempt failed. */
  readonly failing: ReadonlyArray<TraceInfo>
  /** Traces that had failures but ended with a success. */
  readonly recovered: ReadonlyArray<TraceInfo>
  /** The commonest failure reasons (redacted, with ids and numbers folded so alike reasons group). */
  readonly reasons: ReadonlyArray<{ readonly errorType: string; readonly reason: string; readonly count: number }>
}

// ---------------------------------------------------------------------------------------------------------------
// Reading.

/** Same rule as the attempt log's file names: artifacts are named after the attempt id. */
const safeName = (id: string) => id.replaceAll(/[^A-Za-z0-9._-]/g, "_").slice(0, 128) || "_"

export const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false
  )

const listDirs = async (dir: string) => {
  try {
    const entries = await readdir(dir, { withFileTypes: true })
    return entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort()
  } catch {
    return []
  }
}

/** The `browser-automation` directory under a log root (or the root itself when it is one). */
const automationDir = async (logs: string) => {
  const root = resolve(logs)
  if (basename(root) === "browser-automation") return root
  if (/^\d{4}-\d{2}-\d{2}$/.test(basename(root)) && basename(dirname(root)) === "browser-automation") return root
  return join(root, "browser-automation")
}

/** The events of an `attempt.jsonl`, redacted; a line that does not decode is skipped and counted, never fatal. */
const readLines = (text: string, redactor: Redact.Redactor) => {
  const events: Array<Events.Stamped> = []
  let skipped = 0
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      skipped++ // a line cut short by a crash
      continue
    }
    const event = Events.decode(redactor.value(value))
    if (Option.isSome(event)) events.push(event.value)
    else skipped++
  }
  return { events, skipped }
}

/** A `summary.json`, when there is one and it is a summary of this version. */
const readSummary = (text: string | undefined) =>
  text === undefined ? undefined : Option.getOrUndefined(Summary.fromText(text))

const callOf = (attemptId: string) => attemptId.replace(/\.\d+$/, "")

/** Reads one trace directory; a trace without `summary.json` gets one folded from its lines. */
export const readTrace = (dir: string, redactor: Redact.Redactor = Redact.defaultRedactor) =>
  Effect.tryPromise({
    try: async (): Promise<TraceInfo | undefined> => {
      const lines = await readFile(join(dir, "attempt.jsonl"), "utf8").catch(() => undefined)
      const summaryText = await readFile(join(dir, "summary.json"), "utf8").catch(() => undefined)
      if (lines === undefined && summaryText === undefined) return undefined
      const { events, skipped } = readLines(lines ?? "", redactor)
      const written = readSummary(summaryText)
      const traceId = written?.traceId ?? events[0]?.traceId ?? basename(dir)
      const summary = written ?? events.reduce(Summary.fold, Summary.empty(traceId, events[0]?.ts ?? ""))
      const artifacts = new Set(await readdir(join(dir, "artifacts")).catch(() => [] as Array<string>))
      // Attempts in order. An id can come twice: the Router's fallback within one call numbers its levels afresh,
      // so a later `start` with a finished attempt's id is a new attempt.
      const list: Array<AttemptInfo> = []
      const open = new Map<string, number>()
      const urls: Array<string> = []
      for (const e of events) {
        if ("url" in e && e.url !== "" && !urls.includes(e.url)) urls.push(e.url)
        if (e.event !== "start" && e.event !== "success" && e.event !== "failure") continue
        let index = open.get(e.attemptId)
        if (e.event === "start" || index === undefined) {
          index = list.length
          open.set(e.attemptId, index)
          list.push({
            attemptId: e.attemptId,
            callId: callOf(e.attemptId),
            ...(e.stepId === undefined ? {} : { stepId: e.stepId }),
            ...(e.action === undefined ? {} : { action: e.action }),
            provider: e.provider,
            engine: EngineId.label({ kind: e.engine, mode: e.mode }),
            level: e.level,
            attempt: e.attempt,
            ts: e.ts,
            outcome: "unfinished"
          })
        }
        if (e.event !== "start") {
          list[index] = {
            ...list[index]!,
            outcome: e.event,
            durationMs: e.durationMs,
            ...(e.event === "failure" ? { errorType: e.errorType, reason: e.reason } : {})
          }
        }
      }
      // Artifacts are named after the attempt id: the screenshot is the last attempt's with that id, the snapshot
      // the last failed one's.
      const lastWith = (id: string, failed: boolean) =>
        list.findLastIndex((a) => a.attemptId === id && (!failed || a.outcome === "failure"))
      // An attempt whose picture equals an earlier one's points at it (in this trace or another of the same day).
      const pointers = new Map<string, string>()
      for (const e of events) {
        if (e.event !== "screenshot_shared") continue
        const path = join(dirname(dir), safeName(e.sameAsTrace), e.file)
        if (
          await access(path).then(
            () => true,
            () => false
          )
        )
          pointers.set(e.attemptId, path)
      }
      for (const id of new Set(list.map((a) => a.attemptId))) {
        const png = safeName(`${id}.png`)
        const snapshot = safeName(`${id}.snapshot.json`)
        const shot = lastWith(id, false)
        const picture = artifacts.has(png) ? join(dir, "artifacts", png) : pointers.get(id)
        if (picture !== undefined && shot >= 0) list[shot] = { ...list[shot]!, screenshot: picture }
        const failed = lastWith(id, true)
        if (artifacts.has(snapshot) && failed >= 0) {
          list[failed] = { ...list[failed]!, snapshot: join(dir, "artifacts", snapshot) }
        }
      }
      // Snapshots record the page they were taken on.
      for (const a of list) {
        if (a.snapshot === undefined) continue
        try {
          const url = (JSON.parse(await readFile(a.snapshot, "utf8")) as { dom?: { url?: unknown } }).dom?.url
          if (typeof url === "string" && !urls.includes(redactor.url(url))) urls.push(redactor.url(url))
        } catch {}
      }
      const finished = list.filter((a) => a.outcome !== "unfinished")
      const last = finished[finished.length - 1]
      return {
        traceId,
        date: basename(dirname(dir)),
        dir,
        summary,
        events,
        skipped,
        attempts: list,
        outcome: last === undefined ? "none" : last.outcome === "success" ? "success" : "failure",
        urls
      }
    },
    catch: (cause) => new AnalyzeError({ path: dir, message: `cannot read trace: ${(cause as Error).message}` })
  })

export interface ReadOptions {
  /** Only these traces (by id). */
  readonly traceIds?: ReadonlyArray<string>
  /** Only days on or after this date (`YYYY-MM-DD`). */
  readonly since?: string
  readonly redactor?: Redact.Redactor
}

/** Every trace under a log root, oldest first. */
export const readTraces = (logs: string, options: ReadOptions = {}) =>
  Effect.gen(function* () {
    const dir = yield* Effect.promise(() => automationDir(logs))
    const isDay = /^\d{4}-\d{2}-\d{2}$/.test(basename(dir))
    const days = isDay ? [dir] : (yield* Effect.promise(() => listDirs(dir))).map((d) => join(dir, d))
    const wanted = options.traceIds === undefined ? undefined : new Set(options.traceIds.map(safeName))
    const traces: Array<TraceInfo> = []
    for (const day of days) {
      if (options.since !== undefined && basename(day) < options.since) continue
      for (const name of yield* Effect.promise(() => listDirs(day))) {
        if (wanted !== undefined && !wanted.has(name)) continue
        const trace = yield* readTrace(join(day, name), options.redactor)
        if (trace !== undefined) traces.push(trace)
      }
    }
    return traces.sort(
      (a, b) => a.summary.startedAt.localeCompare(b.summary.startedAt) || a.traceId.localeCompare(b.traceId)
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// Statistics.

const rateOf = (r: { attempts: number; successes: number; failures: number }): Rate => ({
  ...r,
  successRate: r.attempts === 0 ? 0 : r.successes / r.attempts
})

const sorted = <A>(record: Record<string, A>): Record<string, A> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)))

/** Totals over traces: attempts (engine `start` events), successes and failures, per provider, level and error type. */
export const statsOf = (traces: ReadonlyArray<TraceInfo>): Stats => {
  const providers: Record<string, { attempts: number; successes: number; failures: number }> = {}
  const levels: Record<string, { attempts: number; successes: number; failures: number }> = {}
  const errorTypes: Record<string, number> = {}
  const add = (to: typeof providers, key: string, field: "attempts" | "successes" | "failures") => {
    to[key] ??= { attempts: 0, successes: 0, failures: 0 }
    to[key][field]++
  }
  for (const trace of traces) {
    for (const a of trace.attempts) {
      add(providers, a.provider, "attempts")
      add(levels, a.engine, "attempts")
      if (a.outcome === "success") {
        add(providers, a.provider, "successes")
        add(levels, a.engine, "successes")
      } else if (a.outcome === "failure") {
        add(providers, a.provider, "failures")
        add(levels, a.engine, "failures")
        const type = a.errorType ?? "unknown"
        errorTypes[type] = (errorTypes[type] ?? 0) + 1
      }
    }
  }
  const total = (field: "attempts" | "successes" | "failures") =>
    Object.values(providers).reduce((n, p) => n + p[field], 0)
  return {
    traces: traces.length,
    attempts: total("attempts"),
    successes: total("successes"),
    failures: total("failures"),
    providers: sorted(Object.fromEntries(Object.entries(providers).map(([k, v]) => [k, rateOf(v)]))),
    levels: sorted(Object.fromEntries(Object.entries(levels).map(([k, v]) => [k, rateOf(v)]))),
    errorTypes: sorted(errorTypes)
  }
}

/** Folds ids, numbers and quoted values so that alike failure reasons group together. */
const shapeOf = (reason: string) =>
  reason
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\b[0-9a-f]{8}-[0-9a-f-]{27,}\b/gi, "<id>")
    .replace(/\d+/g, "N")
    .slice(0, 200)

export const analysisOf = (logs: string, traces: ReadonlyArray<TraceInfo>): Analysis => {
  const reasons = new Map<string, { errorType: string; reason: string; count: number }>()
  for (const trace of traces) {
    for (const a of trace.attempts) {
      if (a.outcome !== "failure") continue
      const reason = shapeOf(a.reason ?? "")
      const key = `${a.errorType}\u0000${reason}`
      const entry = reasons.get(key) ?? { errorType: a.errorType ?? "unknown", reason, count: 0 }
      entry.count++
      reasons.set(key, entry)
    }
  }
  return {
    logs: resolve(logs),
    traces,
    stats: statsOf(traces),
    skipped: traces.reduce((n, t) => n + t.skipped, 0),
    failing: traces.filter((t) => t.outcome === "failure"),
    recovered: traces.filter((t) => t.outcome === "success" && t.attempts.some((a) => a.outcome === "failure")),
    reasons: [...reasons.values()].sort(
      (a, b) => b.count - a.count || a.errorType.localeCompare(b.errorType) || a.reason.localeCompare(b.reason)
    )
  }
}
