/**
 * Egress enforcement end to end: a real Chromium launched through the proxy, an allowed app on 127.0.0.1 and a
 * server on 127.0.0.2 the policy denies, which must receive nothing however the page tries (only loopback traffic).
 */
import { writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { type BrowserContext, type Page, chromium as playwright } from "playwright-core"
import * as CdpConnection from "../../src/Cdp/Connection.ts"
import * as Egress from "../../src/Egress/Egress.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"

const deniedRule = "deny:127.0.0.2"

/** Pages the allowed app serves; each reaches for the denied server in its own way. */
const pages = (denied: string): Record<string, string> => ({
  "/hello": "<title>hello</title><p id=msg>hello from the allowed app</p>",
  "/link": `<a id=go href="${denied}/link-target">go</a>`,
  "/frame": `<iframe id=f src="${denied}/frame-target"></iframe>`,
  "/popup": `<button id=go onclick="window.open('${denied}/popup-target')">open</button>`,
  "/form": `<form method=post action="${denied}/form-target"><input name=q value=secret><button id=go>send</button></form>`,
  "/subresources": `<img src="${denied}/image.png"><script>
      fetch("${denied}/fetch-target", { mode: "no-cors" }).catch(() => {});
      new WebSocket("${denied.replace("http:", "ws:")}/socket");
    </script>`,
  "/rebind": `<p id=msg>rebind page</p><a id=go href="/rebind-again">again</a>`
})

interface Listening {
  readonly server: Server
  readonly hits: Array<string>
}

const listen = (host: string, port: number, answer: (path: string) => [number, Record<string, string>, string]) =>
  new Promise<Listening>((resolve, reject) => {
    const hits: Array<string> = []
    const server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`)
      const [status, headers, body] = answer(req.url ?? "/")
      res.writeHead(status, headers).end(body)
    })
    server.on("connection", () => hits.push("connection"))
    server.once("error", reject)
    server.listen(port, host, () => resolve({ server, hits }))
  })

const close = (listening: Listening) =>
  new Promise<void>((done) => {
    listening.server.closeAllConnections()
    listening.server.close(() => done())
  })

/** The denied server on 127.0.0.2 and the allowed app on 127.0.0.1, on the same port (for the rebinding case). */
const servers = Effect.acquireRelease(
  Effect.promise(async () => {
    for (let attempt = 0; ; attempt++) {
      const denied = await listen("127.0.0.2", 0, () => [200, { "content-type": "text/html" }, "<p>denied server</p>"])
      const port = (denied.server.address() as { port: number }).port
      const html = pages(`http://127.0.0.2:${port}`)
      const allowed = await listen("127.0.0.1", port, (path) =>
        path === "/redirect"
          ? [302, { location: `http://127.0.0.2:${port}/target?secret=hunter2` }, ""]
          : [html[path] ? 200 : 404, { "content-type": "text/html" }, html[path] ?? "not found"]
      ).catch(async (error: unknown) => {
        await close(denied)
        if (attempt >= 5) throw error
        return undefined
      })
      if (allowed !== undefined) return { port, denied, allowed }
    }
  }),
  ({ denied, allowed }) => Effect.promise(() => Promise.all([close(denied), close(allowed)]))
)

/** A resolver for names only this test knows: `rebind.test` answers the allowed address once, then the denied one. */
const lookups = new Map<string, number>()
const resolve = async (host: string): Promise<ReadonlyArray<string>> => {
  const n = (lookups.get(host) ?? 0) + 1
  lookups.set(host, n)
  if (host === "app.test") return ["127.0.0.1"]
  if (host === "rebind.test") return [n === 1 ? "127.0.0.1" : "127.0.0.2"]
  // Were the name check gone, the proxy would reach a loopback recorder, never a real metadata service.
  if (host === "metadata.google.internal") return ["127.0.0.2"]
  throw new Error(`ENOTFOUND ${host}`)
}

class Fixture extends Context.Service<
  Fixture,
  {
    readonly port: number
    readonly allowed: string
    readonly denied: string
    readonly deniedHits: ReadonlyArray<string>
    readonly allowedHits: ReadonlyArray<string>
    readonly context: BrowserContext
    readonly wsEndpoint: string
  }
>()("test/EgressFixture") {}

