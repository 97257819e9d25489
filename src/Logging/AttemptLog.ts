/**
 * The per-trace log of seed 003: `browser-automation/YYYY-MM-DD/<traceId>/attempt.jsonl` (every event, redacted),
 * `summary.json` (Summary.ts, folded from the lines as a reader decodes them) kept in step with it, and
 * `artifacts/`. Writes run on one background fiber: a browser call never waits for the disk, and a disk
 * that fails (read-only, full) is reported once on stderr and counted, never raised.
 */
import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { homedir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Fiber, Layer, Option, Queue } from "effect"
import * as Artifacts from "./Artifacts.ts"
import * as Events from "./Events.ts"
import * as Redact from "./Redact.ts"
import * as Summary from "./Summary.ts"

export interface AttemptLogOptions {
  /** Log root; default `$SWITCHYARD_LOG_DIR`, else `$CLAW_LOG_DIR`, else `~/.switchyard/logs`. */
  readonly root?: string
  readonly redactor?: Redact.Redactor
  /** Traces whose summary stays in memory; default `keptTraces`. */
  readonly keptTraces?: number
}

/** The traces being written to now, in a busy service; one seen again later reads its summary back from its file. */
export const keptTraces = 100

/** The log root when nothing names one. */
export const homeRoot = join(homedir(), ".switchyard", "logs")

export const defaultRoot = () => process.env.SWITCHYARD_LOG_DIR || process.env.CLAW_LOG_DIR || homeRoot

export const dateOf = (ts: string) => ts.slice(0, 10)

type Job =
  | { readonly kind: "event"; readonly traceId: string; readonly event: Events.Stamped }
  | { readonly kind: "artifact"; readonly traceId: string; readonly name: string; readonly data: Uint8Array | string }
  | { readonly kind: "flush"; readonly done: () => void }

interface Trace {
  readonly dir: string
  summary: Summary.Summary
  ready: boolean
}

const safeName = (id: string) => id.replaceAll(/[^A-Za-z0-9._-]/g, "_").slice(0, 128) || "_"

