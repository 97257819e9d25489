/** A real Chromium for a test's scope, offered as the `BrowserSession` engines need. */
import { Effect, Layer } from "effect"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"

export const launchSession = (options: LocalChromium.LocalChromiumOptions = {}) =>
  Effect.gen(function* () {
    const browser = yield* LocalChromium.make(options).acquire
    const targets = yield* CdpHttp.listTargets(browser.httpEndpoint)
    const page = targets.find((t) => t.type === "page")
    if (page === undefined) return yield* Effect.die(new Error("Chromium started without a page"))
    return BrowserSession.of({
      wsEndpoint: browser.wsEndpoint,
      httpEndpoint: browser.httpEndpoint,
      pid: browser.pid,
      targetId: page.id
    })
  })

export const layer = (options: LocalChromium.LocalChromiumOptions = {}) =>
  Layer.effect(BrowserSession, launchSession(options))
