/**
 * A session's page comes back whole on the real service (JSON-RPC, real Chromium, a site of our own that records
 * every request with the cookies it carried): after its tab's renderer crashes, after its browser is killed, and
 * after it was hibernated to free a browser for another session. A call running when the tab or browser goes ends at
 * once with `cdp_closed`; the next call finds the page at its URL with its HttpOnly cookie, localStorage and
 * sessionStorage, the cookie already on the page's first request, and its answer says the page was restored. A
 * partitioned cookie (CHIPS: an embedded chat widget's) comes back in its partition: the widget keeps it, and its
 * site does not see it when visited directly.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { descendants } from "../Chaos/Descendants.ts"
import * as RecordingSite from "../fixtures/RecordingSite.ts"
import { type Service, startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterAll(stopServices)

const secret = `sid-${Math.floor(Math.random() * 1e9).toString(16)}`

/** `/login` signs in (an HttpOnly cookie, both storages); `/app` shows what it finds in its title. */
const site = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ server: Server; requests: Array<{ path: string; cookie: string }> }>((resolve) => {
        const requests: Array<{ path: string; cookie: string }> = []
        const server = createServer((req, res) => {
          const path = req.url ?? "/"
          if (path !== "/favicon.ico") requests.push({ path, cookie: req.headers.cookie ?? "" })
          if (path === "/login") {
            res.writeHead(200, {
              "content-type": "text/html",
              "set-cookie": `sid=${secret}; HttpOnly; Path=/; Max-Age=3600`
            })
            return res.end(`<title>signed in</title><script>
              localStorage.setItem("ls", "L-kept"); sessionStorage.setItem("ss", "S-kept")</script>`)
          }
          const signedIn = (req.headers.cookie ?? "").includes(`sid=${secret}`)
          res.writeHead(200, { "content-type": "text/html" }).end(`<title>app</title>
            <p>${signedIn ? "signed in" : "signed out"}</p>
            <script>document.title = JSON.stringify({ cookie: ${signedIn}, ls: localStorage.getItem("ls"),
              ss: sessionStorage.getItem("ss") })</script>`)
        })
        server.listen(0, "127.0.0.1", () => resolve({ server, requests }))
      })
  ),
  ({ server }) =>
    Effect.sync(() => {
      server.closeAllConnections()
      server.close()
    })
)

type Answer = {
  readonly result?: { readonly state: { readonly title: string | null }; readonly pageEvents?: ReadonlyArray<unknown> }
  readonly error?: { readonly data?: { readonly type?: string; readonly retryable?: boolean } }
}

const call = (service: Service, method: string, params: Record<string, unknown>) =>
  Effect.promise(() => service.call(method, params) as Promise<Answer>)

/** Signs in on `session` and opens the app: the page shows the cookie and both storages. */
const signIn = (service: Service, origin: string, session: string) =>
  Effect.gen(function* () {
    for (const path of ["/login", "/app"]) {
      const answer = yield* call(service, "browser.navigate", { url: `${origin}${path}`, session })
      assert.isDefined(answer.result, JSON.stringify(answer.error))
    }
    const title = (yield* call(service, "browser.status", { session })).result?.state.title
    assert.deepStrictEqual(JSON.parse(title ?? "null"), { cookie: true, ls: "L-kept", ss: "S-kept" })
  })

/** The next call's answer: the page back as it was, said so in `pageEvents`, the cookie on its first request. */
const restored = (
  service: Service,
  requests: ReadonlyArray<{ path: string; cookie: string }>,
  mark: number,
  session: string,
  reason: string
) =>
  Effect.gen(function* () {
    const answer = yield* call(service, "browser.extract", { session })
    assert.isDefined(answer.result, JSON.stringify(answer.error))
    assert.deepStrictEqual(JSON.parse(answer.result?.state.title ?? "null"), {
      cookie: true,
      ls: "L-kept",
      ss: "S-kept"
    })
    const events = (answer.result?.pageEvents ?? []) as ReadonlyArray<{ event: string; reason?: string }>
    assert.isTrue(
      events.some((e) => e.event === "restored" && e.reason === reason),
      `no restored event: ${JSON.stringify(events)}`
    )
    // The page's first request after the loss already carried the HttpOnly cookie.
    const first = requests.slice(mark).find((r) => r.path === "/app")
    assert.isDefined(first, "the page was loaded again")
    assert.include(first?.cookie ?? "", `sid=${secret}`)
  })

