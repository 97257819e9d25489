/**
 * Every route out of a real Chromium launched through the egress proxy, against servers the policy denies on
 * 127.0.0.2 (HTTP and raw TCP on one port, UDP on another) and a server denied by port on this machine's every
 * address (as the service's own port and the browser's DevTools port are): documents and their redirects, frames,
 * popups, form posts, every kind of subresource, workers, shared and service workers, WebSocket, beacons and pings,
 * prefetch, preload and speculation rules, WebRTC (STUN and TURN over UDP and TCP), WebTransport, DNS rebinding, and
 * every spelling of the denied address and of the unspecified one. The denied servers must receive nothing.
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { type BrowserContext, type Page, chromium as playwright } from "playwright-core"
import * as Egress from "../../src/Egress/Egress.ts"
import type { Block } from "../../src/Egress/Proxy.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"

interface Recorder {
  readonly server: Server
  /** `METHOD path` per request, `connection` per TCP connection (whether or not it was HTTP). */
  readonly hits: Array<string>
}

type Answer = readonly [status: number, type: string, body: string, headers?: Record<string, string>]

const listen = (host: string, port: number, answer: (path: string) => Answer) =>
  new Promise<Recorder>((resolve, reject) => {
    const hits: Array<string> = []
    const server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`)
      const [status, type, body, headers] = answer(req.url ?? "/")
      res.writeHead(status, { "content-type": type, ...headers }).end(body)
    })
    server.on("connection", () => hits.push("connection"))
    server.once("error", reject)
    server.listen({ port, host, ipv6Only: false }, () => resolve({ server, hits }))
  })

const closeServer = (recorder: Recorder) =>
  new Promise<void>((done) => {
    recorder.server.closeAllConnections()
    recorder.server.close(() => done())
  })

/** A UDP socket on 127.0.0.2 that counts every datagram (STUN binding requests, TURN allocations, QUIC). */
const udpRecorder = () =>
  new Promise<{ readonly socket: UdpSocket; readonly packets: Array<string> }>((resolve) => {
    const packets: Array<string> = []
    const socket = createSocket("udp4")
    socket.on("message", (message, from) => packets.push(`${from.address}:${from.port} ${message.length} bytes`))
    socket.bind(0, "127.0.0.2", () => resolve({ socket, packets }))
  })

const html = "text/html; charset=utf-8"
const js = "text/javascript"

/** What the allowed app serves; `D` is the denied origin, `U` the denied UDP port. */
const app = (D: string, U: number) => {
  const W = D.replace("http:", "ws:")
  const pages: Record<string, readonly [string, string]> = {
    "/hello": [html, "<title>hello</title><p id=msg>hello</p>"],
    "/link": [html, `<a id=go href="${D}/link">go</a>`],
    "/form": [html, `<form method=post action="${D}/form"><input name=q value=x><button id=go>send</button></form>`],
    "/popup": [html, `<button id=go onclick="window.open('${D}/popup')">open</button>`],
    "/iframe": [html, `<iframe src="${D}/iframe"></iframe>`],
    "/meta": [html, `<meta http-equiv=refresh content="0;url=${D}/meta">`],
    "/script-location": [html, `<script>location.href = "${D}/script-location"</script>`],
    "/img": [html, `<img src="${D}/img.png">`],
    "/script": [html, `<script src="${D}/script.js"></script>`],
    "/stylesheet": [html, `<link rel=stylesheet href="${D}/style.css">`],
    "/css-url": [html, `<div style="width:10px;height:10px;background:url('${D}/background.png')"></div>`],
    "/font": [
      html,
      `<style>@font-face { font-family: x; src: url("${D}/font.woff2") } p { font-family: x }</style><p>text</p>`
    ],
    "/media": [html, `<video src="${D}/video.mp4" autoplay muted></video>`],
    "/object": [html, `<object data="${D}/object"></object>`],
    "/fetch": [html, `<script>fetch("${D}/fetch", { mode: "no-cors" }).catch(() => {})</script>`],
    "/xhr": [html, `<script>const x = new XMLHttpRequest(); x.open("GET", "${D}/xhr"); x.send()</script>`],
    "/event-source": [html, `<script>new EventSource("${D}/event-source")</script>`],
    "/websocket": [html, `<script>new WebSocket("${W}/websocket")</script>`],
    "/worker": [html, `<script>new Worker("/worker.js")</script>`],
    "/worker.js": [
      js,
      `fetch("${D}/worker-fetch").catch(() => {}); try { importScripts("${D}/worker-import.js") } catch {}`
    ],
    "/shared-worker": [html, `<script>new SharedWorker("/shared-worker.js")</script>`],
    "/shared-worker.js": [js, `fetch("${D}/shared-worker-fetch").catch(() => {})`],
    "/service-worker": [html, `<script>navigator.serviceWorker.register("/service-worker.js")</script>`],
    "/service-worker.js": [
      js,
      `self.addEventListener("install", () => fetch("${D}/service-worker-fetch").catch(() => {}))`
    ],
    "/beacon": [html, `<script>navigator.sendBeacon("${D}/beacon", "payload")</script>`],
    "/ping": [html, `<a id=go ping="${D}/ping" href="/hello">go</a>`],
    "/prefetch": [html, `<link rel=prefetch href="${D}/prefetch">`],
    "/preload": [html, `<link rel=preload as=fetch crossorigin href="${D}/preload">`],
    "/preconnect": [html, `<link rel=preconnect href="${D}"><link rel=dns-prefetch href="${D}">`],
    "/speculation": [
      html,
      `<script type=speculationrules>{"prefetch": [{"source": "list", "urls": ["${D}/speculation-prefetch"]}],
        "prerender": [{"source": "list", "urls": ["${D}/speculation-prerender"]}]}</script>`
    ],
    "/webrtc": [
      html,
      `<script>
        window.candidates = []
        window.done = (async () => {
          const pc = new RTCPeerConnection({ iceServers: [
            { urls: "stun:127.0.0.2:${U}" },
            { urls: ["turn:127.0.0.2:${U}?transport=udp", "turn:${D.slice(7)}?transport=tcp"],
              username: "page-chosen-user", credential: "page-chosen-secret" }
          ] })
          pc.onicecandidate = (e) => { if (e.candidate) window.candidates.push(e.candidate.candidate) }
          pc.createDataChannel("x")
          await pc.setLocalDescription(await pc.createOffer())
          await new Promise((r) => { pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && r(); setTimeout(r, 6000) })
          return window.candidates
        })()
      </script>`
    ],
    "/webtransport": [
      html,
      `<script>window.done = (async () => {
        try { const t = new WebTransport("https://127.0.0.2:${U}/wt"); await Promise.race([t.ready, new Promise((r) => setTimeout(r, 3000))]) }
        catch (e) { return String(e) }
      })()</script>`
    ]
  }
  return pages
}

/** Names only this test's resolver knows: one rebinds to the denied host, one resolves to the unspecified address. */
const lookups = new Map<string, number>()
const resolve = async (host: string): Promise<ReadonlyArray<string>> => {
  const n = (lookups.get(host) ?? 0) + 1
  lookups.set(host, n)
  if (host === "rebind.test") return [n === 1 ? "127.0.0.1" : "127.0.0.2"]
  if (host === "zero.test") return ["0.0.0.0"]
  throw new Error(`ENOTFOUND ${host}`)
}

class Fixture extends Context.Service<
  Fixture,
  {
    readonly port: number
    readonly allowed: string
    readonly denied: string
    /** Everything the denied side received: HTTP and TCP on 127.0.0.2, UDP on 127.0.0.2, the port-denied server. */
    readonly received: () => ReadonlyArray<string>
    readonly localPort: number
    readonly devtoolsPort: number
    readonly context: BrowserContext
  }
>()("test/EgressRoutes") {}

const fixture = Layer.effect(
  Fixture,
  Effect.gen(function* () {
    const udp = yield* Effect.acquireRelease(Effect.promise(udpRecorder), ({ socket }) =>
      Effect.sync(() => socket.close())
    )
    const { port, denied } = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        for (let attempt = 0; ; attempt++) {
          const denied = await listen("127.0.0.2", 0, () => [200, html, "<p>denied server</p>"])
          const port = (denied.server.address() as AddressInfo).port
          const pages = app(`http://127.0.0.2:${port}`, udp.socket.address().port)
          const allowed = await listen("127.0.0.1", port, (path): Answer => {
            if (path === "/redirect") return [302, html, "", { location: `http://127.0.0.2:${port}/redirect-target` }]
            const page = pages[path.split("?")[0] ?? ""]
            return page === undefined ? [404, "text/plain", "not found"] : [200, page[0], page[1]]
          }).catch(async (error: unknown) => {
            await closeServer(denied)
            if (attempt >= 5) throw error
            return undefined
          })
          if (allowed !== undefined) return { port, denied, allowed }
        }
      }),
      ({ denied, allowed }) => Effect.promise(() => Promise.all([closeServer(denied), closeServer(allowed)]))
    )
    // A server on every address of this machine, refused by port as the service's own port is.
    const local = yield* Effect.acquireRelease(
      Effect.promise(() => listen("::", 0, () => [200, html, "<p>the local service</p>"])),
      (r) => Effect.promise(() => closeServer(r))
    )
    const localPort = (local.server.address() as AddressInfo).port
    const egress = yield* Egress.Egress
    yield* Effect.forEach([`127.0.0.0/8:${localPort}`, `[::1]:${localPort}`], egress.refuse)
    const browser = yield* LocalChromium.make({ egressProxy: egress.proxyUrl }).acquire
    // As the Sandbox does for every browser it starts: no page may reach the DevTools endpoint through the proxy.
    const devtoolsPort = Number(new URL(browser.httpEndpoint).port)
    yield* Effect.forEach([`127.0.0.0/8:${devtoolsPort}`, `[::1]:${devtoolsPort}`], egress.refuse)
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
      received: () => [
        ...denied.hits.map((h) => `tcp 127.0.0.2: ${h}`),
        ...udp.packets.map((p) => `udp 127.0.0.2: ${p}`),
        ...local.hits.map((h) => `port-denied server: ${h}`)
      ],
      localPort,
      devtoolsPort,
      context
    })
  })
).pipe(Layer.provideMerge(Egress.Egress.layer({ privateNetworks: true, config: { deny: ["127.0.0.2"] }, resolve })))

