/**
 * browser.console, browser.network, browser.evaluate, browser.pdf and browser.resize through the real service
 * (JSON-RPC), on pages that record what happened: what the page logged and fetched comes back with its source and
 * status, redacted as the logs are; the agent's script runs in the page (only when the operator turned it on); the
 * PDF is Chromium's; the page itself reports the viewport and user agent it was given.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as RecordingSite from "../fixtures/RecordingSite.ts"
import { type Service, startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const noisy = `<!doctype html><title>Noisy</title>
<button onclick="console.warn('clicked', { step: 2 })">Again</button>
<script>
  console.log("hello", 42, [1, 2])
  console.error("write to ada@example.com")
  setTimeout(() => { throw new Error("boom") }, 10)
  fetch("/api/data?token=abc123").then((r) => r.json()).then((j) => console.info("got", j.ok))
  fetch("/missing.js")
</script>`

const sized = `<!doctype html><title>Sized</title>
<iframe title="Widget" srcdoc="<title>Inner</title><p id=w>widget</p>"></iframe>
<script>
  const report = () => fetch("/api/size", { method: "POST", body: JSON.stringify({ w: innerWidth, h: innerHeight, dpr: devicePixelRatio, touch: navigator.maxTouchPoints > 0 }) })
  addEventListener("resize", report)
</script>`

const pages: Record<string, string | RecordingSite.Handler> = {
  "/noisy": noisy,
  "/sized": sized,
  "/api/size": "{}",
  "/api/ping": "{}",
  "/api/data": (_req, res) =>
    res.writeHead(200, { "content-type": "application/json", "set-cookie": "sid=s3cret-value" }).end('{"ok":true}')
}

type Answer = Record<string, unknown>
const call = <A = Record<string, unknown>>(service: Service, method: string, params: Record<string, unknown>) =>
  Effect.promise(() => service.call(method, params)).pipe(
    Effect.map((answer: Answer) => {
      const result = (answer.result as { result: A } | undefined)?.result
      if (result === undefined) throw new Error(`${method} failed: ${JSON.stringify(answer).slice(0, 1_500)}`)
      return result
    })
  )
const failing = (service: Service, method: string, params: Record<string, unknown>) =>
  Effect.promise(() => service.call(method, params)).pipe(
    Effect.map((answer: Answer) => {
      const error = (answer.error as { data?: Record<string, unknown> } | undefined)?.data
      if (error === undefined) throw new Error(`${method} did not fail: ${JSON.stringify(answer).slice(0, 1_500)}`)
      return error as { type: string; message: string; state: { tools?: { masked: Record<string, string> } } }
    })
  )

interface Message {
  readonly seq: number
  readonly level: string
  readonly kind: string
  readonly text: string
  readonly source?: string
}
interface Request {
  readonly seq: number
  readonly url: string
  readonly status?: number
  readonly type: string
}

describe("console and network", () => {
  it.live(
    "what the page logged, threw and fetched, with where it came from, newest last, redacted",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const service = startService()
        yield* call(service, "browser.navigate", { url: site.url("/noisy") })
        yield* call(service, "browser.wait_for", { timeMs: 300 })
        const logged = yield* call<{ messages: ReadonlyArray<Message>; last: number }>(service, "browser.console", {})
        const texts = logged.messages.map((m) => m.text)
        assert.include(texts, "hello 42 [1, 2]")
        assert.include(texts, "write to [redacted:email]", "an address the page logged is redacted")
        const thrown = logged.messages.find((m) => m.kind === "error")
        assert.include(thrown?.text, "Error: boom")
        assert.match(thrown?.source ?? "", /\/noisy:\d+:\d+$/)
        assert.isDefined(logged.messages.find((m) => m.kind === "browser" && m.text.includes("404")))
        const hello = logged.messages.find((m) => m.text.startsWith("hello"))
        assert.match(hello?.source ?? "", /\/noisy:4:\d+$/, "the line that wrote it")

        const errors = yield* call<{ messages: ReadonlyArray<Message> }>(service, "browser.console", { level: "error" })
        assert.isTrue(errors.messages.length >= 2 && errors.messages.every((m) => m.level === "error"))

        // Only what came after: one click, one message.
        yield* call(service, "browser.act", { instruction: 'click "Again"' })
        const since = yield* call<{ messages: ReadonlyArray<Message> }>(service, "browser.console", {
          since: logged.last
        })
        assert.deepStrictEqual(
          since.messages.map((m) => [m.level, m.text]),
          [["warning", "clicked {step: 2}"]]
        )

        const listed = yield* call<{ requests: ReadonlyArray<Request> }>(service, "browser.network", {})
        const data = listed.requests.find((r) => r.url.includes("/api/data"))
        assert.strictEqual(data?.status, 200)
        assert.include(data?.url, "token=[redacted:query]")
        assert.notInclude(JSON.stringify(listed), "abc123")
        assert.strictEqual(site.to("/api/data")[0]?.url, "/api/data?token=abc123", "the page did send the token")
        assert.strictEqual(listed.requests.find((r) => r.url.endsWith("/missing.js"))?.status, 404)
        const details = yield* call<{ request: Record<string, unknown> }>(service, "browser.network", {
          id: data!.seq
        })
        assert.strictEqual(details.request.responseBody, '{"ok":true}')
        assert.notInclude(JSON.stringify(details), "s3cret-value", "the cookie the site set is redacted")
        const filtered = yield* call<{ requests: ReadonlyArray<Request> }>(service, "browser.network", {
          filter: "/api/"
        })
        assert.deepStrictEqual(
          filtered.requests.map((r) => new URL(r.url).pathname),
          ["/api/data"]
        )

        // Another page: by default its own record alone; since 0, all the session kept.
        yield* call(service, "browser.navigate", { url: site.url("/sized") })
        const fresh = yield* call<{ messages: ReadonlyArray<Message> }>(service, "browser.console", {})
        assert.deepStrictEqual(fresh.messages, [])
        const kept = yield* call<{ messages: ReadonlyArray<Message> }>(service, "browser.console", { since: 0 })
        assert.isDefined(kept.messages.find((m) => m.text.startsWith("hello")))
        const loaded = yield* call<{ requests: ReadonlyArray<Request> }>(service, "browser.network", {})
        assert.deepStrictEqual(
          loaded.requests.map((r) => new URL(r.url).pathname),
          ["/sized"]
        )
      }),
    120_000
  )
})

describe("browser.evaluate", () => {
  it.live(
    "is masked and refused with the setting that turns it on; when on, runs in the page or a frame, redacted",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const off = startService()
        const first = yield* Effect.promise(() => off.call("browser.navigate", { url: site.url("/sized") }))
        const masked = (first.result as { state: { tools: { masked: Record<string, string> } } }).state.tools.masked
        assert.include(masked["browser.evaluate"], "SWITCHYARD_EVALUATE=on")
        const refused = yield* failing(off, "browser.evaluate", {
          expression: "fetch('/api/ping', { method: 'POST' })"
        })
        assert.strictEqual(refused.type, "rejected_by_policy")
        assert.include(refused.message, "SWITCHYARD_EVALUATE=on")
        assert.lengthOf(site.to("/api/ping"), 0, "nothing ran")
        yield* Effect.promise(() => stopServices())

        const on = startService({ SWITCHYARD_EVALUATE: "on" })
        yield* call(on, "browser.navigate", { url: site.url("/sized") })
        const title = yield* call<{ value: unknown }>(on, "browser.evaluate", { expression: "document.title" })
        assert.strictEqual(title.value, "Sized")
        const posted = yield* call<{ value: unknown }>(on, "browser.evaluate", {
          expression: "async () => (await fetch('/api/ping', { method: 'POST', body: 'from the agent' })).status"
        })
        assert.strictEqual(posted.value, 200)
        assert.strictEqual(site.to("/api/ping")[0]?.body, "from the agent")
        const secret = yield* call<{ value: unknown }>(on, "browser.evaluate", {
          expression: "({ owner: 'ada@example.com', n: 3 })"
        })
        assert.deepStrictEqual(secret.value, { owner: "[redacted:email]", n: 3 })
        const inner = yield* call<{ value: unknown; frame?: string }>(on, "browser.evaluate", {
          expression: "document.getElementById('w').textContent",
          frame: "Widget"
        })
        assert.strictEqual(inner.value, "widget")
        const thrown = yield* failing(on, "browser.evaluate", { expression: "throw new Error('nope')" })
        assert.strictEqual(thrown.type, "action_failed")
        assert.include(thrown.message, "nope")
      }),
    120_000
  )
})

describe("browser.pdf and browser.resize", () => {
  it.live(
    "Chromium's PDF of the page; the page reports the viewport and the device it was given",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const service = startService()
        yield* call(service, "browser.navigate", { url: site.url("/sized") })
        const pdf = yield* call<{ mimeType: string; bytes: number; pages: number; data: string }>(
          service,
          "browser.pdf",
          { paper: "a4" }
        )
        const bytes = Buffer.from(pdf.data, "base64")
        assert.strictEqual(bytes.subarray(0, 5).toString(), "%PDF-")
        assert.strictEqual(bytes.length, pdf.bytes)
        assert.strictEqual(pdf.pages, 1)

        const resized = yield* call<{ width: number; height: number }>(service, "browser.resize", {
          width: 640,
          height: 480
        })
        assert.deepInclude(resized, { width: 640, height: 480 })
        // The page reports its size by a request of its own, which may reach the site a moment after the answer.
        const seen = (want: Record<string, unknown>) =>
          Effect.gen(function* () {
            const last = () => JSON.parse(site.to("/api/size").at(-1)?.body ?? "{}") as Record<string, unknown>
            for (let i = 0; i < 100 && !Object.entries(want).every(([k, v]) => last()[k] === v); i++) {
              yield* Effect.sleep("50 millis")
            }
            return last()
          })
        assert.deepInclude(yield* seen({ w: 640, h: 480 }), { w: 640, h: 480 })

        const phone = yield* call<{ device?: string; mobile: boolean; touch: boolean }>(service, "browser.resize", {
          device: "iPhone 15"
        })
        assert.deepInclude(phone, { device: "iPhone 15", mobile: true, touch: true })
        assert.deepInclude(yield* seen({ dpr: 3, touch: true }), { dpr: 3, touch: true })
        yield* call(service, "browser.navigate", { url: site.url("/sized") })
        assert.include(site.to("/sized").at(-1)?.userAgent, "iPhone", "the site is told it is a phone")

        const unknown = yield* failing(service, "browser.resize", { device: "Nokia 3310" })
        assert.strictEqual(unknown.type, "invalid_input")
        yield* call(service, "browser.resize", { device: "desktop" })
        yield* call(service, "browser.navigate", { url: site.url("/sized") })
        assert.notInclude(site.to("/sized").at(-1)?.userAgent, "iPhone")
      }),
    120_000
  )
})
