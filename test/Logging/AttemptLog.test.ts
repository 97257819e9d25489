/**
 * The attempt log on a real file system: many traces at once, every line valid and whole, summary.json equal to a
 * fold of the lines, no canary secret anywhere under the root, and a broken disk that never breaks a call.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import * as AttemptLog from "../../src/Logging/AttemptLog.ts"
import * as Events from "../../src/Logging/Events.ts"
import * as Summary from "../../src/Logging/Summary.ts"

const canaries = {
  email: "canary.person@example-mail.test",
  card: "4111 1111 1111 1111",
  token: "Bearer abcdefghijklmnopqrstuvwxyz0123456789",
  key: "sk-canaryCANARYcanaryCANARY0123456789",
  ssn: "078-05-1120"
}

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((p) => join(dir, p))
    .filter((p) => statSync(p).isFile())

const logAt = (root: string, keptTraces?: number) =>
  Layer.build(AttemptLog.AttemptLog.layer({ root, ...(keptTraces === undefined ? {} : { keptTraces }) })).pipe(
    Effect.map((context) => Context.get(context, AttemptLog.AttemptLog))
  )

/** One call's worth of lifecycle events, with secrets where careless engines would put them. */
const callEvents = (traceId: string, n: number, fail: boolean) =>
  Effect.gen(function* () {
    const attemptId = `${traceId}#${n}.1`
    const base = { attemptId, provider: "playwright", engine: "playwright", level: 0, attempt: 1 } as const
    yield* Events.emit({ event: "start", ...base })
    if (fail) {
      yield* Events.emit({
        event: "failure",
        ...base,
        outcome: "failure",
        durationMs: 12,
        errorType: n % 2 ? "timeout" : "element_not_found",
        retryable: true,
        reason: `no button for ${canaries.email} at https://shop.test/pay?card=${encodeURIComponent(canaries.card)} (${canaries.token})`
      })
      yield* Events.emit({ event: "fallback", from: "playwright", to: "human", reason: `key ${canaries.key}` })
    } else {
      yield* Events.emit({ event: "success", ...base, outcome: "success", durationMs: 7 })
    }
  }).pipe(
    Effect.provideService(Events.CurrentCall, {
      traceId,
      attemptId: `${traceId}#${n}`,
      action: "browser.act",
      toolArgsHash: "0123456789abcdef",
      flags: Effect.succeed({ stagehandRetryUsed: n > 1, stagehandDisabled: false })
    })
  )

describe("AttemptLog", () => {
  // Live clock: events are stamped from the Clock, and the trace folders are named by the day they were written.
  it.live("many concurrent traces: whole valid lines, summaries that agree, no canary on disk", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(root, { recursive: true, force: true })))
      const log = yield* logAt(root)
      const sink = { emit: log.record }
      const traces = Array.from({ length: 24 }, (_, i) => `trace-${i}`)
      yield* Effect.forEach(
        traces,
        (traceId, i) =>
          Effect.forEach(
            Array.from({ length: 15 }, (_, n) => n + 1),
            (n) => callEvents(traceId, n, (n + i) % 3 === 0),
            {
              concurrency: 3
            }
          ),
        { concurrency: "unbounded" }
      ).pipe(Effect.provideService(Events.Events, sink))
      yield* log.artifact("trace-0", "trace-0#1.1.snapshot.json", { note: `typed ${canaries.ssn}` })
      yield* log.flush

      for (const traceId of traces) {
        const dir = log.traceDir(traceId)
        const lines = readFileSync(join(dir, "attempt.jsonl"), "utf8").trimEnd().split("\n")
        // Every line is an event of the shared union, as the readers decode it.
        const parsed = lines.map((line) => Schema.decodeUnknownSync(Events.Stamped)(JSON.parse(line)))
        assert.isTrue(parsed.every((l) => l.traceId === traceId))
        assert.strictEqual(parsed.filter((l) => l.event === "start").length, 15)
        const summary = Schema.decodeUnknownSync(Summary.Summary)(
          JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"))
        )
        const refolded = parsed.reduce(Summary.fold, Summary.empty(summary.traceId, summary.startedAt))
        assert.deepStrictEqual(summary.totals, refolded.totals)
        assert.deepStrictEqual(summary.providers, refolded.providers)
        assert.deepStrictEqual(summary.errorTypes, refolded.errorTypes)
        assert.strictEqual(summary.totals.attempts, summary.totals.successes + summary.totals.failures)
      }
      const everything = filesUnder(root)
        .map((f) => readFileSync(f, "utf8"))
        .join("\n")
      for (const [name, secret] of Object.entries(canaries)) {
        assert.notInclude(everything, secret, `${name} canary reached the disk`)
      }
      assert.include(everything, "toolArgsHash")
      assert.strictEqual(yield* log.failures, 0)
    })
  )

  it.live("a trace that goes on after the log forgot it keeps its summary whole", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(root, { recursive: true, force: true })))
      const log = yield* logAt(root, 1)
      const call = (traceId: string, n: number, fail: boolean) =>
        callEvents(traceId, n, fail).pipe(
          Effect.provideService(Events.Events, { emit: log.record }),
          Effect.andThen(log.flush)
        )
      yield* call("first", 1, true)
      yield* call("second", 1, false)
      yield* call("first", 2, false)
      const dir = log.traceDir("first")
      const lines = readFileSync(join(dir, "attempt.jsonl"), "utf8").trimEnd().split("\n")
      const parsed = lines.map((line) => Schema.decodeUnknownSync(Events.Stamped)(JSON.parse(line)))
      const summary = Schema.decodeUnknownSync(Summary.Summary)(
        JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"))
      )
      assert.deepStrictEqual(summary, parsed.reduce(Summary.fold, Summary.empty("first", parsed[0]!.ts)))
      assert.strictEqual(summary.totals.attempts, 2)
    })
  )

  it.effect("a log root that cannot be written is reported once and counted; events still flow", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      // A file where the root directory should be: every mkdir under it fails, even for root.
      const root = join(dir, "not-a-directory")
      writeFileSync(root, "")
      const log = yield* logAt(join(root, "logs"))
      const written: Array<string> = []
      const stderr = process.stderr.write.bind(process.stderr)
      process.stderr.write = ((chunk: string) => {
        written.push(String(chunk))
        return true
      }) as typeof process.stderr.write
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          process.stderr.write = stderr
        })
      )
      const outcome = yield* Effect.forEach([1, 2, 3], (n) => callEvents(`t${n}`, 1, false)).pipe(
        Effect.provideService(Events.Events, { emit: log.record }),
        Effect.as("calls finished")
      )
      yield* log.flush
      assert.strictEqual(outcome, "calls finished")
      assert.strictEqual(yield* log.failures, 3)
      assert.strictEqual(written.filter((w) => w.includes("cannot write logs")).length, 1)
    })
  )
})