/**
 * Runs `f` on a fresh page, then waits until the proxy refused something matching `until` (at most 8 s); returns
 * what `f` returned, the refusals meanwhile and whatever reached the denied side.
 */
const attempt = <A>(
  f: (page: Page, fx: Fixture["Service"]) => Promise<A>,
  until: (blocks: ReadonlyArray<Block>) => boolean
) =>
  Effect.gen(function* () {
    const egress = yield* Egress.Egress
    const fx = yield* Fixture
    const mark = yield* egress.mark
    const before = fx.received().length
    const value = yield* Effect.acquireUseRelease(
      Effect.promise(() => fx.context.newPage()),
      (page) =>
        Effect.promise(async () => {
          const out = await f(page, fx)
          // Give the page's own requests (workers, beacons, prefetches) the time to be sent.
          for (let i = 0; i < 160 && !until(await Effect.runPromise(egress.since(mark))); i++)
            await new Promise((r) => setTimeout(r, 50))
          return out
        }),
      (page) => Effect.promise(() => page.close({ runBeforeUnload: false }).catch(() => undefined))
    )
    return { value, blocks: yield* egress.since(mark), reached: fx.received().slice(before) }
  })

const opened = (path: string) => (page: Page, fx: Fixture["Service"]) =>
  page.goto(`${fx.allowed}${path}`).then(
    () => undefined,
    () => undefined
  )

