/**
 * What a production service must survive: malformed and hostile input on both surfaces, URLs outside the policy,
 * oversized arguments, a storm of calls on one session, more sessions than browsers (idle ones hibernate) — each
 * answered with a clear error while the service keeps serving — plus configuration errors that name the bad key.
 */
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Config from "../../src/Server/Config.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { slowSite } from "../fixtures/SlowSite.ts"
import { randomLines } from "../support/Garbage.ts"
import { type Service, startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const errorOf = (answer: Record<string, unknown>) =>
  answer.error as { code: number; message: string; data?: { type: string; retryable: boolean } }

const stillServing = (service: Service) =>
  Effect.promise(async () => {
    const status = await service.call("browserStatus")
    assert.property(status.result as object, "active", JSON.stringify(status))
  })

describe("bad input over JSON-RPC", () => {
  it.live("URLs outside the policy are refused, the service keeps serving", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const service = startService({ SWITCHYARD_PRIVATE_NETWORKS: "off" })
      for (const url of [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,<h1>x</h1>",
        "chrome://settings"
      ]) {
        const answer = yield* Effect.promise(() => service.call("browser.navigate", { url }))
        const error = errorOf(answer)
        assert.strictEqual(error.data?.type, "rejected_by_policy", url)
        assert.include(error.message, "not allowed")
      }
      const local = errorOf(
        yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/plain.html") }))
      )
      assert.strictEqual(local.data?.type, "rejected_by_policy")
      assert.include(local.message, "rule class:loopback")
      const notUrl = errorOf(yield* Effect.promise(() => service.call("browser.navigate", { url: "example.com" })))
      assert.strictEqual(notUrl.data?.type, "invalid_input")
      yield* stillServing(service)
    })
  )

  it.live("oversized arguments get invalid params naming the limit", () =>
    Effect.gen(function* () {
      const service = startService({ SWITCHYARD_MAX_ARGUMENT_BYTES: "4096" })
      const answer = yield* Effect.promise(() => service.call("browser.act", { instruction: "x".repeat(10_000) }))
      const error = errorOf(answer)
      assert.strictEqual(error.code, -32602)
      assert.include(error.message, "the limit is 4096")
      yield* stillServing(service)
    })
  )

  it.live("arguments nested thousands deep get invalid params, not a failure of the service", () =>
    Effect.gen(function* () {
      const service = startService()
      const deep = `${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`
      for (const [id, args] of [
        ["deep-member", `{"url":"about:blank","x":${deep}}`],
        ["deep-arguments", deep]
      ] as const) {
        const answer = yield* Effect.promise(() =>
          service.send(`{"jsonrpc":"2.0","id":"${id}","method":"browser.navigate","params":${args}}`, id)
        )
        const error = errorOf(answer)
        assert.strictEqual(error.code, -32602, JSON.stringify(answer).slice(0, 400))
        assert.strictEqual(error.data?.type, "invalid_input")
        assert.include(error.message, "nested")
      }
      assert.strictEqual(service.extra(), 0, "no call was answered twice")
      yield* stillServing(service)
    })
  )

  it.live("a storm of calls on one session: each answered once, the excess with a typed busy", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const service = startService({ SWITCHYARD_MAX_PENDING_PER_SESSION: "4" })
      const calls = Array.from({ length: 30 }, () => service.call("browser.navigate", { url: site.url("/plain.html") }))
      const answers = yield* Effect.promise(() => Promise.all(calls))
      const busy = answers.filter((a) => errorOf(a)?.data?.type === "busy")
      const served = answers.filter((a) => a.result !== undefined)
      assert.strictEqual(
        busy.length + served.length,
        30,
        JSON.stringify(answers.find((a) => !a.result && errorOf(a)?.data?.type !== "busy"))
      )
      assert.isAbove(busy.length, 0)
      assert.isAtLeast(served.length, 4)
      assert.isTrue(busy.every((a) => errorOf(a).data?.retryable === true))
      assert.strictEqual(service.extra(), 0, "no call was answered twice")
      yield* stillServing(service)
    })
  )

  it.live("more sessions than browsers: an idle one hibernates for a new one; busy only while every one works", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const slow = yield* slowSite(4_000)
      const service = startService({ SWITCHYARD_MAX_BROWSERS: "1", SWITCHYARD_QUEUE: "0" })
      const url = site.url("/plain.html")
      const first = yield* Effect.promise(() => service.call("browser.navigate", { url, session: "worker-1" }))
      assert.isDefined(first.result, JSON.stringify(first))
      // worker-1 is idle: worker-2 takes its browser, worker-1's page is kept for its next call.
      const second = yield* Effect.promise(() => service.call("browser.navigate", { url, session: "worker-2" }))
      assert.isDefined(second.result, JSON.stringify(second))
      // worker-2 is working (a page that answers slowly): a third session finds no browser to take.
      const working = service.call("browser.navigate", { url: slow.url, session: "worker-2" })
      yield* Effect.sleep("1 second")
      const third = errorOf(yield* Effect.promise(() => service.call("browser.navigate", { url, session: "worker-3" })))
      assert.strictEqual(third.data?.type, "busy")
      assert.include(third.message, "limit is 1")
      assert.isDefined((yield* Effect.promise(() => working)).result)
      // worker-1 comes back at its page.
      const back = yield* Effect.promise(() => service.call("browser.extract", { session: "worker-1" }))
      assert.include(JSON.stringify(back.result), "/plain.html")
      const badName = errorOf(yield* Effect.promise(() => service.call("browser.status", { session: "../etc" })))
      assert.strictEqual(badName.data?.type, "invalid_input")
    })
  )

  it.live("random bytes and random JSON never stop the service; each line gets one clear answer", () =>
    Effect.gen(function* () {
      const service = startService()
      const lines = randomLines(120)
      const answers = yield* Effect.promise(() => Promise.all(lines.map((line, i) => service.send(line, `line-${i}`))))
      // A JSON array is a batch (spec §6): its answer is an array of one answer per member.
      for (const answer of answers.flatMap((a): Array<Record<string, unknown>> => (Array.isArray(a) ? a : [a]))) {
        const error = answer.error as { code: number; message: string } | undefined
        assert.isTrue(
          answer.result !== undefined || (typeof error?.code === "number" && error.message.length > 0),
          JSON.stringify(answer)
        )
      }
      yield* stillServing(service)
      assert.strictEqual(service.extra(), 0)
    })
  )
})

