/**
 * The warm pool on real Chromium: a warm browser is fresh and handed out once, reaches nothing before a session binds
 * it to its egress proxy and then only what that proxy lets through, the cap holds, nothing outlives it.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as CdpHttp from "../../../src/Cdp/Http.ts"
import * as Session from "../../../src/Cdp/Session.ts"
import * as Egress from "../../../src/Egress/Egress.ts"
import type { RunningBrowser } from "../../../src/Sandbox/Provider/Browser.ts"
import * as LocalChromium from "../../../src/Sandbox/Provider/LocalChromium.ts"
import * as WarmPool from "../../../src/Sandbox/Provider/WarmPool.ts"
import * as SiteServer from "../../fixtures/SiteServer.ts"
import { startSites } from "../../Security/Support.ts"
import { isAlive, processesMatching } from "../../support/Processes.ts"
import { waitFor } from "../../support/Wait.ts"

/** A pool whose browsers carry a flag of their own, so the test counts only them (main processes, not helpers). */
const poolOf = (options: WarmPool.WarmPoolOptions) =>
  Effect.gen(function* () {
    const marker = `--switchyard-pool-test=${Math.random().toString(36).slice(2)}`
    const pool = yield* WarmPool.make(
      (egressProxy) =>
        LocalChromium.make({ extraArgs: [marker], ...(egressProxy === undefined ? {} : { egressProxy }) }).acquire,
      options
    )
    const browsers = () => processesMatching(marker).filter((p) => !/--type=/.test(p.cmdline))
    // The one warm browser once it has settled: a process mid-exec (the launcher script becoming Chromium) can drop
    // out of one reading of /proc, so its pid is taken from two agreeing readings.
    const oneWarm = Effect.promise(async () => {
      let seen: number | undefined
      const settled = await waitFor(() => {
        const pids = browsers().map((p) => p.pid)
        const agreed = pids.length === 1 && pids[0] === seen
        seen = pids.length === 1 ? pids[0] : undefined
        return agreed
      }, 30_000)
      assert.isTrue(settled && seen !== undefined, "one warm browser")
      return seen!
    })
    // A session's egress, as SessionStack gives each: its own proxy (loopback allowed, 127.0.0.2 denied).
    const egress = yield* Egress.make({ privateNetworks: true, config: { allow: [], deny: ["127.0.0.2"] } })
    const take = (scope: Scope.Scope) =>
      pool.acquire.pipe(Effect.provideService(Egress.Egress, egress), Scope.provide(scope))
    return { pool, browsers, oneWarm, take, egress }
  })

const profileOf = (pid: number | null) =>
  /--user-data-dir=(\S+)/.exec(processesMatching("--user-data-dir=").find((p) => p.pid === pid)?.cmdline ?? "")?.[1]

/** Runs `expression` on the browser's first page after opening `url` there. */
const onPage = <A>(browser: RunningBrowser, url: string, expression: string) =>
  Effect.gen(function* () {
    const page = (yield* CdpHttp.listTargets(browser.httpEndpoint)).find((t) => t.type === "page")!
    yield* Session.navigate(browser.wsEndpoint, page.id, url)
    // A late load event of the page's earlier, refused navigation (its error page) may end the wait first: the page is
    // read once it has left that error page and loaded.
    const shown = `location.protocol !== "chrome-error:" && document.readyState === "complete"`
    const loaded: Effect.Effect<boolean, unknown> = Session.evaluate<boolean>(browser.wsEndpoint, page.id, shown).pipe(
      Effect.flatMap((done) => (done ? Effect.succeed(true) : Effect.sleep("100 millis").pipe(Effect.andThen(loaded))))
    )
    yield* loaded.pipe(Effect.timeoutOption("10 seconds"))
    return yield* Session.evaluate<A>(browser.wsEndpoint, page.id, expression)
  })

/** A warm browser nobody has taken, as a client that finds it would reach it: through its profile's DevTools port. */
const untaken = (pid: number) => {
  const [port] = readFileSync(join(profileOf(pid)!, "DevToolsActivePort"), "utf8").split("\n")
  return { httpEndpoint: `http://127.0.0.1:${port}` }
}