const clicked = (path: string) => async (page: Page, fx: Fixture["Service"]) => {
  await page.goto(`${fx.allowed}${path}`)
  await page.click("#go", { noWaitAfter: true }).catch(() => undefined)
}

/** A refusal of the denied host naming `path` (plain HTTP), or a refused tunnel to it (`path` undefined). */
const refusedAt =
  (path?: string) =>
  (blocks: ReadonlyArray<Block>): boolean =>
    blocks.some(
      (b) =>
        b.rule === "deny:127.0.0.2" &&
        (path === undefined ? b.via === "connect" : new URL(b.url).pathname.startsWith(path))
    )

/** Routes whose request Chromium sends (so the proxy sees and refuses it), by the path it asks for. */
const routes: ReadonlyArray<
  readonly [string, (page: Page, fx: Fixture["Service"]) => Promise<unknown>, string | undefined]
> = [
  ["a document", (page, fx) => page.goto(`${fx.denied}/document`).catch(() => undefined), "/document"],
  ["a redirect", opened("/redirect"), "/redirect-target"],
  ["a meta refresh", opened("/meta"), "/meta"],
  ["a script moving the page", opened("/script-location"), "/script-location"],
  ["a clicked link", clicked("/link"), "/link"],
  ["a form post", clicked("/form"), "/form"],
  ["a popup", clicked("/popup"), "/popup"],
  ["an iframe", opened("/iframe"), "/iframe"],
  ["an image", opened("/img"), "/img.png"],
  ["a script", opened("/script"), "/script.js"],
  ["a stylesheet", opened("/stylesheet"), "/style.css"],
  ["a CSS url()", opened("/css-url"), "/background.png"],
  ["a web font", opened("/font"), "/font.woff2"],
  ["a video", opened("/media"), "/video.mp4"],
  ["an object", opened("/object"), "/object"],
  ["fetch", opened("/fetch"), "/fetch"],
  ["XMLHttpRequest", opened("/xhr"), "/xhr"],
  ["EventSource", opened("/event-source"), "/event-source"],
  ["a WebSocket", opened("/websocket"), undefined],
  ["a dedicated worker's fetch", opened("/worker"), "/worker-fetch"],
  ["a dedicated worker's importScripts", opened("/worker"), "/worker-import.js"],
  ["a shared worker", opened("/shared-worker"), "/shared-worker-fetch"],
  ["a service worker", opened("/service-worker"), "/service-worker-fetch"],
  ["a beacon", opened("/beacon"), "/beacon"],
  ["a hyperlink ping", clicked("/ping"), "/ping"],
  ["a preload", opened("/preload"), "/preload"]
]

