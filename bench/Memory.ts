/**
 * Memory: the real service process's resident set (VmRSS in /proc/<pid>/status) while one session runs thousands
 * of tool calls over JSON-RPC — a mix of navigate, act (Actions and a grammar instruction), extract, observe and
 * screenshot, a new traceId every ten calls — sampled at checkpoints. Growth is measured from call 100 to the end.
 * A second, shorter run tells garbage from a leak: at each checkpoint it forces a full GC in the service through
 * the Node inspector and reads the live heap.
 */
import { Effect } from "effect"
import * as CdpConnection from "../src/Cdp/Connection.ts"
import * as SiteServer from "../test/fixtures/SiteServer.ts"
import { emailAction } from "./Sequence.ts"
import * as Service from "./Service.ts"

export interface AfterGc {
  /** RSS as found, before the forced GC. */
  readonly rssMiB: number
  readonly heapUsedMiB: number
  readonly rssAfterGcMiB: number
}

export interface MemoryResult {
  readonly operations: number
  readonly screenshotsPerAttempt: boolean
  /** RSS in MiB after that many calls. */
  readonly rss: Record<string, number>
  /** (RSS at the end − RSS after 100 calls) / RSS after 100 calls. */
  readonly growth: number
  readonly msPerOperation: number
  readonly errors: Record<string, number>
  /** The second run: live heap and RSS after a forced full GC, by calls done. */
  readonly afterGc: Record<string, AfterGc>
}

/** Ten calls on one trace: mostly the cheap calls an agent makes between page loads, each kind at least once. */
const cycle = (url: string): ReadonlyArray<readonly [string, Record<string, unknown>]> => [
  ["browser.navigate", { url }],
  ["browser.act", { action: emailAction }],
  ["browser.extract", { instruction: "the form" }],
  ["browser.act", { instruction: 'fill "Full name" with "Grace Hopper"' }],
  ["browser.extract", { instruction: "the form" }],
  ["browser.observe", { instruction: "the submit button" }],
  ["browser.extract", { instruction: "the form" }],
  [
    "browser.act",
    { action: { selector: "xpath=//*[@id='submit']", method: "click", arguments: [], description: "Submit" } }
  ],
  ["browser.screenshot", {}],
  ["browser.extract", { instruction: "the status line" }]
]

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10
const round = (n: number) => Math.round(n * 10) / 10

/** Drives one session through `operations` calls; `at` runs after each checkpoint's call. */
const drive = (
  service: Service.Service,
  site: SiteServer.SiteServer,
  operations: number,
  checkpoints: ReadonlyArray<number>,
  at: (done: number) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const errors: Record<string, number> = {}
    let done = 0
    for (let trace = 0; done < operations; trace++) {
      for (const [method, params] of cycle(site.url(`/forms.html?visit=${trace}`))) {
        if (done >= operations) break
        const answer = yield* Effect.promise(() => service.call(method, { ...params, traceId: `memory-${trace}` }))
        if (answer.result === undefined) {
          const type = (answer.error as { data?: { type?: string } })?.data?.type ?? "error"
          errors[type] = (errors[type] ?? 0) + 1
        }
        done++
        if (checkpoints.includes(done)) yield* at(done)
      }
    }
    return errors
  })

/** A full GC in the service through its inspector, then the live heap. */
const collect = (inspector: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const cdp = yield* CdpConnection.connect(inspector)
      yield* cdp.send("HeapProfiler.collectGarbage")
      return yield* cdp.send("Runtime.getHeapUsage")
    })
  )

export const run = (options: {
  readonly operations: number
  readonly checkpoints: ReadonlyArray<number>
  readonly screenshots: boolean
  /** Calls and checkpoints of the second run, with forced GCs. */
  readonly gcRun: { readonly operations: number; readonly checkpoints: ReadonlyArray<number> }
  readonly onProgress?: (line: string) => void
}) =>
  Effect.gen(function* () {
    const site = yield* SiteServer.start
    const env = options.screenshots ? {} : { SWITCHYARD_SCREENSHOTS: "off" }
    const rss: Record<string, number> = {}
    const started = performance.now()
    const errors = yield* Effect.scoped(
      Effect.gen(function* () {
        const service = yield* Service.start(env)
        return yield* drive(service, site, options.operations, options.checkpoints, (done) =>
          Effect.sync(() => {
            rss[String(done)] = round(Service.rssMiB(service.child.pid!))
            options.onProgress?.(`${done} calls: service RSS ${rss[String(done)]} MiB`)
          })
        )
      })
    )
    const msPerOperation = round((performance.now() - started) / options.operations)

    const afterGc: Record<string, AfterGc> = {}
    yield* Effect.scoped(
      Effect.gen(function* () {
        const service = yield* Service.start({ ...env, NODE_OPTIONS: "--inspect=127.0.0.1:0" })
        const inspector = yield* Effect.promise(() => service.stderrLine(/Debugger listening on (ws:\/\/\S+)/))
        yield* drive(service, site, options.gcRun.operations, options.gcRun.checkpoints, (done) =>
          Effect.gen(function* () {
            const before = Service.rssMiB(service.child.pid!)
            const heap = yield* collect(inspector).pipe(Effect.orDie)
            const entry = {
              rssMiB: round(before),
              heapUsedMiB: mib(heap.usedSize),
              rssAfterGcMiB: round(Service.rssMiB(service.child.pid!))
            }
            afterGc[String(done)] = entry
            options.onProgress?.(
              `${done} calls (GC run): RSS ${entry.rssMiB} MiB, after a full GC: heap ${entry.heapUsedMiB} MiB, RSS ${entry.rssAfterGcMiB} MiB`
            )
          })
        )
      })
    )

    const first = rss["100"] ?? Number.NaN
    const last = rss[String(options.operations)] ?? Number.NaN
    return {
      operations: options.operations,
      screenshotsPerAttempt: options.screenshots,
      rss,
      growth: Math.round(((last - first) / first) * 1000) / 1000,
      msPerOperation,
      errors,
      afterGc
    } satisfies MemoryResult
  }).pipe(Effect.scoped)
