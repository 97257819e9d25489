/**
 * The egress policy on the real service (`serve --jsonrpc`, real Chromium): an injected page that reaches for a host
 * the policy denies — by redirect, a link the agent clicks, a frame, a popup, a form post — gets the request refused
 * before it leaves the machine, and the agent's answer and the attempt log say `rejected_by_policy` with the rule.
 * The denied host is a second server on 127.0.0.2 (`SWITCHYARD_EGRESS_DENY=127.0.0.2`): it must receive nothing.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type Service, startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"
import { attemptLines, type Sites, startSites } from "./Support.ts"

const rule = "deny:127.0.0.2"

const pages = (denied: string): Record<string, string> => ({
  "/hello": "<title>hello</title><p id=msg>hello from the allowed app</p>",
  "/link": `<title>link</title><a href="${denied}/link-target">Continue</a>`,
  "/frame": `<title>frame</title><p>a page with a frame</p><iframe src="${denied}/frame-target"></iframe>`,
  "/popup": `<title>popup</title><button onclick="window.open('${denied}/popup-target')">Open</button>`,
  "/form": `<title>form</title><form method=post action="${denied}/form-target">
      <input name=q value=payload><button>Send</button></form>`,
  "/script": `<title>script</title><p>moves on by itself</p><script>location.href = "${denied}/script-target"</script>`
})

interface Answer {
  readonly ok: boolean
  readonly error?: { readonly type: string; readonly message: string }
  readonly state: Record<string, unknown>
}

describe("egress policy on the service", () => {
  let service: Service
  let sites: Sites
  const logDir = mkdtempSync(join(tmpdir(), "switchyard-security-logs-"))

  const call = async (tool: string, args: Record<string, unknown>): Promise<Answer> => {
    const reply = await service.call(tool, args)
    if (reply.error !== undefined) {
      const { data } = reply.error as { data?: { type: string; message: string; state?: Record<string, unknown> } }
      return { ok: false, ...(data ? { error: data } : {}), state: data?.state ?? {} }
    }
    const { state } = reply.result as { state: Record<string, unknown> }
    return { ok: true, state }
  }

  const rejected = (answer: Answer) => {
    assert.isFalse(answer.ok, JSON.stringify(answer))
    assert.strictEqual(answer.error?.type, "rejected_by_policy")
    assert.include(answer.error?.message, `rule ${rule}`)
  }

  beforeAll(async () => {
    sites = await startSites(pages)
    service = startService({ SWITCHYARD_EGRESS_DENY: "127.0.0.2", SWITCHYARD_LOG_DIR: logDir })
  })
  afterAll(async () => {
    await service.call("browserClose", {}).catch(() => undefined)
    service.child.stdin.end()
    await Promise.race([service.exited, new Promise((r) => setTimeout(r, 10_000))])
    await stopServices()
    await sites.close()
    // Whatever each test did, the denied server never saw a connection.
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("an allowed loopback app still opens", { timeout: 60_000 }, async () => {
    const answer = await call("browser.navigate", { url: sites.allowedUrl("/hello") })
    assert.isTrue(answer.ok, JSON.stringify(answer))
    assert.include(sites.allowed.hits, "GET /hello")
  })

  it("navigating to the denied host is refused before the browser goes", { timeout: 60_000 }, async () => {
    rejected(await call("browser.navigate", { url: sites.deniedUrl("/direct") }))
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("a redirect from the allowed app to the denied host stops at the proxy", { timeout: 60_000 }, async () => {
    rejected(await call("browser.navigate", { url: sites.allowedUrl("/redirect") }))
    assert.include(sites.allowed.hits, "GET /redirect")
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("a link the agent clicks to the denied host is refused", { timeout: 60_000 }, async () => {
    assert.isTrue((await call("browser.navigate", { url: sites.allowedUrl("/link") })).ok)
    rejected(await call("browser.act", { instruction: 'click "Continue"' }))
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("a frame of the denied host loads nothing from it, the page itself still opens", { timeout: 60_000 }, async () => {
    const answer = await call("browser.navigate", { url: sites.allowedUrl("/frame") })
    assert.isTrue(answer.ok, JSON.stringify(answer))
    const text = await call("browser.extract", { instruction: "the page text" })
    assert.isTrue(text.ok)
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("a popup (window.open) of the denied host is refused", { timeout: 60_000 }, async () => {
    assert.isTrue((await call("browser.navigate", { url: sites.allowedUrl("/popup") })).ok)
    rejected(await call("browser.act", { instruction: 'click "Open"' }))
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("a form posted to the denied host is refused, its body never sent", { timeout: 60_000 }, async () => {
    assert.isTrue((await call("browser.navigate", { url: sites.allowedUrl("/form") })).ok)
    rejected(await call("browser.act", { instruction: 'click "Send"' }))
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("a page that moves itself to the denied host is refused", { timeout: 60_000 }, async () => {
    rejected(await call("browser.navigate", { url: sites.allowedUrl("/script") }))
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("a page cannot reach the browser's own DevTools endpoint", { timeout: 60_000 }, async () => {
    const status = await service.call("browser.status", {})
    const { wsEndpoint } = (status.result as { result: { wsEndpoint: string } }).result
    const port = new URL(wsEndpoint).port
    const answer = await call("browser.navigate", { url: `http://127.0.0.1:${port}/json/version` })
    assert.isFalse(answer.ok)
    assert.strictEqual(answer.error?.type, "rejected_by_policy")
    assert.include(answer.error?.message, `deny:127.0.0.0/8:${port}`)
  })

  it("the attempt log records each refusal as rejected_by_policy naming the rule", { timeout: 30_000 }, async () => {
    const refusals = () =>
      attemptLines(logDir).filter((l) => l.event === "failure" && l.errorType === "rejected_by_policy")
    // The log is written in the background: wait for the five calls' lines.
    await waitFor(() => refusals().length >= 5, 10_000)
    const failures = refusals()
    // The redirect, the link, the popup, the form and the page that moved itself.
    assert.isAtLeast(failures.length, 5)
    for (const line of failures) assert.include(line.reason, `rule ${rule}`)
  })
})
