/**
 * The Sessions through the real service on JSON-RPC: pipelined calls on one session take effect in arrival order,
 * and status or close of a session never opened answer at once without taking a browser slot.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const stateOf = (answer: Record<string, unknown>) =>
  ((answer.result ?? (answer.error as { data?: unknown } | undefined)?.data) as { state?: { url: string | null } })
    ?.state

describe("sessions over JSON-RPC", () => {
  it.live(
    "pipelined navigate A, fill, extract, navigate B on one session run in that order",
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const service = startService()
        const email = "order.check@example.test"
        // Written at once, without waiting for answers: the service sees them in this order.
        const answers = yield* Effect.promise(() =>
          Promise.all([
            service.call("browser.navigate", { url: site.url("/forms.html"), session: "w1" }),
            service.call("browser.act", { instruction: `fill "Email" with "${email}"`, session: "w1" }),
            service.call("browser.extract", { instruction: "the form fields", session: "w1" }),
            service.call("browser.navigate", { url: site.url("/plain.html"), session: "w1" })
          ])
        )
        const [, filled, extracted, second] = answers
        assert.isDefined(filled?.result, JSON.stringify(filled))
        assert.include(String(stateOf(filled ?? {})?.url), "/forms.html", JSON.stringify(filled))
        assert.include(JSON.stringify(extracted?.result), email, JSON.stringify(extracted))
        assert.include(String(stateOf(second ?? {})?.url), "/plain.html", JSON.stringify(second))
      }),
    120_000
  )

  it.live(
    "status and close of a session never opened answer at once; a name that is not a string is invalid",
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const service = startService({ SWITCHYARD_MAX_BROWSERS: "1" })
        const first = yield* Effect.promise(() =>
          service.call("browser.navigate", { url: site.url("/plain.html"), session: "w1" })
        )
        assert.isDefined(first.result, JSON.stringify(first))
        const started = Date.now()
        const status = yield* Effect.promise(() => service.call("browser.status", { session: "ghost" }))
        assert.deepInclude((status.result as { result: object }).result, { active: false }, JSON.stringify(status))
        const closed = yield* Effect.promise(() => service.call("browser.close", { session: "ghost" }))
        assert.deepInclude((closed.result as { result: object }).result, { status: "ok" }, JSON.stringify(closed))
        assert.isBelow(Date.now() - started, 5_000)
        const coerced = yield* Effect.promise(() => service.call("browser.status", { session: true }))
        assert.strictEqual(
          (coerced.error as { data?: { type: string } }).data?.type,
          "invalid_input",
          JSON.stringify(coerced)
        )
        // Closing w1 frees the one slot at once: another session opens without waiting for it.
        yield* Effect.promise(() => service.call("browser.close", { session: "w1" }))
        const other = yield* Effect.promise(() =>
          service.call("browser.navigate", { url: site.url("/plain.html"), session: "w2" })
        )
        assert.isDefined(other.result, JSON.stringify(other))
      }),
    120_000
  )
})
