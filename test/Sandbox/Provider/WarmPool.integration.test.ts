/** The warm pool on real Chromium: a warm browser is fresh and handed out once, the cap holds, nothing outlives it. */
import { existsSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as CdpHttp from "../../../src/Cdp/Http.ts"
import * as Session from "../../../src/Cdp/Session.ts"
import type { RunningBrowser } from "../../../src/Sandbox/Provider/Browser.ts"
import * as LocalChromium from "../../../src/Sandbox/Provider/LocalChromium.ts"
import * as WarmPool from "../../../src/Sandbox/Provider/WarmPool.ts"
import * as SiteServer from "../../fixtures/SiteServer.ts"
import { isAlive, processesMatching } from "../../support/Processes.ts"
import { waitFor } from "../../support/Wait.ts"

/** A pool whose browsers carry a flag of their own, so the test counts only them (main processes, not helpers). */
const poolOf = (options: WarmPool.WarmPoolOptions) =>
  Effect.gen(function* () {
    const marker = `--switchyard-pool-test=${Math.random().toString(36).slice(2)}`
    const pool = yield* WarmPool.make(LocalChromium.make({ extraArgs: [marker] }), options)
    const browsers = () => processesMatching(marker).filter((p) => !/--type=/.test(p.cmdline))
    return { pool, browsers }
  })

const profileOf = (pid: number | null) =>
  /--user-data-dir=(\S+)/.exec(processesMatching("--user-data-dir=").find((p) => p.pid === pid)?.cmdline ?? "")?.[1]

/** Runs `expression` on the browser's first page after opening `url` there. */
const onPage = <A>(browser: RunningBrowser, url: string, expression: string) =>
  Effect.gen(function* () {
    const page = (yield* CdpHttp.listTargets(browser.httpEndpoint)).find((t) => t.type === "page")!
    yield* Session.navigate(browser.wsEndpoint, page.id, url)
    return yield* Session.evaluate<A>(browser.wsEndpoint, page.id, expression)
  })

describe("WarmPool", () => {
  it.live("hands each session a browser of its own: fresh profile, no data of an earlier session", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const url = site.url("/plain.html")
      const { pool, browsers } = yield* poolOf({ size: 1, maxBrowsers: 4 })
      assert.isTrue(yield* Effect.promise(() => waitFor(() => browsers().length === 1, 30_000)), "one warm browser")

      const first = yield* Scope.make()
      const a = yield* pool.acquire.pipe(Scope.provide(first))
      const profileA = profileOf(a.pid)
      yield* onPage(a, url, `(document.cookie = "who=a; max-age=3600", localStorage.setItem("who", "a"), 1)`)
      assert.strictEqual(yield* onPage<string>(a, url, `localStorage.getItem("who") + document.cookie`), "awho=a")
      // The pool starts the next one while a is in use.
      assert.isTrue(yield* Effect.promise(() => waitFor(() => browsers().length === 2, 30_000)), "a warm one beside a")

      const second = yield* Scope.make()
      const b = yield* pool.acquire.pipe(Scope.provide(second))
      assert.notStrictEqual(b.pid, a.pid, "a browser in use is never handed out again")
      assert.notStrictEqual(profileOf(b.pid), profileA)
      assert.strictEqual(yield* onPage<string>(b, url, `String(localStorage.getItem("who")) + document.cookie`), "null")

      yield* Scope.close(first, Exit.void)
      assert.isFalse(isAlive(a.pid!), "a session's browser stops with its session, never back to the pool")
      assert.isFalse(existsSync(profileA!), "and its profile goes with it")
      const third = yield* Scope.make()
      const c = yield* pool.acquire.pipe(Scope.provide(third))
      assert.notInclude([a.pid, b.pid], c.pid)
      assert.strictEqual(yield* onPage<string>(c, url, `String(localStorage.getItem("who")) + document.cookie`), "null")
      yield* Scope.close(second, Exit.void)
      yield* Scope.close(third, Exit.void)
    }).pipe(Effect.scoped)
  )

  it.live("keeps warm browsers within the cap, and none outlives the pool", () => {
    const poolScope = Scope.makeUnsafe()
    return Effect.gen(function* () {
      const { pool, browsers } = yield* poolOf({ size: 1, maxBrowsers: 1 }).pipe(Scope.provide(poolScope))
      assert.isTrue(yield* Effect.promise(() => waitFor(() => browsers().length === 1, 30_000)))
      const warmPid = browsers()[0]!.pid
      // Asked for while it may still be starting: the session waits for it rather than starting another.
      const session = yield* Scope.make()
      const taken = yield* pool.acquire.pipe(Scope.provide(session))
      assert.strictEqual(taken.pid, warmPid, "the warm browser is the one handed out")
      yield* Effect.sleep("1500 millis")
      assert.strictEqual(browsers().length, 1, "at the cap, no browser is started ahead")

      yield* Scope.close(session, Exit.void)
      assert.isTrue(yield* Effect.promise(() => waitFor(() => browsers().length === 1, 30_000)), "refilled below it")
      const warm = browsers()[0]!.pid
      assert.notStrictEqual(warm, warmPid)
      const profile = profileOf(warm)
      yield* Scope.close(poolScope, Exit.void)
      assert.deepStrictEqual(browsers(), [], "the warm browser stops with the pool")
      assert.isFalse(existsSync(profile!), "and its temp profile is removed")
    }).pipe(Effect.ensuring(Scope.close(poolScope, Exit.void)))
  })
})
