/**
 * Pages that try to exhaust the browser, on the real service: one that reloads itself without end, one that opens
 * page after page, one that allocates memory without end. Each ends the call in a typed error, and the service and a
 * second session on the same service stay up and keep working.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type Service, startService, stopServices } from "../support/Service.ts"
import { type Sites, startSites } from "./Support.ts"

const pages = (): Record<string, string> => ({
  "/hello": "<title>hello</title><p>hello from the allowed app</p>",
  "/reload": "<title>reload</title><script>location.reload()</script>",
  // Chromium lets one popup through per click: a page that opens another of itself on every click (the session
  // follows the new tab), as ad-laden pages do.
  "/popups": `<title>popups</title><button onclick="window.open('/popups?' + Math.random())">Open</button>`,
  "/memory": `<title>memory</title><p>growing</p><script>
      const kept = []
      for (;;) kept.push(new Array(1e6).fill(kept.length + 0.5))
    </script>`
})

interface Answer {
  readonly ok: boolean
  readonly error?: { readonly type: string; readonly message: string; readonly limit?: string }
  readonly result?: unknown
}

describe("hostile pages", () => {
  let service: Service
  let sites: Sites

  const call = async (session: string, tool: string, args: Record<string, unknown> = {}): Promise<Answer> => {
    const reply = await service.call(tool, { ...args, session })
    if (reply.error !== undefined) {
      const { data, message } = reply.error as { message: string; data?: Answer["error"] }
      return { ok: false, error: data ?? { type: "rpc", message } }
    }
    return { ok: true, result: (reply.result as { result: unknown }).result }
  }

  /** The other session works: it opens a page and reads it. */
  const bystanderWorks = async () => {
    const opened = await call("bystander", "browser.navigate", { url: sites.allowedUrl("/hello") })
    assert.isTrue(opened.ok, JSON.stringify(opened.error))
  }

  beforeAll(async () => {
    sites = await startSites(pages)
    service = startService({ SWITCHYARD_MAX_PAGES: "10" })
    await bystanderWorks()
  })
  afterAll(async () => {
    for (const session of ["hostile", "bystander"]) await service.call("browserClose", { session }).catch(() => {})
    service.child.stdin.end()
    await Promise.race([service.exited, new Promise((r) => setTimeout(r, 10_000))])
    await stopServices()
    await sites.close()
  })

  it("a page that reloads itself without end stops the call with limit_exceeded", { timeout: 90_000 }, async () => {
    // The navigate may answer on one of the loop's loads before it counts them all: then the next call is stopped.
    const opened = await call("hostile", "browser.navigate", { url: sites.allowedUrl("/reload") })
    const answer = opened.ok
      ? await new Promise((resolve) => setTimeout(resolve, 1_000)).then(() =>
          call("hostile", "browser.extract", { instruction: "the page" })
        )
      : opened
    // Stopped by a call (limit_exceeded), or, when the count ran out just as the navigate answered, left already.
    const left = answer.ok && (answer.result as { url?: string }).url === "about:blank"
    if (!left) {
      assert.strictEqual(answer.error?.type, "limit_exceeded", JSON.stringify([opened, answer]))
      assert.match(answer.error?.message ?? "", /loaded more than|keeps loading/)
    }
    // The loop was left: the session works again at once.
    const next = await call("hostile", "browser.navigate", { url: sites.allowedUrl("/hello") })
    assert.isTrue(next.ok, JSON.stringify(next.error))
    await bystanderWorks()
  })

  it("an agent that opens pages quickly, one call after another, is no loop", { timeout: 90_000 }, async () => {
    for (let i = 0; i < 45; i++) {
      const opened = await call("busy", "browser.navigate", { url: sites.allowedUrl(`/hello?${i}`) })
      assert.isTrue(opened.ok, `navigate ${i}: ${JSON.stringify(opened.error)}`)
    }
    await service.call("browser.close", { session: "busy" })
  })

  it("a page that opens page after page has the extra ones closed and the call ends", { timeout: 90_000 }, async () => {
    assert.isTrue((await call("hostile", "browser.navigate", { url: sites.allowedUrl("/popups") })).ok)
    const answers: Array<Answer> = []
    for (let i = 0; i < 15 && !answers.some((a) => !a.ok); i++)
      answers.push(await call("hostile", "browser.act", { instruction: 'click "Open"' }))
    const failed = answers.find((a) => !a.ok)
    assert.strictEqual(failed?.error?.type, "limit_exceeded", JSON.stringify(answers.at(-1)))
    assert.include(failed?.error?.message, "more than 10 pages")
    // The session's own page still answers, and so does the other session.
    assert.isTrue((await call("hostile", "browser.extract", { instruction: "the page text" })).ok)
    await bystanderWorks()
  })

  it("a page that allocates without end ends in a typed error; the session and the service go on", {
    timeout: 90_000
  }, async () => {
    // The page's renderer runs out of its heap while the page loads: that page crashes, not the browser.
    const failed = await call("hostile", "browser.navigate", { url: sites.allowedUrl("/memory") })
    assert.isFalse(failed.ok)
    assert.include(["cdp_closed", "navigation_failed", "timeout"], failed.error?.type, JSON.stringify(failed.error))
    await bystanderWorks()
    // The service answers on that session (its engine may be resting after the crashes) and a new session works.
    assert.isTrue((await call("hostile", "browser.status")).ok)
    const fresh = await call("newcomer", "browser.navigate", { url: sites.allowedUrl("/hello") })
    assert.isTrue(fresh.ok, JSON.stringify(fresh.error))
    await service.call("browserClose", { session: "newcomer" })
  })
})