export const make = Effect.fnUntraced(function* (options: AttemptLogOptions = {}) {
  const root = options.root ?? defaultRoot()
  const redactor = options.redactor ?? Redact.defaultRedactor
  const kept = options.keptTraces ?? keptTraces
  const gatherMs = 20
  const queue = yield* Queue.unbounded<Job>()
  const traces = new Map<string, Trace>()
  let failed = 0
  let reported = false

  const traceDir = (traceId: string, ts = new Date().toISOString()) =>
    join(root, "browser-automation", dateOf(ts), safeName(traceId))

  const failure = (what: string, error: unknown) => {
    failed++
    if (reported) return
    reported = true
    process.stderr.write(
      `switchyard: cannot write logs under ${root} (${what}: ${(error as Error).message}); browser calls continue, later log failures are only counted\n`
    )
  }

  /** The summary a trace's folder already has (a trace forgotten here that goes on), else a new one. */
  const summaryAt = (dir: string, traceId: string, ts: string) =>
    readFile(join(dir, "summary.json"), "utf8").then(
      (text) => Option.getOrElse(Summary.fromText(text), () => Summary.empty(traceId, ts)),
      () => Summary.empty(traceId, ts)
    )

  const traceOf = async (traceId: string, ts: string) => {
    let trace = traces.get(traceId)
    // Insertion order is recency: a trace written to moves to the end.
    traces.delete(traceId)
    if (trace === undefined) {
      const dir = traceDir(traceId, ts)
      trace = { dir, summary: await summaryAt(dir, traceId, ts), ready: false }
    }
    traces.set(traceId, trace)
    // Keep memory bounded in a long-lived service: forget the least recently written traces (their files stay).
    if (traces.size > kept) traces.delete(traces.keys().next().value!)
    if (!trace.ready) {
      await mkdir(join(trace.dir, "artifacts"), { recursive: true })
      trace.ready = true
    }
    return trace
  }

  /** One batch: per trace, append its lines in one write, then replace summary.json atomically. */
  const writeBatch = async (jobs: ReadonlyArray<Job>) => {
    const byTrace = new Map<string, Array<Events.Stamped>>()
    for (const job of jobs) {
      if (job.kind !== "event") continue
      const list = byTrace.get(job.traceId) ?? []
      list.push(job.event)
      byTrace.set(job.traceId, list)
    }
    for (const [traceId, events] of byTrace) {
      try {
        const trace = await traceOf(traceId, events[0]!.ts)
        const redacted = events.map((e) => redactor.value(e))
        await appendFile(join(trace.dir, "attempt.jsonl"), redacted.map((e) => `${JSON.stringify(e)}\n`).join(""))
        // Folded as a reader decodes the lines, so the summary is what the lines say.
        for (const e of redacted) {
          const event = Events.decode(e)
          if (Option.isSome(event)) trace.summary = Summary.fold(trace.summary, event.value)
        }
        const tmp = join(trace.dir, `.summary.json.${process.pid}.tmp`)
        await writeFile(tmp, `${JSON.stringify(trace.summary, null, 2)}\n`)
        await rename(tmp, join(trace.dir, "summary.json"))
      } catch (error) {
        failure(`trace ${traceId}`, error)
      }
    }
    for (const job of jobs) {
      if (job.kind === "artifact") {
        try {
          const trace = await traceOf(job.traceId, new Date().toISOString())
          await writeFile(join(trace.dir, Artifacts.fileOf(job.name)), job.data)
        } catch (error) {
          failure(`artifact ${job.name}`, error)
        }
      } else if (job.kind === "flush") job.done()
    }
  }

  // A call emits its events over a few milliseconds: gathering them for a moment makes one append and one summary
  // per trace instead of one per event. Wall-clock on purpose: this paces disk writes, it decides nothing.
  const gathered = Queue.takeAll(queue).pipe(
    Effect.flatMap((first) =>
      first.some((job) => job.kind === "flush")
        ? Effect.succeed(first)
        : Effect.promise(() => new Promise((resolve) => setTimeout(resolve, gatherMs))).pipe(
            Effect.andThen(Queue.clear(queue)),
            Effect.map((rest) => [...first, ...rest])
          )
    )
  )
  const writer = yield* Effect.forkScoped(
    Effect.forever(gathered.pipe(Effect.flatMap((jobs) => Effect.promise(() => writeBatch(jobs))))).pipe(Effect.ignore)
  )

  const flush = Effect.callback<void>((resume) => {
    Queue.offerUnsafe(queue, { kind: "flush", done: () => resume(Effect.void) })
  })

  // On shutdown, what is queued reaches the disk before the scope closes.
  yield* Effect.addFinalizer(() =>
    flush.pipe(
      Effect.timeoutOption(5_000),
      Effect.andThen(Queue.shutdown(queue)),
      Effect.andThen(Fiber.interrupt(writer))
    )
  )

  return AttemptLog.of({
    root,
    traceDir,
    record: (event) =>
      Effect.sync(() => {
        if (event.traceId) Queue.offerUnsafe(queue, { kind: "event", traceId: event.traceId, event })
      }),
    artifact: (traceId, name, data) =>
      Effect.sync(() => {
        Queue.offerUnsafe(queue, {
          kind: "artifact",
          traceId,
          name,
          data:
            data instanceof Uint8Array
              ? data
              : typeof data === "string"
                ? redactor.text(data)
                : JSON.stringify(redactor.value(data), null, 2)
        })
      }),
    flush,
    failures: Effect.sync(() => failed)
  })
})

export class AttemptLog extends Context.Service<
  AttemptLog,
  {
    readonly root: string
    /** Directory of a trace's log (it may not exist yet). */
    readonly traceDir: (traceId: string, ts?: string) => string
    /** Queues an event for its trace's log; events without a trace are ignored here. */
    readonly record: (event: Events.Stamped) => Effect.Effect<void>
    /** Queues an artifact for a trace, written under `artifacts/`: bytes as they are, text and JSON redacted. */
    readonly artifact: (traceId: string, name: string, data: Uint8Array | string | object) => Effect.Effect<void>
    /** Waits until everything queued so far is on disk (or has failed). */
    readonly flush: Effect.Effect<void>
    /** Writes that failed since start. */
    readonly failures: Effect.Effect<number>
  }
>()("switchyard/AttemptLog") {
  static readonly layer = (options: AttemptLogOptions = {}) => Layer.effect(AttemptLog, make(options))
}

/** The attempt log as the `Events` sink: every stamped event goes to its trace's files. */
export const layerEvents = Layer.effect(
  Events.Events,
  Effect.gen(function* () {
    const log = yield* AttemptLog
    return { emit: (event: Events.Stamped) => log.record(event) }
  })
)

/** The attempt log as the artifact sink, capturing what `options` asks for. */
export const layerArtifacts = (options: { readonly screenshots?: boolean; readonly snapshots?: boolean } = {}) =>
  Layer.effect(
    Artifacts.Artifacts,
    Effect.gen(function* () {
      const log = yield* AttemptLog
      return {
        screenshots: options.screenshots ?? true,
        snapshots: options.snapshots ?? true,
        write: (traceId: string, name: string, data: Uint8Array | object) => log.artifact(traceId, name, data)
      }
    })
  )