/**
 * "At once": the crash is seen within a few hundred ms; a call that waited for a timeout or a health check would not
 * be. 5 s leaves room for a loaded two-core machine and still tells that from a call whose 20 s element wait ran out,
 * or from a late answer some 7 s on.
 */
const promptlyMs = 5_000

/** Starts an act that waits for an element that never comes, and gives it time to be waiting. */
const waitingAct = (service: Service, session: string) =>
  Effect.gen(function* () {
    const pending = service.call("browser.act", { instruction: 'click "A button that never appears"', session })
    yield* Effect.sleep("700 millis")
    return pending as Promise<Answer>
  })

const browserOf = (service: Service, session: string) =>
  Effect.promise(async () => {
    const status = (await service.call("browserStatus", { session })).result as {
      browserPid: number
      wsEndpoint: string
    }
    return status
  })

describe("a session's page comes back whole", () => {
  it.live(
    "a crashed tab: the call ends with cdp_closed; the next call has the page, cookie and storage",
    () =>
      Effect.gen(function* () {
        const { server, requests } = yield* site
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        const service = startService({ SWITCHYARD_ELEMENT_WAIT_MS: "20000" })
        yield* signIn(service, origin, "tab")
        const { browserPid } = yield* browserOf(service, "tab")
        const pending = yield* waitingAct(service, "tab")
        const mark = requests.length
        // The renderer killed, as the kernel's OOM killer or a crash does: the browser lives on.
        const renderers = descendants(browserPid).filter((p) =>
          readFileSync(`/proc/${p.pid}/cmdline`, "utf8").includes("--type=renderer")
        )
        assert.isAbove(renderers.length, 0)
        for (const renderer of renderers) process.kill(renderer.pid, "SIGKILL")
        const killed = Date.now()
        const answer = yield* Effect.promise(() => pending)
        assert.isBelow(Date.now() - killed, promptlyMs, "the call ended at once, not when its wait ran out")
        assert.strictEqual(answer.error?.data?.type, "cdp_closed", JSON.stringify(answer))
        assert.isTrue(answer.error?.data?.retryable)
        yield* restored(service, requests, mark, "tab", "crash")
      }),
    120_000
  )

  it.live(
    "a killed browser: the call ends with cdp_closed; the next call has the page, cookie and storage",
    () =>
      Effect.gen(function* () {
        const { server, requests } = yield* site
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        const service = startService({ SWITCHYARD_ELEMENT_WAIT_MS: "20000" })
        yield* signIn(service, origin, "browser")
        const { browserPid } = yield* browserOf(service, "browser")
        const pending = yield* waitingAct(service, "browser")
        const mark = requests.length
        process.kill(browserPid, "SIGKILL")
        const killed = Date.now()
        const answer = yield* Effect.promise(() => pending)
        assert.isBelow(Date.now() - killed, promptlyMs, "the call ended at once, not when its wait ran out")
        assert.strictEqual(answer.error?.data?.type, "cdp_closed", JSON.stringify(answer))
        assert.isTrue(answer.error?.data?.retryable)
        yield* restored(service, requests, mark, "browser", "crash")
        assert.notStrictEqual((yield* browserOf(service, "browser")).browserPid, browserPid, "a new browser")
      }),
    120_000
  )

  it.live(
    "an idle session hibernated to free the only browser: its next call has the page, cookie and storage",
    () =>
      Effect.gen(function* () {
        const { server, requests } = yield* site
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        const service = startService({ SWITCHYARD_MAX_BROWSERS: "1", SWITCHYARD_QUEUE: "0" })
        yield* signIn(service, origin, "first")
        // Another session needs the only browser: the idle one hibernates instead of the new one getting busy.
        const other = yield* call(service, "browser.navigate", { url: `${origin}/app`, session: "second" })
        assert.isDefined(other.result, JSON.stringify(other.error))
        assert.strictEqual(JSON.parse(other.result?.state.title ?? "null").cookie, false, "sessions share nothing")
        const status = (yield* Effect.promise(() => service.call("browserStatus", { session: "first" }))).result
        assert.deepInclude(status as object, { active: false, hibernated: true })
        yield* restored(service, requests, requests.length, "first", "hibernation")
        assert.isTrue(yield* Effect.promise(() => waitFor(() => service.unanswered() === 0)))
      }),
    120_000
  )

  it.live(
    "a hibernated page's embedded widget keeps its partitioned cookie, still in its partition",
    () =>
      Effect.gen(function* () {
        // A shop on 127.0.0.1 embeds a chat widget served from another site (localhost), which keeps its visitor
        // in a partitioned cookie (CHIPS), as third-party widgets must now that third-party cookies are blocked.
        const widget = yield* RecordingSite.start({
          "/widget": (_req, res) =>
            res
              .writeHead(200, {
                "content-type": "text/html",
                "set-cookie": "visitor=v-81f3; Secure; SameSite=None; Partitioned; Path=/; Max-Age=3600"
              })
              .end("<p>How can we help?</p>"),
          "/": "<title>widget home</title>"
        })
        const widgetOrigin = widget.origin.replace("127.0.0.1", "localhost")
        const shop = yield* RecordingSite.start({
          "/": `<title>shop</title><h1>Shop</h1><iframe title="Chat" src="${widgetOrigin}/widget"></iframe>`
        })
        const widgetCookies = () => widget.to("/widget").map((r) => r.cookie)
        const dir = mkdtempSync(join(tmpdir(), "switchyard-chips-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const service = startService({
          SWITCHYARD_MAX_BROWSERS: "1",
          SWITCHYARD_QUEUE: "0",
          SWITCHYARD_STORE: join(dir, "store.db"),
          SWITCHYARD_STORAGE_KEY: "correct horse battery staple"
        })
        for (let i = 0; i < 2; i++) {
          const opened = yield* call(service, "browser.navigate", { url: shop.url("/"), session: "shopper" })
          assert.isDefined(opened.result, JSON.stringify(opened.error))
        }
        assert.isTrue(yield* Effect.promise(() => waitFor(() => widgetCookies().length === 2)))
        assert.deepStrictEqual(widgetCookies(), ["", "visitor=v-81f3"], "the widget keeps its visitor")

        // Another session takes the only browser: the shopper's page is saved and its browser closed.
        const other = yield* call(service, "browser.navigate", { url: shop.url("/"), session: "other" })
        assert.isDefined(other.result, JSON.stringify(other.error))
        const mark = widget.to("/widget").length
        const back = yield* call(service, "browser.extract", { session: "shopper" })
        assert.isDefined(back.result, JSON.stringify(back.error))
        assert.isTrue(yield* Effect.promise(() => waitFor(() => widget.to("/widget").length > mark)))
        assert.strictEqual(
          widget.to("/widget")[mark]!.cookie,
          "visitor=v-81f3",
          "the restored widget knows its visitor"
        )
        // Still partitioned: the widget's site opened directly (first party) does not get the shop's cookie.
        const direct = yield* call(service, "browser.navigate", { url: `${widgetOrigin}/`, session: "shopper" })
        assert.isDefined(direct.result, JSON.stringify(direct.error))
        assert.strictEqual(widget.to("/").at(-1)?.cookie, "")

        // Saved as a named state and started from by a later session: the same, in its partition.
        yield* call(service, "browser.navigate", { url: shop.url("/"), session: "shopper" })
        const saved = yield* call(service, "browser.storage", { action: "save", name: "shop", session: "shopper" })
        assert.isDefined(saved.result, JSON.stringify(saved.error))
        yield* call(service, "browser.close", { session: "shopper" })
        yield* call(service, "browser.close", { session: "other" })
        const before = widget.to("/widget").length
        const later = yield* call(service, "browser.navigate", {
          url: shop.url("/"),
          session: "later",
          storageState: "shop"
        })
        assert.isDefined(later.result, JSON.stringify(later.error))
        assert.isTrue(yield* Effect.promise(() => waitFor(() => widget.to("/widget").length > before)))
        assert.strictEqual(widget.to("/widget")[before]!.cookie, "visitor=v-81f3")
        yield* call(service, "browser.navigate", { url: `${widgetOrigin}/`, session: "later" })
        assert.strictEqual(widget.to("/").at(-1)?.cookie, "")
      }),
    120_000
  )
})
