/** The local Chromium a session gets, on the real binary: what it runs besides the session's page. */
import { chmodSync, existsSync, mkdirSync, readlinkSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
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

  const closedLeavesNothing = Effect.gen(function* () {
    const marker = `--switchyard-chromium-test=${Math.random().toString(36).slice(2)}`
    const scope = yield* Scope.make()
    const browser = yield* LocalChromium.make({ extraArgs: [marker] }).acquire.pipe(Scope.provide(scope))
    const main = processesMatching(marker).find((p) => p.pid === browser.pid)!
    const profile = /--user-data-dir=(\S+)/.exec(main.cmdline)![1]!
    // Chromium's singleton socket lives in a temp directory of its own, linked from the profile; a browser that is
    // killed (as a temp profile's is, at once) never removes it, so a long-lived service would leave one per session.
    const socket = readlinkSync(`${profile}/SingletonSocket`)
    assert.isTrue(existsSync(socket), socket)
    yield* Scope.close(scope, Exit.void)
    assert.isFalse(existsSync(profile), `the profile ${profile}`)
    assert.isFalse(existsSync(dirname(socket)), `Chromium's temp directory ${dirname(socket)}`)
    return { profile, socket }
  })

  it.live(
    "leaves nothing on disk once closed: neither its profile nor Chromium's own temp directory",
    () => closedLeavesNothing
  )

  it.live("nor with a TMPDIR too long for the socket's path to fit inside the profile", () => {
    const before = process.env.TMPDIR
    const long = join(tmpdir(), `switchyard-long-tmp-${"x".repeat(60)}`)
    return Effect.gen(function* () {
      mkdirSync(long, { mode: 0o755 })
      chmodSync(long, 0o755)
      process.env.TMPDIR = long
      const { profile, socket } = yield* closedLeavesNothing
      assert.isTrue(profile.startsWith(long) || profile.startsWith("/tmp/"), profile)
      assert.isFalse(socket.startsWith(`${profile}/`), "the socket had to go elsewhere")
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          process.env.TMPDIR = before
          rmSync(long, { recursive: true, force: true })
        })
      )
    )
  })
})
