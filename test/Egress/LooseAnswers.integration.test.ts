/**
 * Answers a browser reads though they bend HTTP/1.1: old and embedded servers (printers, routers, intranet apps) end
 * lines with a bare LF, fold long headers onto a second line, put a control character in a header's value, or send a
 * Content-Length beside a chunked body. Chromium loads each of these pages; through the egress proxy they must load
 * too (the body framed as the browser frames it), and never be reported as not reached. The site is a raw TCP
 * server writing each answer byte for byte.
 */
import { createServer as createNet } from "node:net"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startService, stopServices } from "../support/Service.ts"
import { loopbackProxy, viaProxy } from "../support/ViaProxy.ts"

afterEach(stopServices)

const body = "<title>loaded</title><h1>the device's page</h1>"
const answers: Record<string, string> = {
  "bare-lf": `HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Length: ${body.length}\n\n${body}`,
  folded: `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Note: a long\r\n value\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  "control-char": `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Odd: a\x01b\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  // The length is wrong; the chunks are what frame the body.
  "chunked-with-length": `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${body.length + 7}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
}

const site = createNet((socket) => {
  socket.on("error", () => {})
  socket.once("data", (chunk) => {
    const target = chunk.toString("latin1").split(" ")[1] ?? ""
    const name = new URL(target, "http://site").pathname.slice(1)
    socket.end(answers[name] ?? "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
  })
})
let origin = ""

beforeAll(async () => {
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`
})

afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())))

describe("answers a browser reads though they bend HTTP/1.1, through the egress proxy", () => {
  it.effect("each arrives with the site's status and body, framed as the browser frames it", () =>
    Effect.gen(function* () {
      const proxy = yield* loopbackProxy
      for (const name of Object.keys(answers)) {
        const answer = yield* Effect.promise(() => viaProxy(proxy.port, `${origin}/${name}`))
        assert.deepStrictEqual({ status: answer.status, body: answer.body }, { status: 200, body }, name)
      }
    }).pipe(Effect.scoped)
  )

  it("the service's browser shows each page, and the service keeps answering", async () => {
    const service = startService()
    for (const name of Object.keys(answers)) {
      const opened = await service.call("browser.navigate", { session: "l", url: `${origin}/${name}` })
      assert.isUndefined(opened.error, `${name}: ${JSON.stringify(opened.error)}`)
      const read = await service.call("browser.extract", { session: "l", instruction: "the heading's text" })
      assert.include(JSON.stringify(read.result), "the device's page", `${name}: ${JSON.stringify(read).slice(0, 600)}`)
    }
  }, 90_000)
})
