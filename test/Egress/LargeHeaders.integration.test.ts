/**
 * Headers as large as a browser takes: Chromium accepts up to 256 KiB of response headers and sends every cookie it
 * holds for a site, and sites with single sign-on or many trackers send and receive cookies past Node's 16 KiB default.
 * Through the egress proxy such a page must load as it would without it: the site's answer arrives whole, the
 * browser's cookies reach the site, and the page shows what the site sent.
 */
import { createServer } from "node:http"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startService, stopServices } from "../support/Service.ts"
import { loopbackProxy, viaProxy } from "../support/ViaProxy.ts"

afterEach(stopServices)

/** 40 cookies of 1,000 characters: about 40 KiB, as a site that sets many session and tracking cookies does. */
const cookies = Array.from({ length: 40 }, (_, i) => `c${i}=${String(i % 10).repeat(1_000)}`)

/** What the site received: the size of each request's Cookie header, by path. */
const received: Array<{ readonly path: string; readonly cookieBytes: number }> = []
const site = createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
  const cookieBytes = Buffer.byteLength(req.headers.cookie ?? "")
  received.push({ path: req.url ?? "", cookieBytes })
  if (req.url === "/login") {
    res.writeHead(200, { "content-type": "text/html", "set-cookie": cookies.map((c) => `${c}; Path=/`) })
    return res.end("<title>signed in</title><h1>signed in</h1>")
  }
  res.writeHead(200, { "content-type": "text/html" })
  res.end(`<title>account</title><h1 id=seen>cookie bytes ${cookieBytes}</h1>`)
})
let origin = ""

beforeAll(async () => {
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`
})

afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())))

describe("headers as large as a browser takes, through the egress proxy", () => {
  it.effect("a site's 40 KiB of Set-Cookie arrives whole, and 40 KiB of Cookie reaches the site", () =>
    Effect.gen(function* () {
      const { port } = yield* loopbackProxy
      received.length = 0
      const login = yield* Effect.promise(() => viaProxy(port, `${origin}/login`))
      assert.strictEqual(login.status, 200, login.body)
      assert.strictEqual(login.headers["set-cookie"]?.length, cookies.length)
      const account = yield* Effect.promise(() =>
        viaProxy(port, `${origin}/account`, { headers: { cookie: cookies.join("; ") } })
      )
      assert.strictEqual(account.status, 200, account.body)
      assert.deepStrictEqual(received.at(-1), { path: "/account", cookieBytes: Buffer.byteLength(cookies.join("; ")) })
    }).pipe(Effect.scoped)
  )

  it("the service's browser signs in and the next page is sent every cookie: the page shows what the site received", async () => {
    const service = startService()
    received.length = 0
    const login = await service.call("browser.navigate", { session: "h", url: `${origin}/login` })
    assert.isUndefined(login.error, JSON.stringify(login.error))
    const account = await service.call("browser.navigate", { session: "h", url: `${origin}/account` })
    assert.isUndefined(account.error, JSON.stringify(account.error))
    const expected = Buffer.byteLength(cookies.join("; "))
    assert.deepStrictEqual(
      received.filter((r) => r.path === "/account"),
      [{ path: "/account", cookieBytes: expected }]
    )
    const read = await service.call("browser.extract", { session: "h", instruction: "the heading's text" })
    assert.include(JSON.stringify(read.result), `cookie bytes ${expected}`, JSON.stringify(read).slice(0, 600))
  }, 90_000)
})
