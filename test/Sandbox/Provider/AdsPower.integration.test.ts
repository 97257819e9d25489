import { assert, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as CdpHttp from "../../../src/Cdp/Http.ts"
import type { ProviderError } from "../../../src/Errors/Browser.ts"
import * as AdsPower from "../../../src/Sandbox/Provider/AdsPower.ts"
import * as AdsPowerServer from "../../fixtures/AdsPowerServer.ts"
import { freePort } from "../../support/Ports.ts"
import { isAlive } from "../../support/Processes.ts"

const startPath = "/api/v1/browser/start"
const stopPath = "/api/v1/browser/stop"
const activePath = "/api/v1/browser/active"

/** Acquire must fail with a ProviderError; returns it. */
const providerError = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(effect)
    assert.strictEqual(error._tag, "ProviderError", String((error as { message?: string }).message))
    return error as unknown as ProviderError
  })

it.effect("start gives the ws endpoint of a real browser, and release stops that browser", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    const provider = AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" })
    assert.strictEqual(provider.name, "adspower")
    assert.isFalse(provider.canRelaunch)
    const pid = yield* Effect.scoped(
      Effect.gen(function* () {
        const browser = yield* provider.acquire
        const opened = ads.browser("k1")
        assert.isDefined(opened)
        assert.strictEqual(browser.wsEndpoint, opened!.wsEndpoint)
        assert.isNull(browser.pid)
        const version = yield* CdpHttp.version(browser.httpEndpoint)
        assert.strictEqual(version.webSocketDebuggerUrl, browser.wsEndpoint)
        assert.isTrue(isAlive(opened!.pid!))
        const start = ads.requests().find((r) => r.path === startPath)
        assert.deepStrictEqual(start?.query, { user_id: "k1", open_tabs: "1" })
        return opened!.pid!
      })
    )
    assert.isFalse(isAlive(pid))
    assert.isUndefined(ads.browser("k1"))
    assert.deepStrictEqual(
      ads
        .requests()
        .filter((r) => r.path === stopPath)
        .map((r) => r.query),
      [{ user_id: "k1" }]
    )
  })
)

it.effect("opens a profile by serial number", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start({ profiles: [{ userId: "k7", serialNumber: "42" }] })
    const browser = yield* AdsPower.make({ baseUrl: ads.baseUrl, serialNumber: "42" }).acquire
    assert.strictEqual(browser.wsEndpoint, ads.browser("k7")?.wsEndpoint)
    assert.deepStrictEqual(ads.requests().find((r) => r.path === startPath)?.query, {
      serial_number: "42",
      open_tabs: "1"
    })
  })
)

it.effect("alive follows AdsPower's active status and the browser's endpoint", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    const browser = yield* AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" }).acquire
    assert.isTrue(yield* browser.alive)
    assert.deepStrictEqual(ads.requests().findLast((r) => r.path === activePath)?.query, { user_id: "k1" })
    yield* ads.closeBrowser("k1")
    assert.isFalse(yield* browser.alive)
  })
)

it.effect("alive is false when AdsPower reports the profile inactive, even if something answers", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    const browser = yield* AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" }).acquire
    ads.failNext({ json: { code: 0, msg: "success", data: { status: "Inactive" } } }, activePath)
    assert.isFalse(yield* browser.alive)
    assert.isTrue(yield* browser.alive)
  })
)

it.effect("an unknown profile fails with a ProviderError carrying AdsPower's msg and code", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    const error = yield* providerError(AdsPower.make({ baseUrl: ads.baseUrl, userId: "nope" }).acquire)
    assert.strictEqual(error.provider, "adspower")
    assert.strictEqual(error.code, -1)
    assert.include(error.message, "Profile does not exist")
    assert.include(error.message, "nope")
    assert.isFalse(error.retryable)
  })
)

it.effect("a scripted refusal keeps its code; a rate limit is retryable", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    const provider = AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" })
    ads.failNext({ code: 9001, msg: "License expired" }, startPath)
    const refused = yield* providerError(provider.acquire)
    assert.strictEqual(refused.code, 9001)
    assert.include(refused.message, "License expired")
    assert.isFalse(refused.retryable)
    ads.failNext({ code: -1, msg: "Too many request per second, please check" }, startPath)
    const limited = yield* providerError(provider.acquire)
    assert.isTrue(limited.retryable)
    assert.isUndefined(ads.browser("k1"))
  })
)

