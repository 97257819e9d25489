/** A real Chromium for a test's scope, offered as the `BrowserSession` engines need. */
import { Effect, Layer } from "effect"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import * as Session from "../../src/Cdp/Session.ts"
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

/** Evaluates `expression` in the session's page on a CDP connection of its own, behind the engine's back: what the
 * page itself shows, or a change the engine did not make. */
export const evaluate = <A = unknown>(expression: string) =>
  Effect.gen(function* () {
    const session = yield* BrowserSession
    return yield* Session.evaluate<A>(session.wsEndpoint, session.targetId, expression)
  })
