/**
 * Crash recovery: SIGKILL of the session's Chromium, then the next call (`browser.extract`, which reads the page)
 * timed from the kill to its answer: the service sees the browser gone, relaunches it (the default configuration's
 * warm browser: crashes are seconds apart, so each finds the spare the pool started after the one before), restores
 * the URL and connects the engine. Interleaved with the same call on a healthy browser as the baseline; the
 * service's own log splits each recovery into its phases. A second service without a warm browser
 * (SWITCHYARD_WARM_BROWSERS=0), crashed in the same rounds, shows what the warm browser buys.
 */
import { Effect } from "effect"
import * as SiteServer from "../test/fixtures/SiteServer.ts"
import * as Service from "./Service.ts"
import * as Stats from "./Stats.ts"

export interface CrashResult {
  readonly runs: number
  readonly recovery: Stats.Summary
  readonly healthy: Stats.Summary
  /** The same recovery on a service without a warm browser: Chromium is started for the relaunch. */
  readonly withoutWarm?: Stats.Summary
  /** Recoveries that answered on the page the agent was on. */
  readonly restored: number
  /** From the system log: kill → "browser is not responding" → "browser relaunched" (URL restored; the engine
   * connects meanwhile) → answer. */
  readonly phases: {
    readonly detect: Stats.Summary
    readonly relaunchAndRestore: Stats.Summary
    readonly connectAndCall: Stats.Summary
  }
}

const messageOf = (line: { message: unknown }) =>
  Array.isArray(line.message) ? String(line.message[0]) : String(line.message)

export const run = (options: { readonly runs: number }) =>
  Effect.gen(function* () {
    const site = yield* SiteServer.start
    const url = site.url("/forms.html")
    const service = yield* Service.start()
    const cold = yield* Service.start({ SWITCHYARD_WARM_BROWSERS: "0" })
    yield* Effect.promise(() => Service.call(service, "browser.navigate", { url }))
    yield* Effect.promise(() => Service.call(cold, "browser.navigate", { url }))
    const extract = () => Service.call(service, "browser.extract", { instruction: "the form" })
    const samples = {
      recovery: [] as Array<number>,
      healthy: [] as Array<number>,
      withoutWarm: [] as Array<number>
    }
    const wall: Array<{ killed: number; answered: number }> = []
    let restored = 0
    for (let i = 0; i < options.runs; i++) {
      // The pool's spare, started after the previous recovery took one, is ready.
      yield* Effect.sleep("2500 millis")
      samples.healthy.push((yield* Effect.promise(() => Stats.time(extract))).ms)
      const { pid } = yield* Effect.promise(() => Service.browserOf(service))
      const killed = Date.now()
      const started = performance.now()
      process.kill(pid, "SIGKILL")
      const answer = yield* Effect.promise(extract)
      samples.recovery.push(performance.now() - started)
      wall.push({ killed, answered: Date.now() })
      if ((answer.state as { url?: string }).url === url) restored++
      const after = yield* Effect.promise(() => Service.browserOf(service))
      if (after.pid === pid) return yield* Effect.die(new Error("the browser was not relaunched"))
      // The same on the service without a warm browser.
      const dead = (yield* Effect.promise(() => Service.browserOf(cold))).pid
      const coldStarted = performance.now()
      process.kill(dead, "SIGKILL")
      yield* Effect.promise(() => Service.call(cold, "browser.extract", { instruction: "the form" }))
      samples.withoutWarm.push(performance.now() - coldStarted)
    }
    // The log is written as the service goes: give the last lines a moment.
    yield* Effect.sleep("200 millis")
    const lines = Service.systemLog(service).map((l) => ({ at: Date.parse(l.ts), message: messageOf(l) }))
    const phases = {
      detect: [] as Array<number>,
      relaunchAndRestore: [] as Array<number>,
      connectAndCall: [] as Array<number>
    }
    for (const { killed, answered } of wall) {
      const gone = lines.find((l) => l.at >= killed && l.message === "browser is not responding")
      const back = gone && lines.find((l) => l.at >= gone.at && l.message === "browser relaunched")
      if (gone === undefined || back === undefined) continue
      phases.detect.push(gone.at - killed)
      phases.relaunchAndRestore.push(back.at - gone.at)
      phases.connectAndCall.push(answered - back.at)
    }
    return {
      runs: options.runs,
      recovery: Stats.summarize(samples.recovery),
      healthy: Stats.summarize(samples.healthy),
      withoutWarm: Stats.summarize(samples.withoutWarm),
      restored,
      phases: {
        detect: Stats.summarize(phases.detect),
        relaunchAndRestore: Stats.summarize(phases.relaunchAndRestore),
        connectAndCall: Stats.summarize(phases.connectAndCall)
      }
    } satisfies CrashResult
  }).pipe(Effect.scoped)