const fixture = Layer.effect(
  Fixture,
  Effect.gen(function* () {
    const { port, denied, allowed } = yield* servers
    const egress = yield* Egress.Egress
    const browser = yield* LocalChromium.make({ egressProxy: egress.proxyUrl }).acquire
    const connected = yield* Effect.acquireRelease(
      Effect.promise(() => playwright.connectOverCDP(browser.wsEndpoint)),
      (b) => Effect.promise(() => b.close())
    )
    const context = connected.contexts()[0]
    if (context === undefined) return yield* Effect.die(new Error("no default context"))
    return Fixture.of({
      port,
      allowed: `http://127.0.0.1:${port}`,
      denied: `http://127.0.0.2:${port}`,
      deniedHits: denied.hits,
      allowedHits: allowed.hits,
      context,
      wsEndpoint: browser.wsEndpoint
    })
  })
).pipe(Layer.provideMerge(Egress.Egress.layer({ privateNetworks: true, config: { deny: ["127.0.0.2"] }, resolve })))

const withPage = <A>(f: (page: Page, fx: Fixture["Service"]) => Promise<A>) =>
  Effect.gen(function* () {
    const fx = yield* Fixture
    return yield* Effect.acquireUseRelease(
      Effect.promise(() => fx.context.newPage()),
      (page) => Effect.promise(() => f(page, fx)),
      (page) => Effect.promise(() => page.close().catch(() => undefined))
    )
  })

/** Runs `f`, then returns the blocks recorded and the requests the denied server got meanwhile, once `settled`
 * holds for the blocks or the denied server was reached (both happen within a few milliseconds of the page). */
const blocksDuring = <A>(f: Effect.Effect<A, never, Fixture>, settled = (n: number) => n > 0) =>
  Effect.gen(function* () {
    const egress = yield* Egress.Egress
    const fx = yield* Fixture
    const mark = yield* egress.mark
    const before = fx.deniedHits.length
    const value = yield* f
    let blocks = yield* egress.since(mark)
    for (let i = 0; i < 100 && !settled(blocks.length) && fx.deniedHits.length === before; i++) {
      yield* Effect.sleep("50 millis")
      blocks = yield* egress.since(mark)
    }
    return { value, blocks, denied: fx.deniedHits.slice(before) }
  })

/** Sends `text` to the proxy as is and returns everything it answers until it closes. */
const raw = (proxyUrl: string, text: string) =>
  Effect.promise(
    () =>
      new Promise<string>((resolve) => {
        const { hostname, port } = new URL(proxyUrl)
        let answer = ""
        const socket = connect(Number(port), hostname, () => socket.end(text))
        socket.setEncoding("utf8")
        socket.on("data", (chunk: string) => (answer += chunk))
        socket.on("close", () => resolve(answer))
        socket.on("error", () => resolve(answer))
      })
  )