describe("WarmPool", () => {
  it.live("a warm browser reaches nothing before a session takes it, then only what the session's egress allows", () =>
    Effect.gen(function* () {
      const sites = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startSites((denied) => ({
            "/hello": "<title>hello</title><p>allowed</p>",
            "/frame": `<title>frame</title><iframe src="${denied}/frame-target"></iframe>`
          }))
        ),
        (s) => Effect.promise(s.close)
      )
      const { oneWarm, take, egress } = yield* poolOf({ size: 1, maxBrowsers: 4 })
      const warmPid = yield* oneWarm
      const portFile = join(profileOf(warmPid)!, "DevToolsActivePort")
      assert.isTrue(yield* Effect.promise(() => waitFor(() => existsSync(portFile), 30_000)), "its DevTools port")
      const before = untaken(warmPid)
      const page = (yield* CdpHttp.listTargets(before.httpEndpoint)).find((t) => t.type === "page")!
      const ws = (yield* CdpHttp.version(before.httpEndpoint)).webSocketDebuggerUrl
      const early = yield* Session.navigate(ws, page.id, sites.allowedUrl("/hello")).pipe(Effect.exit)
      assert.isTrue(Exit.isFailure(early), "not bound to any proxy yet: the relay refuses")
      assert.deepStrictEqual(sites.allowed.hits, [], "nothing left the browser before a session took it")

      const session = yield* Scope.make()
      const browser = yield* take(session)
      assert.strictEqual(browser.pid, warmPid, "the warm browser is the one handed out")
      const mark = yield* egress.mark
      // Allowed: the app on loopback; its frame on the denied host is refused at the session's proxy.
      assert.strictEqual(yield* onPage<string>(browser, sites.allowedUrl("/frame"), "document.title"), "frame")
      assert.include(sites.allowed.hits, "GET /frame")
      // The proxy answers a refused plain-HTTP document itself (a 403 at its URL): not the denied server's page.
      const redirected = yield* onPage<string>(browser, sites.allowedUrl("/redirect"), "document.body.innerText")
      assert.notInclude(redirected, "the denied server")
      const blocked = yield* egress.since(mark)
      assert.isTrue(
        blocked.some((b) => b.host === "127.0.0.2" && b.url.includes("/frame-target")),
        JSON.stringify(blocked)
      )
      assert.isTrue(
        blocked.some((b) => b.url.includes("/redirect-target")),
        JSON.stringify(blocked)
      )
      assert.deepStrictEqual(sites.denied.hits, [], "the denied host saw nothing")
      yield* Scope.close(session, Exit.void)
    }).pipe(Effect.scoped)
  )

  it.live("hands each session a browser of its own: fresh profile, no data of an earlier session", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const url = site.url("/plain.html")
      const { browsers, take } = yield* poolOf({ size: 1, maxBrowsers: 4 })
      assert.isTrue(yield* Effect.promise(() => waitFor(() => browsers().length === 1, 30_000)), "one warm browser")

      const first = yield* Scope.make()
      const a = yield* take(first)
      const profileA = profileOf(a.pid)
      yield* onPage(a, url, `(document.cookie = "who=a; max-age=3600", localStorage.setItem("who", "a"), 1)`)
      assert.strictEqual(yield* onPage<string>(a, url, `localStorage.getItem("who") + document.cookie`), "awho=a")
      // The pool starts the next one while a is in use.
      assert.isTrue(yield* Effect.promise(() => waitFor(() => browsers().length === 2, 30_000)), "a warm one beside a")

      const second = yield* Scope.make()
      const b = yield* take(second)
      assert.notStrictEqual(b.pid, a.pid, "a browser in use is never handed out again")
      assert.notStrictEqual(profileOf(b.pid), profileA)
      assert.strictEqual(yield* onPage<string>(b, url, `String(localStorage.getItem("who")) + document.cookie`), "null")

      yield* Scope.close(first, Exit.void)
      assert.isFalse(isAlive(a.pid!), "a session's browser stops with its session, never back to the pool")
      assert.isFalse(existsSync(profileA!), "and its profile goes with it")
      const third = yield* Scope.make()
      const c = yield* take(third)
      assert.notInclude([a.pid, b.pid], c.pid)
      assert.strictEqual(yield* onPage<string>(c, url, `String(localStorage.getItem("who")) + document.cookie`), "null")
      yield* Scope.close(second, Exit.void)
      yield* Scope.close(third, Exit.void)
    }).pipe(Effect.scoped)
  )

  it.live("keeps warm browsers within the cap, and none outlives the pool", () => {
    const poolScope = Scope.makeUnsafe()
    return Effect.gen(function* () {
      const { browsers, oneWarm, take } = yield* poolOf({ size: 1, maxBrowsers: 1 }).pipe(Scope.provide(poolScope))
      const warmPid = yield* oneWarm
      // Asked for while it may still be starting: the session waits for it rather than starting another.
      const session = yield* Scope.make()
      const taken = yield* take(session)
      assert.strictEqual(taken.pid, warmPid, "the warm browser is the one handed out")
      yield* Effect.sleep("1500 millis")
      assert.strictEqual(browsers().length, 1, "at the cap, no browser is started ahead")

      yield* Scope.close(session, Exit.void)
      const warm = yield* oneWarm // refilled below the cap
      assert.notStrictEqual(warm, warmPid)
      const profile = profileOf(warm)
      yield* Scope.close(poolScope, Exit.void)
      assert.deepStrictEqual(browsers(), [], "the warm browser stops with the pool")
      assert.isFalse(existsSync(profile!), "and its temp profile is removed")
    }).pipe(Effect.ensuring(Scope.close(poolScope, Exit.void)))
  })
})
