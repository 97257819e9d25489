/**
 * Concurrent sessions on one service: 1, 2, 4 and 8 sessions each open their browser, run the sequence and close;
 * every level runs the same number of sequences per round, split among its sessions. Per level: throughput, time per operation, and how long sessions waited to open — past the
 * service's browser cap (SWITCHYARD_MAX_BROWSERS, 2 × cores by default) the queue holds a session's first call
 * until another session closes. Levels are interleaved over rounds. Then single sessions' whole lifecycle (first
 * navigate, close) with a warm browser ready, next to the published cloud figures.
 */
import { cpus } from "node:os"
import { Effect } from "effect"
import * as SiteServer from "../test/fixtures/SiteServer.ts"
import * as Sequence from "./Sequence.ts"
import * as Service from "./Service.ts"
import * as Stats from "./Stats.ts"

export const levels = [1, 2, 4, 8] as const

export interface LevelResult {
  readonly sessions: number
  /** All sequences of the level over its wall time, browser starts and queueing included. */
  readonly sequencesPerSecond: number
  readonly operationsPerSecond: number
  readonly perOperation: Record<Sequence.Operation, Stats.Summary>
  /** First call of each session: browser launch, plus any wait in the queue for a slot. */
  readonly open: Stats.Summary
  /** Sessions whose first call was answered only after another session had closed: held by the queue. */
  readonly queued: number
  readonly errors: Record<string, number>
}

/** A session's whole life on a service with a warm browser ready: what cloud browser APIs publish as their figure. */
export interface LifecycleResult {
  readonly runs: number
  /** The new session's first navigate answered: its browser taken from the pool, connected, the page loaded. */
  readonly firstNavigate: Stats.Summary
  /** Create + connect + goto + release: the first navigate, then browserClose answered. */
  readonly lifecycle: Stats.Summary
}

/** Published p50 figures for the same lifecycle on cloud browser APIs (as quoted by the project's performance issue). */
export const cloudFigures = "BaseLayer, Kernel: 224–365 ms p50 (create + connect + goto + release)"

export interface SessionsResult {
  readonly lifecycle: LifecycleResult
  readonly rounds: number
  /** Sequences per level and round, split evenly among its sessions. */
  readonly sequencesPerLevel: number
  readonly maxBrowsers: number
  readonly levels: ReadonlyArray<LevelResult>
}

interface Samples {
  wallMs: number
  sequences: number
  readonly ops: Array<Sequence.Timed>
  readonly open: Array<number>
  queued: number
}

export const run = (options: {
  readonly rounds: number
  readonly sequencesPerLevel: number
  readonly lifecycles: number
}) =>
  Effect.gen(function* () {
    const site = yield* SiteServer.start
    const url = site.url("/forms.html")
    // Session open is measured with one browser started ahead, as shipped.
    const service = yield* Service.start({ SWITCHYARD_WARM_BROWSERS: "1" })
    const samples = new Map<number, Samples>(
      levels.map((n) => [n, { wallMs: 0, sequences: 0, ops: [], open: [], queued: 0 }])
    )
    for (let round = 0; round < options.rounds; round++) {
      for (const n of levels.map((_, k) => levels[(round + k) % levels.length]!)) {
        const entry = samples.get(n)!
        const perSession = Math.max(1, Math.round(options.sequencesPerLevel / n))
        const opens: Array<number> = []
        const openedAt: Array<number> = []
        const closedAt: Array<number> = []
        const work = async (session: string) => {
          const t = performance.now()
          await Service.call(service, "browser.navigate", { url, session })
          opens.push(performance.now() - t)
          openedAt.push(performance.now())
          for (let s = 0; s < perSession; s++) {
            entry.ops.push(...(await Sequence.run(service, url, { session, traceId: `${session}-${s}` })))
          }
          await Service.call(service, "browserClose", { session })
          closedAt.push(performance.now())
        }
        const started = performance.now()
        yield* Effect.promise(() => Promise.all(Array.from({ length: n }, (_, i) => work(`bench-${n}-${round}-${i}`))))
        entry.wallMs += performance.now() - started
        entry.sequences += n * perSession
        entry.open.push(...opens)
        entry.queued += openedAt.filter((t) => t > Math.min(...closedAt)).length
      }
    }
    // One session at a time, each after the pool had time to start its next browser (as between an agent's tasks).
    const first: Array<number> = []
    const whole: Array<number> = []
    for (let i = 0; i < options.lifecycles; i++) {
      yield* Effect.sleep("2500 millis")
      const session = `bench-life-${i}`
      const t = performance.now()
      yield* Effect.promise(() => Service.call(service, "browser.navigate", { url, session }))
      first.push(performance.now() - t)
      yield* Effect.promise(() => Service.call(service, "browserClose", { session }))
      whole.push(performance.now() - t)
    }
    return {
      lifecycle: { runs: options.lifecycles, firstNavigate: Stats.summarize(first), lifecycle: Stats.summarize(whole) },
      rounds: options.rounds,
      sequencesPerLevel: options.sequencesPerLevel,
      maxBrowsers: Number(process.env.SWITCHYARD_MAX_BROWSERS) || Math.max(2, Math.min(16, cpus().length * 2)),
      levels: levels.map((n): LevelResult => {
        const entry = samples.get(n)!
        const perSecond = entry.sequences / (entry.wallMs / 1000)
        const errors: Record<string, number> = {}
        for (const op of entry.ops) if (op.outcome !== "ok") errors[op.outcome] = (errors[op.outcome] ?? 0) + 1
        return {
          sessions: n,
          sequencesPerSecond: Math.round(perSecond * 100) / 100,
          operationsPerSecond: Math.round(perSecond * Sequence.operations.length * 100) / 100,
          perOperation: Object.fromEntries(
            Sequence.operations.map((op) => [
              op,
              Stats.summarize(entry.ops.filter((o) => o.op === op).map((o) => o.ms))
            ])
          ) as Record<Sequence.Operation, Stats.Summary>,
          open: Stats.summarize(entry.open),
          queued: entry.queued,
          errors
        }
      })
    } satisfies SessionsResult
  }).pipe(Effect.scoped)