layer(fixture, { excludeTestServices: true, timeout: "120 seconds" })("every route out of the browser", (it) => {
  for (const [name, go, path] of routes) {
    it.effect(`${name} to the denied host is refused at the proxy; the host receives nothing`, () =>
      Effect.gen(function* () {
        const { blocks, reached } = yield* attempt(go, refusedAt(path))
        assert.deepStrictEqual(reached, [])
        assert.isTrue(
          refusedAt(path)(blocks),
          `the proxy saw no request for ${path ?? "a tunnel"}: ${JSON.stringify(blocks.map((b) => b.url))}`
        )
      })
    )
  }

  // Chromium may or may not send these (it decides by heuristics); whatever it sends goes through the proxy.
  for (const [name, path] of [
    ["a prefetch", "/prefetch"],
    ["a preconnect and a DNS prefetch", "/preconnect"],
    ["speculation rules (prefetch, prerender)", "/speculation"]
  ] as const) {
    it.effect(`${name} to the denied host reaches nothing`, () =>
      Effect.gen(function* () {
        const { blocks, reached } = yield* attempt(opened(path), (b) => b.length > 0)
        assert.deepStrictEqual(reached, [])
        assert.isTrue(
          blocks.every((b) => b.rule === "deny:127.0.0.2"),
          JSON.stringify(blocks)
        )
      })
    )
  }

  it.effect("WebRTC sends no STUN or TURN to the denied host, over UDP or TCP, and gathers no address", () =>
    Effect.gen(function* () {
      const { value, blocks, reached } = yield* attempt(
        async (page, fx) => {
          await page.goto(`${fx.allowed}/webrtc`)
          return (await page.evaluate("window.done")) as ReadonlyArray<string>
        },
        () => true
      )
      assert.deepStrictEqual(reached, [])
      // No host, server-reflexive or relayed UDP candidate: nothing left the browser beside the proxy.
      assert.deepStrictEqual(
        value.filter((c) => / udp /i.test(c)),
        []
      )
      // The only way WebRTC has out is TURN over TCP through the proxy, which refuses the denied host.
      assert.isTrue(
        blocks.every((b) => b.rule === "deny:127.0.0.2"),
        JSON.stringify(blocks)
      )
    })
  )

  it.effect("WebTransport (QUIC over UDP) sends nothing to the denied host", () =>
    Effect.gen(function* () {
      const { reached } = yield* attempt(
        async (page, fx) => {
          await page.goto(`${fx.allowed}/webtransport`)
          return page.evaluate("window.done")
        },
        () => true
      )
      assert.deepStrictEqual(reached, [])
    })
  )

  it.effect("every spelling of the denied address is refused", () =>
    Effect.gen(function* () {
      const fx = yield* Fixture
      const spellings = [
        "127.0.0.2",
        "2130706434",
        "0x7f000002",
        "0177.0.0.2",
        "0x7f.0.0.2",
        "127.2",
        "127.0.2",
        "127.0.0.2.",
        "[::ffff:127.0.0.2]",
        "[::ffff:7f00:2]",
        "[0:0:0:0:0:ffff:127.0.0.2]",
        "rebind.test"
      ]
      for (const host of spellings) {
        const { value, reached } = yield* attempt(
          async (page) => {
            // rebind.test resolves to the allowed app first, then to the denied host.
            if (host === "rebind.test") await page.goto(`http://${host}:${fx.port}/hello`)
            await page.goto(`http://${host}:${fx.port}/spelling`).catch(() => undefined)
            return page.content().catch(() => "")
          },
          (blocks) => blocks.length > 0
        )
        assert.deepStrictEqual(reached, [], host)
        assert.notInclude(value, "denied server", host)
      }
    })
  )

  it.effect("the unspecified address, in every spelling, is this machine: port rules and DevTools hold", () =>
    Effect.gen(function* () {
      const fx = yield* Fixture
      const spellings = [
        "0.0.0.0",
        "0",
        "0x0",
        "00",
        "0.0",
        "0.0.0",
        "[::]",
        "[::ffff:0.0.0.0]",
        "[::ffff:0:0]",
        "zero.test"
      ]
      for (const host of spellings) {
        for (const [port, path] of [
          [fx.localPort, "/"],
          [fx.devtoolsPort, "/json/version"],
          [fx.devtoolsPort, "/json/list"]
        ] as const) {
          const { value, blocks, reached } = yield* attempt(
            async (page) => {
              await page.goto(`http://${host}:${port}${path}`).catch(() => undefined)
              return page.content().catch(() => "")
            },
            (blocks) => blocks.length > 0
          )
          assert.deepStrictEqual(reached, [], `${host}:${port}`)
          assert.notInclude(value, "local service", `${host}:${port}`)
          assert.notInclude(value, "webSocketDebuggerUrl", `${host}:${port}${path}`)
          assert.isTrue(
            blocks.some((b) => b.rule.startsWith("deny:") && b.port === port),
            `${host}:${port}${path} was not refused: ${JSON.stringify(blocks)}`
          )
        }
      }
    })
  )
})
