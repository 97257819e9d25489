/**
 * The requests playwright-core keeps for a page are bounded: after hundreds of navigations and thousands of fetches
 * the page's last finished requests are kept and the older ones released, while a request still in flight, an element
 * handle and the engine's acts and reads go on working as before.
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { Browser, Request } from "playwright-core"
import { BrowserSession } from "../../../src/Engine/BrowserSession.ts"
import { Engine } from "../../../src/Engine/Engine.ts"
import { said } from "../../../src/Engine/Instruction.ts"
import * as Page from "../../../src/Engine/Playwright/Page.ts"
import * as Requests from "../../../src/Engine/Playwright/Requests.ts"
import * as PlaywrightEngine from "../../../src/Engine/PlaywrightEngine.ts"
import * as TestBrowser from "../../support/TestBrowser.ts"

const doc = `<!doctype html><html lang="en"><title>Profile</title>
<label for="name">Full name</label><input id="name">
<button onclick="fetch('/record', { method: 'POST', body: document.getElementById('name').value })">Save</button>`

interface TestSite {
  readonly url: (path: string) => string
  readonly saved: Array<string>
  readonly releaseSlow: () => void
  readonly close: () => Promise<void>
}

/** A site on 127.0.0.1: a form page, a fast answer, an answer held until released, and what the page saved. */
const startSite = () =>
  new Promise<TestSite>((resolve) => {
    const saved: Array<string> = []
    const held: Array<ServerResponse> = []
    const server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname
      if (path === "/doc") return res.writeHead(200, { "content-type": "text/html" }).end(doc)
      if (path === "/fast") return res.writeHead(200, { "content-type": "text/plain" }).end("ok")
      if (path === "/slow") return void held.push(res.writeHead(200, { "content-type": "text/plain" }))
      if (path === "/record") {
        let body = ""
        req.on("data", (chunk) => {
          body += chunk
        })
        req.on("end", () => {
          saved.push(body)
          res.writeHead(204).end()
        })
        return
      }
      res.writeHead(404).end()
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: (path) => `http://127.0.0.1:${port}${path}`,
        saved,
        releaseSlow: () => {
          for (const res of held.splice(0)) res.end("slow done")
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

class Site extends Context.Service<Site, TestSite>()("test/RequestsSite") {}
const siteLayer = Layer.effect(
  Site,
  Effect.acquireRelease(Effect.promise(startSite), (site) => Effect.promise(site.close))
)

interface ClientObject {
  readonly _type: string
  readonly _parent: ClientObject | undefined
}

/** The requests playwright-core's client holds under `browser` (the in-process connection is shared by all). */
const requestsHeld = (browser: Browser) => {
  const objects = (browser as unknown as { _connection: { _objects: Map<string, ClientObject> } })._connection._objects
  const under = (o: ClientObject | undefined): boolean =>
    o !== undefined && (o === (browser as unknown as ClientObject) || under(o._parent))
  return [...objects.values()].filter((o) => o._type === "Request" && under(o)).length
}

/** The session's page over its own playwright-core connection, as the engine connects. */
const connectPage = Effect.gen(function* () {
  const session = yield* BrowserSession
  return yield* Page.connect({
    wsEndpoint: session.wsEndpoint,
    targetId: session.targetId,
    limits: { navigationTimeoutMs: 30_000, actionTimeoutMs: 30_000, elementWaitMs: 1_000 }
  })
})

/** `count` fetches the page makes one after another, in the page. */
const fetches = (page: Page.SessionPage, count: number) =>
  Effect.promise(() =>
    page.page.evaluate(async (n) => {
      for (let i = 0; i < n; i++) await fetch(`/fast?${i}`)
    }, count)
  )

// A pass releases once every tenth of `kept` new requests, and a request whose loading has not finished when a pass
// runs waits for the next: up to that many more may be held between passes.
const most = Requests.kept + Requests.kept / 10 + 10

layer(Layer.mergeAll(TestBrowser.layer(), siteLayer), { excludeTestServices: true, timeout: "60 seconds" })(
  "requests playwright-core keeps",
  (it) => {
    it.effect(
      "after 300 navigations the page keeps its last finished requests, not all of them",
      () =>
        Effect.gen(function* () {
          const site = yield* Site
          const page = yield* connectPage
          for (let i = 0; i < 299; i++) yield* Effect.promise(() => page.page.goto(site.url(`/doc?visit=${i}`)))
          const last = yield* Effect.promise(() => page.page.goto(site.url("/doc?visit=last")))
          const held = requestsHeld(page.browser)
          assert.isAtMost(held, most, `${held} requests held after 300 navigations`)
          assert.isAtLeast(held, Requests.kept, `${held} requests held after 300 navigations`)
          // The latest document's response is still there to read.
          assert.include(yield* Effect.promise(() => last!.text()), "Full name")
          // Fails when playwright-core changes what Requests reads (it then releases nothing).
          assert.isTrue(Requests.bound(page.browser), "playwright-core's dispatcher connection is of the known shape")
        }).pipe(Effect.scoped),
      180_000
    )

    it.effect(
      "a request in flight is kept while a thousand others finish, and its end is reported on it",
      () =>
        Effect.gen(function* () {
          const site = yield* Site
          const page = yield* connectPage
          const open = new Set<Request>()
          page.page.on("request", (r) => void open.add(r))
          page.page.on("requestfinished", (r) => void open.delete(r))
          page.page.on("requestfailed", (r) => void open.delete(r))
          yield* Effect.promise(() => page.page.goto(site.url("/doc")))
          let slow: Request | undefined
          page.page.on("request", (request) => {
            if (request.url().endsWith("/slow")) slow = request
          })
          const finished = page.page.waitForEvent("requestfinished", {
            predicate: (request) => request.url().endsWith("/slow"),
            timeout: 120_000
          })
          // Awaited below; a failure before then must not leave it unhandled.
          finished.catch(() => undefined)
          yield* Effect.promise(() =>
            page.page.evaluate(() => {
              ;(window as unknown as { slow: Promise<string> }).slow = fetch("/slow").then((r) => r.text())
            })
          )
          yield* fetches(page, 1_000)
          assert.isTrue(page.activity.fetching(), "the held request is still counted in flight")
          const held = requestsHeld(page.browser)
          assert.isAtMost(held, most + 1, `${held} requests held after 1,000 fetches`)

          site.releaseSlow()
          const request = yield* Effect.promise(() => finished)
          assert.strictEqual(request, slow, "the end is reported on the request the page started")
          const response = yield* Effect.promise(() => request.response())
          assert.strictEqual(yield* Effect.promise(() => response!.text()), "slow done")
          assert.strictEqual(
            yield* Effect.promise(() =>
              page.page.evaluate(() => (window as unknown as { slow: Promise<string> }).slow)
            ),
            "slow done"
          )
          // A fetch resolves on its headers: the end of the last body may be reported a moment later.
          yield* Effect.promise(async () => {
            for (let i = 0; i < 200 && (open.size > 0 || page.activity.fetching()); i++)
              await new Promise((r) => setTimeout(r, 50))
          })
          assert.deepStrictEqual(
            [...open].map((r) => r.url()),
            [],
            "every request the page started has been reported finished"
          )
          assert.isFalse(page.activity.fetching(), "nothing is counted in flight once the page has its answer")
        }).pipe(Effect.scoped),
      180_000
    )

    it.layer(PlaywrightEngine.layer({ elementWaitMs: 1_000, actionTimeoutMs: 10_000 }))("playwright", (it) => {
      it.effect(
        "an element handle, acts and reads work after 2,000 fetches and 150 navigations",
        () =>
          Effect.gen(function* () {
            const site = yield* Site
            const engine = yield* Engine
            const page = yield* connectPage
            for (let i = 0; i < 150; i++) yield* Effect.promise(() => page.page.goto(site.url(`/doc?visit=${i}`)))
            yield* engine.navigate(site.url("/doc?visit=form"))
            const handle = yield* Effect.promise(() => page.page.$("#name"))
            yield* engine.act(said('fill "Full name" with "Grace Hopper"'))
            yield* fetches(page, 2_000)
            assert.isAtMost(requestsHeld(page.browser), most, "requests held after 2,000 fetches")
            // The handle taken before the fetches still reads the field, and the engine still acts and reads.
            assert.strictEqual(yield* Effect.promise(() => handle!.inputValue()), "Grace Hopper")
            yield* engine.act(said('click "Save"'))
            const read = (yield* engine.extract("the form")) as {
              controls: ReadonlyArray<{ name: string; value?: string }>
            }
            assert.strictEqual(read.controls.find((c) => c.name === "Full name")?.value, "Grace Hopper")
            yield* Effect.promise(async () => {
              for (let i = 0; i < 100 && site.saved.length === 0; i++) await new Promise((r) => setTimeout(r, 50))
            })
            assert.deepStrictEqual(site.saved, ["Grace Hopper"])
          }).pipe(Effect.scoped),
        240_000
      )
    })
  }
)
