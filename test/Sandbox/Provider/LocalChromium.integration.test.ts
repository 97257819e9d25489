/** The local Chromium a session gets, on the real binary: what it runs besides the session's page. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as CdpHttp from "../../../src/Cdp/Http.ts"
import * as Session from "../../../src/Cdp/Session.ts"
import * as LocalChromium from "../../../src/Sandbox/Provider/LocalChromium.ts"
import * as SiteServer from "../../fixtures/SiteServer.ts"
import { processesMatching } from "../../support/Processes.ts"
import { waitFor } from "../../support/Wait.ts"

describe("LocalChromium", () => {
  it.live("runs the session's page and no hidden browser-UI pages: each would hold a renderer per session", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const marker = `--switchyard-chromium-test=${Math.random().toString(36).slice(2)}`
      const browser = yield* LocalChromium.make({ extraArgs: [marker] }).acquire
      const page = (yield* CdpHttp.listTargets(browser.httpEndpoint)).find((t) => t.type === "page")!
      yield* Session.navigate(browser.wsEndpoint, page.id, site.url("/forms.html"))
      // Chromium preloads its omnibox popup as hidden WebUI pages shortly after a page loads; a headless browser
      // never shows an omnibox.
      yield* Effect.sleep("1500 millis")
      const others = (yield* CdpHttp.listTargets(browser.httpEndpoint)).filter((t) => t.type !== "page")
      assert.deepStrictEqual(
        others.map((t) => `${t.type} ${t.url}`),
        [],
        "only the session's page (and no renderer process for anything else)"
      )
      const renderers = processesMatching(marker).filter((p) => p.cmdline.includes("--type=renderer"))
      assert.isAtMost(renderers.length, 2, "the page's renderer (and at most Chromium's spare one)")
    }).pipe(
      Effect.scoped,
      Effect.andThen(
        Effect.promise(() => waitFor(() => processesMatching("--switchyard-chromium-test=").length === 0, 5_000))
      )
    )
  )
})
