/**
 * A page that was not reached is never reported as reached: the service as users run it (JSON-RPC, a real Chromium
 * behind the egress proxy) is asked for pages on 127.0.0.1 that refuse connections, a name that does not resolve
 * and a TLS server with a certificate nobody signed — by `browser.navigate`, by a click on a link and by a form's
 * submit button, on the model-free level and on a model's level (its navigate, and the model's click on a link).
 * Each answer is `navigation_failed` with what the network said; the proxy's own page is never taken for the site.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttp, request } from "node:http"
import { createServer as createHttps } from "node:https"
import { createServer as createNet } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Policy from "../../src/Egress/Policy.ts"
import * as EgressProxy from "../../src/Egress/Proxy.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

/** A port on 127.0.0.1 nothing listens on (taken, then freed). */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createNet()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

interface Site {
  readonly origin: string
  readonly tls: string
  readonly refused: number
  readonly close: () => Promise<void>
}

let site: Site

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-tls-"))
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1"
    ],
    { stdio: "ignore" }
  )
  const tls = createHttps(
    { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
    (_q, r) => r.end("the TLS site")
  )
  rmSync(dir, { recursive: true, force: true })
  await new Promise<void>((r) => tls.listen(0, "127.0.0.1", r))
  const tlsOrigin = `https://127.0.0.1:${(tls.address() as { port: number }).port}`
  const refused = await closedPort()
  const pages: Record<string, string> = {
    "/links": `<title>links</title><a id=http href="http://127.0.0.1:${refused}/job">the job</a>
      <a id=tunnel href="https://127.0.0.1:${refused}/job">the secure job</a>
      <a id=tls href="${tlsOrigin}/job">the TLS job</a>
      <img src="http://127.0.0.1:${refused}/logo.png">`,
    "/form": `<title>form</title><form method=post action="http://127.0.0.1:${refused}/apply"><input name=q value=x><button type=submit>Send</button></form>`
  }
  const http = createHttp((req, res) => {
    const body = pages[req.url ?? ""]
    res.writeHead(body ? 200 : 404, { "content-type": "text/html" }).end(body ?? "not found")
  })
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r))
  site = {
    origin: `http://127.0.0.1:${(http.address() as { port: number }).port}`,
    tls: tlsOrigin,
    refused,
    close: () =>
      new Promise<void>((done) => {
        tls.closeAllConnections()
        http.closeAllConnections()
        tls.close(() => http.close(() => done()))
      })
  }
})

afterAll(() => site.close())

type Answer = Record<string, unknown>
const errorOf = (answer: Answer) =>
  (answer.error as { data?: { type?: string; reason?: string; url?: string; message?: string; engine?: string } })?.data