it.effect("HTTP errors are retryable ProviderErrors; malformed answers are not", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    const provider = AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" })
    ads.failNext({ status: 503, body: "upstream down" }, startPath)
    const unavailable = yield* providerError(provider.acquire)
    assert.isTrue(unavailable.retryable)
    assert.include(unavailable.message, "HTTP 503")
    ads.failNext({ raw: "<html>not json</html>" }, startPath)
    const malformed = yield* providerError(provider.acquire)
    assert.isFalse(malformed.retryable)
    assert.include(malformed.message, "malformed")
    ads.failNext({ json: { code: 0, msg: "success", data: { debug_port: "9222" } } }, startPath)
    const noWs = yield* providerError(provider.acquire)
    assert.isFalse(noWs.retryable)
    assert.include(noWs.message, "ws.puppeteer")
  })
)

it.effect("a started browser that does not answer is stopped again and reported unreachable", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    const port = yield* freePort
    const ws = `ws://127.0.0.1:${port}/devtools/browser/gone`
    ads.failNext({ json: { code: 0, msg: "success", data: { ws: { puppeteer: ws } } } }, startPath)
    const error = yield* Effect.flip(AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" }).acquire)
    assert.strictEqual(error._tag, "EndpointUnreachable")
    assert.include(error.message, ws)
    assert.deepStrictEqual(
      ads.requests().map((r) => r.path),
      [activePath, startPath, stopPath]
    )
  })
)

it.effect("a profile that was already open is attached to and left running on release", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    // Someone opened the profile in AdsPower before Switchyard came along.
    yield* Effect.promise(() => fetch(`${ads.baseUrl}${startPath}?user_id=k1`))
    const before = ads.browser("k1")
    assert.isDefined(before)
    yield* Effect.scoped(
      Effect.gen(function* () {
        const browser = yield* AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" }).acquire
        assert.strictEqual(browser.wsEndpoint, before!.wsEndpoint)
      })
    )
    assert.isTrue(isAlive(before!.pid!), "the person's browser is still running")
    assert.strictEqual(ads.browser("k1")?.wsEndpoint, before!.wsEndpoint)
    assert.notInclude(
      ads
        .requests()
        .slice(-3)
        .map((r) => r.path),
      stopPath
    )
  })
)

it.effect("sends the API key as a bearer token and keeps it out of errors", () =>
  Effect.gen(function* () {
    const key = "ak-secret-123"
    const ads = yield* AdsPowerServer.start({ apiKey: key })
    const browser = yield* AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1", apiKey: Redacted.make(key) }).acquire
    assert.isTrue(yield* browser.alive)
    assert.isTrue(ads.requests().length >= 2)
    for (const request of ads.requests()) assert.strictEqual(request.authorization, `Bearer ${key}`)

    const wrong = yield* providerError(
      AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1", apiKey: Redacted.make("ak-wrong-456") }).acquire
    )
    assert.include(wrong.message, "Invalid API key")
    assert.notInclude(wrong.message, "ak-wrong-456")
    assert.notInclude(JSON.stringify(wrong), "ak-wrong-456")
  })
)

it.effect("sends no Authorization header without an API key", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    yield* AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" }).acquire
    assert.isUndefined(ads.requests()[0]?.authorization)
  })
)

it.effect("an unreachable Local API fails with EndpointUnreachable naming its address", () =>
  Effect.gen(function* () {
    const port = yield* freePort
    const baseUrl = `http://127.0.0.1:${port}`
    const error = yield* Effect.flip(AdsPower.make({ baseUrl, userId: "k1" }).acquire)
    assert.strictEqual(error._tag, "EndpointUnreachable")
    assert.include(error.message, baseUrl)
    assert.isTrue(error.retryable)
  })
)

it.effect("a bad configuration fails before any request", () =>
  Effect.gen(function* () {
    const both = yield* Effect.flip(AdsPower.make({ userId: "k1", serialNumber: "1" }).acquire)
    assert.strictEqual(both._tag, "InvalidInput")
    const neither = yield* Effect.flip(AdsPower.make({}).acquire)
    assert.strictEqual(neither._tag, "InvalidInput")
    const badUrl = yield* Effect.flip(AdsPower.make({ baseUrl: "local.adspower.net:50325", userId: "k1" }).acquire)
    assert.strictEqual(badUrl._tag, "InvalidEndpoint")
    assert.include(badUrl.message, "local.adspower.net:50325")
  })
)

it.effect("a failing stop does not fail the release", () =>
  Effect.gen(function* () {
    const ads = yield* AdsPowerServer.start()
    yield* Effect.scoped(
      Effect.gen(function* () {
        yield* AdsPower.make({ baseUrl: ads.baseUrl, userId: "k1" }).acquire
        ads.failNext({ status: 500, body: "boom" }, stopPath)
      })
    )
    assert.strictEqual(ads.requests().at(-1)?.path, stopPath)
    // AdsPower never stopped it, so it is still open; the double's own scope stops it at the end.
    assert.isDefined(ads.browser("k1"))
  })
)
