/**
 * Human takeover through the running service: the cascade's last level hands the page to a person over VNC, other
 * automation calls are masked meanwhile, and `browser.resume` (a tool, or the HTTP endpoint) gives it back.
 */
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { missingTools } from "../../src/Sandbox/Provider/Vnc/Tools.ts"
import { descendants } from "../Chaos/Descendants.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const missing = missingTools()
const skipReason = missing.length > 0 ? ` [skipped: needs ${missing.map((m) => m.tool).join(", ")}]` : ""

/** Playwright first, then the person. */
const policyFile = () => {
  const path = join(tmpdir(), `switchyard-human-policy-${process.pid}.json`)
  writeFileSync(
    path,
    JSON.stringify({
      default: {
        totalTimeoutMs: 120_000,
        levels: [
          { engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 10_000 },
          { engine: "human", retryCount: 0, timeoutPerAttemptMs: 90_000 }
        ]
      }
    })
  )
  return path
}

const errorType = (answer: Record<string, unknown>) =>
  (answer.error as { data?: { type: string } } | undefined)?.data?.type

describe("human takeover in the service", () => {
  it.live.skipIf(missing.length > 0)(
    `the cascade's last level waits for a person; calls meanwhile are masked; resume finishes it${skipReason}`,
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const service = startService({ SWITCHYARD_HUMAN: "on", SWITCHYARD_CASCADE: policyFile() })
        const url = site.url("/verify.html")
        const opened = yield* Effect.promise(() => service.call("browser.navigate", { url }))
        assert.isDefined(opened.result, JSON.stringify(opened))

        // Nothing on the page matches and the page asks for a human, so the person is asked.
        const waiting = service.call("browser.act", { instruction: 'click "Solve the puzzle"' })
        // The person has the browser once the state block masks automation (the human engine asked for help).
        const handedOver = yield* Effect.promise(async () => {
          const deadline = Date.now() + 100_000
          while (Date.now() < deadline) {
            const status = (await service.call("browser.status")).result as {
              state: { tools: { masked: Record<string, string> } }
            }
            if (/a person has the browser/.test(status.state.tools.masked["browser.extract"] ?? "")) return true
            await new Promise((r) => setTimeout(r, 100))
          }
          return false
        })
        assert.isTrue(handedOver, "the cascade reached the human level")
        const masked = yield* Effect.promise(() => service.call("browser.extract", { instruction: "anything" }))
        assert.strictEqual(errorType(masked), "human_in_control")
        assert.match((masked.error as { message: string }).message, /a person has the browser/)

        const resumed = yield* Effect.promise(() => service.call("browser.resume"))
        assert.deepStrictEqual((resumed.result as { result: object }).result, { resumed: true })
        const done = yield* Effect.promise(() => waiting)
        assert.isDefined(done.result, JSON.stringify(done))
        assert.strictEqual((done.result as { state: { engine: string } }).state.engine, "human")

        // Afterwards automation carries on with the page as the person left it.
        const after = yield* Effect.promise(() =>
          service.call("browser.act", { instruction: 'fill "Type the characters in the image" with "K7Q2X"' })
        )
        assert.isDefined(after.result, JSON.stringify(after))
        assert.strictEqual((after.result as { state: { engine: string } }).state.engine, "playwright")
      }),
    150_000
  )

  it.live.skipIf(missing.length > 0)(
    `browser.handoff gives the noVNC URL and masks automation until browser.resume${skipReason}`,
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const service = startService({ SWITCHYARD_HUMAN: "on" }, ["--jsonrpc"])
        yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/forms.html") }))
        const handed = yield* Effect.promise(() => service.call("browser.handoff", { reason: "a CAPTCHA" }))
        const result = (handed.result as { result: { url: string; link: string; session: string } }).result
        assert.match(result.url, /^http:\/\/127\.0\.0\.1:\d+\/$/)
        assert.match(result.link, /^http:\/\/127\.0\.0\.1:\d+\/#password=\w{8}$/)
        assert.strictEqual(result.session, "default")
        const masked = yield* Effect.promise(() => service.call("browser.act", { instruction: "press Enter" }))
        assert.strictEqual(errorType(masked), "human_in_control")
        const resumed = yield* Effect.promise(() => service.call("browser.resume"))
        assert.deepStrictEqual((resumed.result as { result: object }).result, { resumed: true })
        const again = yield* Effect.promise(() => service.call("browser.act", { instruction: "press Enter" }))
        assert.isDefined(again.result, JSON.stringify(again))
      })
  )

  it.live.skipIf(missing.length > 0)(
    `with takeover on, a wrong name answers the agent at once with the page's candidates; no person is asked${skipReason}`,
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const service = startService({ SWITCHYARD_HUMAN: "on", SWITCHYARD_CASCADE: policyFile() })
        yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/forms.html") }))
        for (const [instruction, suggested] of [
          ['click "Delete account"', undefined],
          ['fill "Middle name" with "X"', "Full name"]
        ] as const) {
          const answer = yield* Effect.promise(() => service.call("browser.act", { instruction }))
          const data = (answer.error as { data: { type: string; elements?: Array<{ ref: string; name: string }> } })
            .data
          assert.strictEqual(data.type, "element_not_found", JSON.stringify(answer))
          assert.isAbove(data.elements?.length ?? 0, 0, "the page's candidates, with references")
          if (suggested !== undefined) assert.include(data.elements?.map((e) => e.name) ?? [], suggested)
        }
        const status = (yield* Effect.promise(() => service.call("browser.status"))).result as {
          result: { takeover?: unknown; engine: string }
        }
        assert.isUndefined(status.result.takeover, "no person was asked")
        assert.notInclude(service.stderr(), "a person is needed")
      }),
    60_000
  )

  it.live.skipIf(missing.length > 0)(
    `a person who does not come: the answer is human_timeout with the failure that made the cascade ask${skipReason}`,
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        // The person has 6 s; the human level gives up 5 s before that.
        const service = startService({
          SWITCHYARD_HUMAN: "on",
          SWITCHYARD_HUMAN_TIMEOUT_MS: "6000",
          SWITCHYARD_CASCADE: policyFile()
        })
        yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/verify.html") }))
        const answer = yield* Effect.promise(() => service.call("browser.act", { instruction: 'click "Continue"' }))
        const data = (
          answer.error as {
            data: { type: string; retryable: boolean; causedBy?: { type: string; elements?: Array<unknown> } }
          }
        ).data
        assert.strictEqual(data.type, "human_timeout", JSON.stringify(answer))
        assert.isFalse(data.retryable)
        assert.strictEqual(data.causedBy?.type, "element_not_found")
        assert.isAbove(data.causedBy?.elements?.length ?? 0, 0, "the page's candidates come along")
        assert.match((answer.error as { message: string }).message, /The person was asked because element_not_found/)
        // The takeover ended with it: automation has the browser again.
        const after = yield* Effect.promise(() => service.call("browser.act", { instruction: 'click "Verify"' }))
        assert.isDefined(after.result, JSON.stringify(after))
      }),
    90_000
  )

  it.live.skipIf(missing.length > 0)(
    `with takeover on, no headless browser is started ahead: every session's browser is a headed one${skipReason}`,
    () =>
      Effect.gen(function* () {
        const service = startService({ SWITCHYARD_HUMAN: "on", SWITCHYARD_WARM_BROWSERS: "1" })
        // Answered once the service is built; it opens no session.
        const status = yield* Effect.promise(() => service.call("browser.status"))
        assert.isDefined(status.result, JSON.stringify(status))
        yield* Effect.sleep("1 second")
        assert.deepStrictEqual(
          descendants(service.child.pid!).filter((p) => /^(chrom|Xvfb)/.test(p.name)),
          [],
          "nothing started before a session needs it"
        )
      })
  )

  it.live("without human takeover set up, handoff and resume say how to enable it", () =>
    Effect.gen(function* () {
      const service = startService()
      const answer = yield* Effect.promise(() => service.call("browser.handoff", { reason: "login" }))
      assert.strictEqual(errorType(answer), "not_configured")
      assert.include((answer.error as { message: string }).message, "SWITCHYARD_HUMAN=on")
    })
  )
})
