/**
 * A site's idle keep-alive connection closes on its side just as the next request goes out on it: many servers
 * close idle connections after a few seconds (Node's default is 5 s), and the close crosses the request in flight.
 * The site never read that request, and a browser sends it again on a new connection. Through the egress proxy the
 * page must arrive the same: a page asked for again (GET, HEAD) is fetched on a new connection, and a form's POST
 * never rides a connection that may be closing, so the site receives it once and answers it.
 *
 * The site here is a raw TCP server that answers the first request on each connection with keep-alive and resets
 * the connection on the second, as an idle close crossing the request does; it records what it received and served.
 */
import { createServer as createNet, type Socket } from "node:net"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startService, stopServices } from "../support/Service.ts"
import { loopbackProxy, viaProxy } from "../support/ViaProxy.ts"

afterEach(stopServices)

interface Seen {
  readonly method: string
  readonly path: string
  readonly connection: number
  readonly answered: boolean
}

/** The site's own record: every request it received, on which connection, and whether it answered it. */
const seen: Array<Seen> = []
let connections = 0
let site: ReturnType<typeof createNet>
let origin = ""
const sockets = new Set<Socket>()

// No favicon request: each navigation is the next request on the kept connection.
const page = (path: string) =>
  `<link rel=icon href="data:,"><title>${path.slice(1)}</title><h1 id=shown>${path.slice(1)}</h1>`

beforeAll(async () => {
  site = createNet((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => {})
    const connection = ++connections
    let served = 0
    let buffer = Buffer.alloc(0)
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n")
        if (end < 0) return
        const head = buffer.subarray(0, end).toString("latin1")
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0)
        if (buffer.length < end + 4 + length) return
        buffer = buffer.subarray(end + 4 + length)
        const [method = "", path = ""] = head.split("\r\n")[0]!.split(" ")
        const answered = served === 0
        seen.push({ method, path, connection, answered })
        // The connection's idle close crossed this request: the site never answers it.
        if (!answered) return socket.resetAndDestroy()
        served++
        const body = method === "HEAD" ? "" : page(path)
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${Buffer.byteLength(page(path))}\r\n` +
            `connection: keep-alive\r\nkeep-alive: timeout=5\r\n\r\n${body}`
        )
      }
    })
  })
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`
})

afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await new Promise<void>((resolve) => site.close(() => resolve()))
})

describe("a site's keep-alive connection that closes as the next request goes out", () => {
  it.effect("a GET and a HEAD are answered from a new connection, and the site served each once", () =>
    Effect.gen(function* () {
      const { port } = yield* loopbackProxy
      seen.length = 0
      assert.strictEqual((yield* Effect.promise(() => viaProxy(port, `${origin}/first`))).status, 200)
      const second = yield* Effect.promise(() => viaProxy(port, `${origin}/second`))
      assert.strictEqual(second.status, 200, second.body)
      assert.strictEqual(second.body, page("/second"))
      assert.strictEqual(
        (yield* Effect.promise(() => viaProxy(port, `${origin}/third`, { method: "HEAD" }))).status,
        200
      )
      const served = seen.filter((s) => s.answered).map((s) => s.path)
      assert.deepStrictEqual(served, ["/first", "/second", "/third"])
    }).pipe(Effect.scoped)
  )

  it.effect("a form's POST goes out on a connection of its own: the site receives it once and answers it", () =>
    Effect.gen(function* () {
      const { port } = yield* loopbackProxy
      seen.length = 0
      assert.strictEqual((yield* Effect.promise(() => viaProxy(port, `${origin}/job`))).status, 200)
      const posted = yield* Effect.promise(() =>
        viaProxy(port, `${origin}/apply`, { method: "POST", body: "name=Ada" })
      )
      assert.strictEqual(posted.status, 200, posted.body)
      const applies = seen.filter((s) => s.method === "POST")
      assert.deepStrictEqual(
        applies.map((s) => s.answered),
        [true],
        "the POST was received once, and answered"
      )
    }).pipe(Effect.scoped)
  )

  it("a page navigated to after another on the same site shows, through the service's browser", async () => {
    const service = startService()
    seen.length = 0
    for (const path of ["/one", "/two", "/three"]) {
      const answer = await service.call("browser.navigate", { session: "k", url: `${origin}${path}` })
      assert.isUndefined(answer.error, JSON.stringify(answer.error))
      const read = await service.call("browser.extract", { session: "k", instruction: "the heading's text" })
      assert.include(JSON.stringify(read.result), path.slice(1), JSON.stringify(read).slice(0, 600))
    }
  }, 90_000)
})