describe("a page that was not reached", () => {
  it("browser.navigate answers navigation_failed with the network's cause: refused, not resolved, tunnel refused, TLS", async () => {
    const service = startService()
    const { refused } = site
    const cases: Array<[string, RegExp]> = [
      [`http://127.0.0.1:${refused}/job`, new RegExp(`^ECONNREFUSED 127\\.0\\.0\\.1:${refused}$`)],
      ["http://no-such-host.invalid/job", /^ENOTFOUND no-such-host\.invalid$/],
      [`https://127.0.0.1:${refused}/job`, new RegExp(`^ECONNREFUSED 127\\.0\\.0\\.1:${refused}$`)],
      [`${site.tls}/job`, /^ERR_CERT_AUTHORITY_INVALID$/]
    ]
    for (const [url, cause] of cases) {
      const answer = await service.call("browser.navigate", { session: "s", url })
      const error = errorOf(answer)
      assert.strictEqual(error?.type, "navigation_failed", `${url}: ${JSON.stringify(answer).slice(0, 800)}`)
      assert.match(error?.reason ?? "", cause, url)
      assert.include(error?.message ?? "", error?.reason ?? "-")
      // The URL asked for, not the proxy's tunnel or the browser's error page.
      assert.strictEqual(error?.url, url)
    }
    // The page that loads still loads, and says so.
    const ok = await service.call("browser.navigate", { session: "s", url: `${site.origin}/links` })
    assert.isUndefined(ok.error, JSON.stringify(ok.error))
  }, 120_000)

  it("a click on a link or a form's submit that goes nowhere fails navigation_failed; a missing image fails nothing", async () => {
    const service = startService()
    const click = async (page: string, selector: string) => {
      const opened = await service.call("browser.navigate", { session: "c", url: `${site.origin}${page}` })
      assert.isUndefined(opened.error, JSON.stringify(opened.error))
      return service.call("browser.act", {
        session: "c",
        action: { selector, method: "click", arguments: [], description: selector }
      })
    }
    const refused = new RegExp(`^ECONNREFUSED 127\\.0\\.0\\.1:${site.refused}$`)
    for (const [page, selector, cause] of [
      ["/links", "#http", refused],
      ["/links", "#tunnel", refused],
      ["/links", "#tls", /^ERR_CERT_AUTHORITY_INVALID$/],
      ["/form", "button", refused]
    ] as const) {
      const answer = await click(page, selector)
      const error = errorOf(answer)
      assert.strictEqual(error?.type, "navigation_failed", `${selector}: ${JSON.stringify(answer).slice(0, 800)}`)
      assert.match(error?.reason ?? "", cause, selector)
    }
    // The refused logo on /links did not fail its navigation.
    const read = await service.call("browser.extract", { session: "c", instruction: "text" })
    assert.isUndefined(read.error, JSON.stringify(read.error))
  }, 120_000)

  it.effect(
    "on a model's level too: the answer comes from Stagehand's level, not a fallback to the model-free one",
    () =>
      Effect.gen(function* () {
        const llm = yield* LlmServer.start(() => ({ json: LlmServer.chatCompletion(JSON.stringify({ elements: [] })) }))
        const service = startService({
          SWITCHYARD_MODEL: "openai/gpt-4.1-mini",
          OPENAI_API_KEY: "sk-test",
          OPENAI_BASE_URL: `${llm.origin}/v1`
        })
        const answer = yield* Effect.promise(() =>
          service.call("browser.navigate", { session: "m", url: `http://127.0.0.1:${site.refused}/job` })
        )
        const error = errorOf(answer)
        assert.strictEqual(error?.type, "navigation_failed", JSON.stringify(answer).slice(0, 800))
        assert.strictEqual(error?.reason, `ECONNREFUSED 127.0.0.1:${site.refused}`)
        assert.strictEqual(error?.engine, "stagehand", JSON.stringify(answer).slice(0, 800))
      }),
    120_000
  )

  it.effect(
    "a model's click on a link that goes nowhere fails navigation_failed from Stagehand's level, with the cause",
    () =>
      Effect.gen(function* () {
        // The model picks the link named "the job" from the page's outline; anything else it finds nothing in.
        const llm = yield* LlmServer.start((request) => {
          const properties = Object.keys(LlmServer.requestedSchema(request)?.properties ?? {})
          const reply = (value: unknown) => ({ json: LlmServer.chatCompletion(JSON.stringify(value)) })
          if (!(properties.includes("action") && properties.includes("twoStep"))) return reply({ elements: [] })
          const id = /\[(\d+-\d+)\] link: the job\b/.exec(LlmServer.promptText(request))?.[1]
          return reply({
            action: id === undefined ? null : { elementId: id, description: "the job", method: "click", arguments: [] },
            twoStep: false
          })
        })
        const service = startService({
          SWITCHYARD_MODEL: "openai/gpt-4.1-mini",
          OPENAI_API_KEY: "sk-test",
          OPENAI_BASE_URL: `${llm.origin}/v1`
        })
        const opened = yield* Effect.promise(() =>
          service.call("browser.navigate", { session: "ma", url: `${site.origin}/links` })
        )
        assert.isUndefined(opened.error, JSON.stringify(opened.error))
        const answer = yield* Effect.promise(() =>
          service.call("browser.act", { session: "ma", instruction: "open the job's page" })
        )
        const error = errorOf(answer)
        assert.strictEqual(error?.type, "navigation_failed", JSON.stringify(answer).slice(0, 800))
        assert.strictEqual(error?.reason, `ECONNREFUSED 127.0.0.1:${site.refused}`)
        assert.strictEqual(error?.engine, "stagehand", JSON.stringify(answer).slice(0, 800))
        // The link's own URL, not the proxy's page taken for it.
        assert.strictEqual(error?.url, `http://127.0.0.1:${site.refused}/job`)
      }),
    120_000
  )
})

describe("the egress proxy's own answer", () => {
  it.effect("a name that never resolves is a timeout the proxy names, on a page marked as its own", () =>
    Effect.gen(function* () {
      const missed: Array<EgressProxy.Unreached> = []
      const proxy = yield* EgressProxy.start({
        policy: Policy.make({}, { privateNetworks: true }),
        resolve: () => new Promise(() => {}),
        resolveTimeoutMs: 200,
        onBlock: () => {},
        onUnreached: (u) => missed.push(u)
      })
      const answer = yield* Effect.promise(
        () =>
          new Promise<{ status: number; marked: unknown; body: string }>((resolve, reject) => {
            const req = request(
              {
                host: "127.0.0.1",
                port: proxy.port,
                path: "http://slow.example/job",
                headers: { host: "slow.example" }
              },
              (res) => {
                let body = ""
                res.on("data", (c) => (body += String(c)))
                res.on("end", () =>
                  resolve({ status: res.statusCode ?? 0, marked: res.headers[EgressProxy.unreachedHeader], body })
                )
              }
            )
            req.on("error", reject)
            req.end()
          })
      )
      assert.strictEqual(answer.status, 504)
      assert.strictEqual(answer.marked, "ETIMEDOUT")
      assert.include(answer.body, "This page is the egress proxy's, not the site's")
      assert.strictEqual(missed.length, 1)
      assert.match(missed[0]!.cause, /^ETIMEDOUT resolving slow\.example/)
    }).pipe(Effect.scoped)
  )
})