layer(fixture, { excludeTestServices: true, timeout: "60 seconds" })("Egress through a real Chromium", (it) => {
  it.effect("an allowed loopback app still works through the proxy, by name and by address", () =>
    Effect.gen(function* () {
      const { value: seen, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          const byName = await page.goto(`http://app.test:${fx.port}/hello`)
          const nameText = await page.textContent("#msg")
          const byAddress = await page.goto(`${fx.allowed}/hello`)
          return {
            byName: byName?.status(),
            nameText,
            byAddress: byAddress?.status(),
            text: await page.textContent("#msg")
          }
        }),
        () => true
      )
      const fx = yield* Fixture
      // app.test exists only in the proxy's resolver: the browser reached it through the proxy.
      assert.deepStrictEqual(seen, {
        byName: 200,
        nameText: "hello from the allowed app",
        byAddress: 200,
        text: "hello from the allowed app"
      })
      assert.isTrue(fx.allowedHits.includes("GET /hello"))
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("a blocked document answers 403 naming the rule, and the navigation is rejected_by_policy", () =>
    Effect.gen(function* () {
      const { value, blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          const answer = await page.goto(`${fx.denied}/direct?token=abc`)
          return {
            status: answer?.status(),
            header: answer?.headers()["x-switchyard-egress-rule"],
            body: await page.textContent("body"),
            url: page.url()
          }
        })
      )
      assert.strictEqual(value.status, 403)
      assert.strictEqual(value.header, deniedRule)
      assert.include(value.body, `rule ${deniedRule}`)
      // The document, and the favicon the browser asks for after it.
      assert.isTrue(blocks.every((b) => b.rule === deniedRule))
      assert.match(blocks[0]?.url ?? "", /\/direct\?token=\[redacted/)
      const rejected = Egress.rejection(blocks, { url: value.url })
      assert.strictEqual(rejected?.type, "rejected_by_policy")
      assert.include(rejected?.message, deniedRule)
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("an https or wss tunnel to a denied host is refused at CONNECT", () =>
    Effect.gen(function* () {
      const { value, blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          const error = await page.goto(`https://127.0.0.2:${fx.port}/`).then(
            () => "",
            (e: Error) => e.message
          )
          return { error, url: page.url() }
        })
      )
      assert.include(value.error, "ERR_TUNNEL_CONNECTION_FAILED")
      // The previous page's favicon may still be refused meanwhile: the tunnel is the block that matters.
      const tunnel = blocks.find((b) => b.via === "connect")
      assert.strictEqual(tunnel?.rule, deniedRule)
      // A failed navigation is rejected by the call's latest block.
      assert.include(Egress.rejection(blocks, { url: value.url, failed: true })?.message, deniedRule)
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("a redirect from the allowed host to the denied one stops at the proxy", () =>
    Effect.gen(function* () {
      const { value, blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          const answer = await page.goto(`${fx.allowed}/redirect`)
          return { status: answer?.status(), url: page.url(), body: await page.textContent("body") }
        })
      )
      const fx = yield* Fixture
      assert.strictEqual(value.status, 403)
      assert.include(value.body, deniedRule)
      assert.strictEqual(blocks[0]?.rule, deniedRule)
      // The block is recorded with query values redacted.
      assert.match(blocks[0]?.url ?? "", /\/target\?secret=\[redacted/)
      assert.include(Egress.rejection(blocks, { url: value.url })?.message, deniedRule)
      assert.isTrue(fx.allowedHits.includes("GET /redirect"))
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("a clicked link to the denied host stops at the proxy", () =>
    Effect.gen(function* () {
      const { value, blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          await page.goto(`${fx.allowed}/link`)
          await Promise.all([page.waitForURL(`${fx.denied}/link-target`), page.click("#go")])
          return { url: page.url(), body: await page.textContent("body") }
        })
      )
      assert.include(value.body, deniedRule)
      assert.strictEqual(blocks[0]?.rule, deniedRule)
      assert.isDefined(Egress.rejection(blocks, { url: value.url }))
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("an iframe of the denied host stops at the proxy", () =>
    Effect.gen(function* () {
      const { value, blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          await page.goto(`${fx.allowed}/frame`)
          const frame = page.frames().find((f) => f.url().includes("frame-target"))
          await frame?.waitForLoadState()
          return { pageUrl: page.url(), frameBody: await frame?.textContent("body") }
        })
      )
      assert.include(value.frameBody, deniedRule)
      assert.strictEqual(blocks[0]?.rule, deniedRule)
      // The page itself loaded: a blocked frame alone does not reject the navigation.
      assert.isUndefined(Egress.rejection(blocks, { url: value.pageUrl }))
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("a popup (window.open) of the denied host stops at the proxy", () =>
    Effect.gen(function* () {
      const { value, blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          await page.goto(`${fx.allowed}/popup`)
          const [popup] = await Promise.all([page.waitForEvent("popup"), page.click("#go")])
          await popup.waitForLoadState()
          const body = await popup.textContent("body")
          await popup.close()
          return { body }
        })
      )
      assert.include(value.body, deniedRule)
      assert.strictEqual(blocks[0]?.rule, deniedRule)
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("a form posted to the denied host stops at the proxy, body and all", () =>
    Effect.gen(function* () {
      const { value, blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          await page.goto(`${fx.allowed}/form`)
          await Promise.all([page.waitForURL(`${fx.denied}/form-target`), page.click("#go")])
          return { body: await page.textContent("body") }
        })
      )
      assert.include(value.body, deniedRule)
      assert.strictEqual(blocks[0]?.rule, deniedRule)
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("images, fetches and WebSockets to the denied host stop at the proxy", () =>
    Effect.gen(function* () {
      const { blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          await page.goto(`${fx.allowed}/subresources`)
        }),
        (n) => n >= 3
      )
      assert.deepStrictEqual(blocks.map((b) => `${b.via} ${b.rule}`).sort(), [
        "connect deny:127.0.0.2",
        "http deny:127.0.0.2",
        "http deny:127.0.0.2"
      ])
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("a name that rebinds from the allowed address to the denied one is caught at connect time", () =>
    Effect.gen(function* () {
      const { value, blocks, denied } = yield* blocksDuring(
        withPage(async (page, fx) => {
          const first = await page.goto(`http://rebind.test:${fx.port}/rebind`)
          const firstText = await page.textContent("#msg")
          await Promise.all([page.waitForURL(/rebind-again/), page.click("#go")])
          return { first: first?.status(), firstText, url: page.url(), body: await page.textContent("body") }
        })
      )
      const fx = yield* Fixture
      // The first lookup answered the allowed address and the page came from the allowed app.
      assert.strictEqual(value.first, 200)
      assert.strictEqual(value.firstText, "rebind page")
      assert.isTrue(fx.allowedHits.includes("GET /rebind"))
      // Later lookups answered the denied address: refused, whatever the name passed before.
      assert.isAtLeast(lookups.get("rebind.test") ?? 0, 2)
      assert.include(value.body, deniedRule)
      assert.isTrue(blocks.every((b) => b.host === "rebind.test" && b.rule === deniedRule))
      assert.isDefined(Egress.rejection(blocks, { url: value.url }))
      assert.deepStrictEqual(denied, [])
    })
  )

  it.effect("file: is refused in the browser itself, for a navigation the browser starts", () =>
    Effect.gen(function* () {
      const egress = yield* Egress.Egress
      const fx = yield* Fixture
      const secret = join(tmpdir(), `egress-secret-${process.pid}.txt`)
      writeFileSync(secret, "SECRET")
      const link = yield* CdpConnection.connect(fx.wsEndpoint)
      yield* egress.guardSchemes(link)
      const { value, blocks } = yield* blocksDuring(
        withPage(async (page) => {
          const error = await page.goto(`file://${secret}`).then(
            () => "",
            (e: Error) => e.message
          )
          return { error, url: page.url(), body: await page.content().catch(() => "") }
        })
      )
      assert.include(value.error, "ERR_BLOCKED_BY_CLIENT")
      assert.notInclude(value.body, "SECRET")
      assert.strictEqual(blocks[0]?.rule, "scheme:file")
      assert.include(Egress.rejection(blocks, { url: value.url, failed: true })?.message, "scheme:file")
    })
  )

  it.effect("the proxy refuses what is not a proxy request, and a metadata name before resolving it", () =>
    Effect.gen(function* () {
      const egress = yield* Egress.Egress
      const fx = yield* Fixture
      const mark = yield* egress.mark
      const before = fx.deniedHits.length
      const originForm = yield* raw(egress.proxyUrl, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert.match(originForm, /^HTTP\/1\.1 400 /)
      const https = yield* raw(egress.proxyUrl, "GET https://x/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert.match(https, /^HTTP\/1\.1 400 /)
      const noPort = yield* raw(egress.proxyUrl, "CONNECT example.test HTTP/1.1\r\nHost: example.test\r\n\r\n")
      assert.match(noPort, /^HTTP\/1\.1 400 /)
      const metadata = yield* raw(
        egress.proxyUrl,
        "CONNECT metadata.google.internal:80 HTTP/1.1\r\nHost: metadata.google.internal:80\r\n\r\n"
      )
      assert.match(metadata, /^HTTP\/1\.1 403 /)
      assert.include(metadata, "x-switchyard-egress-rule: class:metadata")
      assert.isUndefined(lookups.get("metadata.google.internal"))
      const unknown = yield* raw(egress.proxyUrl, "CONNECT nowhere.test:80 HTTP/1.1\r\nHost: nowhere.test:80\r\n\r\n")
      assert.match(unknown, /^HTTP\/1\.1 502 /)
      const blocks = yield* egress.since(mark)
      assert.deepStrictEqual(
        blocks.map((b) => [b.url, b.rule]),
        [["https://metadata.google.internal:80", "class:metadata"]]
      )
      assert.deepStrictEqual(fx.deniedHits.slice(before), [])
    })
  )
})
