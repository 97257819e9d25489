/**
 * The mark a submit writes before its click: stored durably, stamped with the Clock's time (a TestClock here), so a
 * run's events are ordered by the clock every other event of the run reads.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as Submit from "../../src/Apply/Submit.ts"
import { TaskEvents } from "../../src/Cluster/Events.ts"

describe("Submit.mark", () => {
  it.effect("stamps the mark with the Clock's time", () =>
    Effect.gen(function* () {
      const appended: Array<{ readonly eventType: string; readonly data: Record<string, unknown> }> = []
      const context = yield* Layer.build(
        Layer.mock(TaskEvents)({
          append: (_run, eventType, data) => Effect.sync(() => appended.push({ eventType, data }))
        })
      )
      const events = Context.get(context, TaskEvents)
      yield* TestClock.setTime(Date.UTC(2024, 0, 2, 3, 4, 5))
      const id = yield* Submit.mark(events, "application-1", {
        run: "run-1",
        attempt: 1,
        step: "submit",
        url: "http://127.0.0.1:1/apply"
      })
      assert.strictEqual(appended.length, 1)
      assert.strictEqual(appended[0]!.data.id, id)
      assert.strictEqual(appended[0]!.data.at, "2024-01-02T03:04:05.000Z")
    })
  )
})