describe("configuration", () => {
  it.effect("a config file with an unknown or mistyped key is refused, naming it", () =>
    Effect.gen(function* () {
      const path = join(tmpdir(), `switchyard-config-${process.pid}.json`)
      writeFileSync(path, JSON.stringify({ sessions: { maxBrowsers: "four" }, browsr: {} }))
      const error = yield* Effect.flip(Config.resolve({ file: path, env: {} }))
      assert.include(error.message, path)
      assert.match(error.message, /maxBrowsers|browsr/)
      const fromEnv = yield* Effect.flip(Config.resolve({ env: { SWITCHYARD_MAX_BROWSERS: "many" } }))
      assert.include(fromEnv.message, "SWITCHYARD_MAX_BROWSERS")
    })
  )

  it.effect("flags beat the environment, which beats the file", () =>
    Effect.gen(function* () {
      const path = join(tmpdir(), `switchyard-config-ok-${process.pid}.json`)
      writeFileSync(path, JSON.stringify({ logDir: "/from-file", sessions: { maxBrowsers: 2, queue: 3 } }))
      const config = yield* Config.resolve({
        file: path,
        env: { SWITCHYARD_LOG_DIR: "/from-env", SWITCHYARD_MAX_BROWSERS: "5" },
        flags: { sessions: { maxBrowsers: 7 } }
      })
      assert.strictEqual(config.logDir, "/from-env")
      assert.deepInclude(config.sessions, { maxBrowsers: 7, queue: 3 })
    })
  )
})
