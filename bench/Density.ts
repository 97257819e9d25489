/**
 * Density: how many sessions one service holds within a memory budget. Levels of N sessions are opened on one service
 * (JSON-RPC, default configuration with the browser cap raised to the largest level): the memory of the service and
 * every process it started (USS and PSS from smaps_rollup: USS counts only the pages these processes alone hold, PSS
 * also splits shared ones — and moves with other Chromiums on the machine; RSS beside them) is read with the sessions idle on a loaded form page, then at its peak while all of them run the bench sequence at
 * once. Per session = (level − the service alone) / N, the service's own share apart; the budget is counted in PSS.
 */
import { Effect } from "effect"
import * as SiteServer from "../test/fixtures/SiteServer.ts"
import * as ProcessTree from "./ProcessTree.ts"
import * as Sequence from "./Sequence.ts"
import * as Service from "./Service.ts"

export interface Sample {
  /** The whole tree: the service and its browsers. */
  readonly ussMiB: number
  readonly pssMiB: number
  readonly rssMiB: number
  /** The service process alone. */
  readonly serviceUssMiB: number
  readonly processes: number
}

export interface LevelResult {
  readonly sessions: number
  readonly idle: Sample
  /** The largest USS seen while every session ran the sequence (sampled every 200 ms). */
  readonly working: Sample
  /** (level − the service alone) / sessions, MiB. */
  readonly perIdleSession: { readonly uss: number; readonly pss: number; readonly rss: number }
  readonly perWorkingSession: { readonly uss: number; readonly pss: number; readonly rss: number }
  /** The service's own share of a session (its USS growth / sessions). */
  readonly servicePerSessionMiB: number
}

export interface DensityResult {
  readonly alone: Sample
  readonly levels: ReadonlyArray<LevelResult>
  readonly budgetGiB: number
  /** Sessions at work within the budget at the largest level's per-session figure, and the configured cap. */
  readonly sessionsInBudget: number
  readonly maxBrowsers: number
}

const round = (n: number) => Math.round(n * 10) / 10

const sample = (pid: number): Sample => {
  const all = ProcessTree.tree(pid)
  const whole = ProcessTree.memoryMiB(all)
  return {
    ussMiB: whole.uss,
    pssMiB: whole.pss,
    rssMiB: whole.rss,
    serviceUssMiB: ProcessTree.memoryMiB([pid]).uss,
    processes: whole.processes
  }
}

export const run = (options: { readonly levels: ReadonlyArray<number>; readonly sequences: number }) =>
  Effect.gen(function* () {
    const site = yield* SiteServer.start
    const url = site.url("/forms.html")
    const maxBrowsers = Math.max(...options.levels)
    const service = yield* Service.start({ SWITCHYARD_MAX_BROWSERS: String(maxBrowsers) })
    const pid = service.child.pid!
    yield* Effect.promise(() => Service.call(service, "browser.status"))
    yield* Effect.sleep("1 second")
    const alone = sample(pid)
    const levels: Array<LevelResult> = []
    for (const n of options.levels) {
      const sessions = Array.from({ length: n }, (_, i) => `density-${n}-${i}`)
      yield* Effect.promise(async () => {
        for (const session of sessions) await Service.call(service, "browser.navigate", { url, session })
      })
      yield* Effect.sleep("2 seconds")
      const idle = sample(pid)
      let working = idle
      let busy = true
      const sampler = Effect.promise(async () => {
        while (busy) {
          const s = sample(pid)
          if (s.ussMiB > working.ussMiB) working = s
          await new Promise((resolve) => setTimeout(resolve, 200))
        }
      })
      const work = Effect.promise(() =>
        Promise.all(
          sessions.map(async (session) => {
            for (let s = 0; s < options.sequences; s++) await Sequence.run(service, url, { session })
          })
        )
      ).pipe(Effect.ensuring(Effect.sync(() => (busy = false))))
      yield* Effect.all([work, sampler], { concurrency: 2 })
      const per = (s: Sample) => ({
        uss: round((s.ussMiB - alone.ussMiB) / n),
        pss: round((s.pssMiB - alone.pssMiB) / n),
        rss: round((s.rssMiB - alone.rssMiB) / n)
      })
      levels.push({
        sessions: n,
        idle,
        working,
        perIdleSession: per(idle),
        perWorkingSession: per(working),
        servicePerSessionMiB: round((idle.serviceUssMiB - alone.serviceUssMiB) / n)
      })
      yield* Effect.promise(async () => {
        for (const session of sessions) await Service.call(service, "browserClose", { session })
      })
      yield* Effect.sleep("1 second")
    }
    const budgetGiB = 24
    const largest = levels[levels.length - 1]!
    return {
      alone,
      levels,
      budgetGiB,
      sessionsInBudget: Math.floor((budgetGiB * 1024 - alone.pssMiB) / largest.perWorkingSession.pss),
      maxBrowsers
    } satisfies DensityResult
  }).pipe(Effect.scoped)
