/**
 * Browsers started ahead on the real service (`SWITCHYARD_WARM_BROWSERS=1`): a session that takes one is held to its
 * egress policy like a session whose browser was launched for it (the denied host on 127.0.0.2 receives nothing), a
 * killed browser is replaced by the warm one at the last URL, and nothing one session left in its browser (cookies,
 * storage, history) reaches the next session's warm browser.
 */
import { chmodSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { processesMatching } from "../support/Processes.ts"
import { type Service, startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"
import { type Sites, startSites } from "./Support.ts"

const pages = (denied: string): Record<string, string> => ({
  "/remember": `<title>remember</title><script>
      document.cookie = "who=first; max-age=3600"; localStorage.setItem("who", "first"); sessionStorage.setItem("who", "first")
    </script><p>remembered</p>`,
  // What the page finds of an earlier visit, reported back to the app as a request it records.
  "/recall": `<title>recall</title><script>
      fetch("/seen?" + new URLSearchParams({ cookie: document.cookie, local: String(localStorage.getItem("who")),
        history: String(history.length) }))
    </script><p>recalled</p>`,
  "/frame": `<title>frame</title><iframe src="${denied}/frame-target"></iframe>`
})

describe("warm browsers on the service", () => {
  let service: Service
  let sites: Sites
  const tmp = mkdtempSync(join(tmpdir(), "switchyard-warm-"))
  // The unprivileged browser gets through to its profile under this private TMPDIR.
  chmodSync(tmp, 0o711)

  /** The service's browsers (main processes) that are running now. */
  const browsers = () =>
    processesMatching(`--user-data-dir=${tmp}`)
      .filter((p) => !/--type=/.test(p.cmdline))
      .map((p) => p.pid)
  const call = async (tool: string, args: Record<string, unknown>) => {
    const reply = await service.call(tool, args)
    return reply.error === undefined
      ? { ok: true, type: undefined }
      : { ok: false, type: (reply.error as { data?: { type?: string } }).data?.type }
  }
  const pidOf = async (session: string) => {
    const status = await service.call("browserStatus", { session })
    return (status.result as { browserPid: number }).browserPid
  }
  /** A browser started ahead and not yet taken: waits for one beyond the `inUse` browsers. */
  const warmOne = async (inUse: ReadonlyArray<number>) => {
    // The launcher script's subshells carry the browser's command line for a moment: a browser is a process seen in
    // two readings 300 ms apart.
    let found: ReadonlyArray<number> = []
    const seen = await waitFor(async () => {
      const first = browsers().filter((pid) => !inUse.includes(pid))
      if (first.length === 0) return false
      await new Promise((r) => setTimeout(r, 300))
      found = browsers().filter((pid) => first.includes(pid))
      return found.length > 0
    }, 30_000)
    assert.isTrue(seen, "a browser was started ahead within 30 s")
    return found
  }

  beforeAll(async () => {
    sites = await startSites(pages)
    service = startService({ SWITCHYARD_EGRESS_DENY: "127.0.0.2", SWITCHYARD_WARM_BROWSERS: "1", TMPDIR: tmp })
  })
  afterAll(async () => {
    service.child.stdin.end()
    await Promise.race([service.exited, new Promise((r) => setTimeout(r, 10_000))])
    await stopServices()
    await sites.close()
    assert.deepStrictEqual(sites.denied.hits, [])
  })

  it("a session on a warm browser is refused the denied host by redirect and loads no frame of it", {
    timeout: 90_000
  }, async () => {
    const warm = await warmOne([])
    assert.isTrue((await call("browser.navigate", { url: sites.allowedUrl("/frame"), session: "egress" })).ok)
    assert.include(warm, await pidOf("egress"), "the session took the browser started ahead")
    const redirected = await call("browser.navigate", { url: sites.allowedUrl("/redirect"), session: "egress" })
    assert.deepStrictEqual(redirected, { ok: false, type: "rejected_by_policy" })
    assert.include(sites.allowed.hits, "GET /redirect")
    assert.deepStrictEqual(sites.denied.hits, [])
    await service.call("browserClose", { session: "egress" })
  })

  it("a killed browser is replaced by the warm one, back at the last URL and held to the same policy", {
    timeout: 90_000
  }, async () => {
    await warmOne([])
    assert.isTrue((await call("browser.navigate", { url: sites.allowedUrl("/frame"), session: "crash" })).ok)
    const killed = await pidOf("crash")
    const spare = await warmOne([killed])
    process.kill(killed, "SIGKILL")
    const reply = await service.call("browser.extract", { instruction: "the page title", session: "crash" })
    assert.isUndefined(reply.error, JSON.stringify(reply.error))
    const restored = (reply.result as { state: { url: string } }).state.url
    assert.strictEqual(restored, sites.allowedUrl("/frame"), "answered on the page the session was on")
    const relaunched = await pidOf("crash")
    assert.notStrictEqual(relaunched, killed)
    assert.include(spare, relaunched, "the relaunch took the browser started ahead")
    const redirected = await call("browser.navigate", { url: sites.allowedUrl("/redirect"), session: "crash" })
    assert.deepStrictEqual(redirected, { ok: false, type: "rejected_by_policy" })
    assert.deepStrictEqual(sites.denied.hits, [])
    await service.call("browserClose", { session: "crash" })
  })

  it("the next session's warm browser holds nothing of the session before it", { timeout: 90_000 }, async () => {
    const first = await warmOne([])
    assert.isTrue((await call("browser.navigate", { url: sites.allowedUrl("/remember"), session: "first" })).ok)
    const firstPid = await pidOf("first")
    assert.include(first, firstPid, "the first session took a browser started ahead")
    assert.isTrue((await call("browser.navigate", { url: sites.allowedUrl("/recall"), session: "first" })).ok)
    await waitFor(() => sites.allowed.hits.some((h) => h.startsWith("GET /seen?")), 10_000)
    const seen = () => sites.allowed.hits.filter((h) => h.startsWith("GET /seen?"))
    assert.include(seen()[0], "cookie=who%3Dfirst", "the page itself sees what it stored")
    await service.call("browserClose", { session: "first" })

    const second = await warmOne([])
    assert.notInclude(second, firstPid)
    assert.isTrue((await call("browser.navigate", { url: sites.allowedUrl("/recall"), session: "second" })).ok)
    assert.include(second, await pidOf("second"), "the second session took a browser started ahead")
    await waitFor(() => seen().length === 2, 10_000)
    assert.strictEqual(seen()[1], "GET /seen?cookie=&local=null&history=2")
    await service.call("browserClose", { session: "second" })
  })
})
