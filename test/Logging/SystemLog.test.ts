import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Layer } from "effect"
import { Timeout } from "../../src/Errors/Engine.ts"
import * as SystemLog from "../../src/Logging/SystemLog.ts"

const captureStderr = () => {
  const written: Array<string> = []
  const original = process.stderr.write.bind(process.stderr)
  process.stderr.write = ((chunk: string) => {
    written.push(String(chunk))
    return true
  }) as typeof process.stderr.write
  return { written, restore: () => void Object.assign(process.stderr, { write: original }) }
}

describe("SystemLog", () => {
  it.effect(
    "info lines (the stagehand_fallback payloads) go to system/DAY.log as JSON; stderr gets failures only",
    () =>
      Effect.gen(function* () {
        const root = mkdtempSync(join(tmpdir(), "switchyard-syslog-"))
        const stderr = captureStderr()
        yield* Effect.gen(function* () {
          yield* Effect.logInfo(
            JSON.stringify({
              event: "stagehand_fallback",
              action: "browser.act",
              attempt: 1,
              reason: "no element",
              fallback: "retry"
            })
          )
          yield* Effect.logDebug("too detailed for the system log")
          yield* Effect.logWarning("browser.act failed for jane.doe@example.test")
        }).pipe(Effect.provide(Layer.fresh(SystemLog.layer({ root }))))
        stderr.restore()
        const [file] = readdirSync(join(root, "system"))
        assert.match(file!, /^\d{4}-\d{2}-\d{2}\.log$/)
        const lines = readFileSync(join(root, "system", file!), "utf8")
          .trimEnd()
          .split("\n")
          .map((l) => JSON.parse(l))
        assert.deepStrictEqual(lines[0].message, {
          event: "stagehand_fallback",
          action: "browser.act",
          attempt: 1,
          reason: "no element",
          fallback: "retry"
        })
        assert.strictEqual(lines[0].level, "info")
        assert.lengthOf(lines, 2, "debug lines are not kept")
        assert.notInclude(JSON.stringify(lines), "jane.doe@example.test")
        assert.deepStrictEqual(stderr.written.length, 1)
        assert.include(stderr.written[0], "warn")
        assert.notInclude(stderr.written[0], "jane.doe@example.test")
        rmSync(root, { recursive: true, force: true })
      })
  )

  it.effect("a Switchyard error is logged without the library failure it wraps (its cause)", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "switchyard-syslog-"))
      const stderr = captureStderr()
      const error = new Timeout({
        engine: "playwright",
        action: "click",
        timeoutMs: 5,
        message: "click timed out",
        cause: new Error("library internals: wrapped-failure-text")
      })
      yield* Effect.gen(function* () {
        yield* Effect.logError("an attempt failed", error)
        yield* Effect.logError(Cause.fail(error))
        yield* Effect.logError("a defect", Cause.die(error))
      }).pipe(Effect.provide(Layer.fresh(SystemLog.layer({ root }))))
      stderr.restore()
      const [file] = readdirSync(join(root, "system"))
      const text = readFileSync(join(root, "system", file!), "utf8")
      const lines = text
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l))
      assert.lengthOf(lines, 3)
      assert.include(text, "click timed out")
      assert.include(lines[1].cause, "Timeout: click timed out")
      assert.notInclude(text, "wrapped-failure-text")
      assert.notInclude(stderr.written.join(""), "wrapped-failure-text")
      assert.strictEqual(SystemLog.prettyCause(Cause.fail(error)).includes("wrapped-failure-text"), false)
      assert.include(Cause.pretty(Cause.fail(error)), "wrapped-failure-text", "the cause is there to strip")
      rmSync(root, { recursive: true, force: true })
    })
  )
})
