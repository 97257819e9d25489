/**
 * MCP clients and browser sessions over HTTP, with the official SDK client against a real service: each MCP session
 * gets its own default browser (unless configured to share one), an MCP session that ends closes the browsers it
 * opened, and clients that went away without ending theirs leave a new client no wait for a browser at the cap.
 */
import { chmodSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { httpClient } from "../support/McpClient.ts"
import { processesMatching } from "../support/Processes.ts"
import { startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopServices)

const urlAfter = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(async () => {
    const answer = await client.callTool({ name, arguments: args })
    assert.isNotTrue(answer.isError, JSON.stringify(answer))
    return (answer.structuredContent as { state: { url: string } }).state.url
  })

const serve = (env: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const tmp = mkdtempSync(join(tmpdir(), "switchyard-mcp-sessions-"))
    // As root the browsers run as another user, who must get through to their profiles here.
    chmodSync(tmp, 0o711)
    const service = startService({ TMPDIR: tmp, ...env }, ["--http", "--port", "0"])
    // Its browsers' profiles live under its own TMPDIR, which the shared reaper does not look in: stop it gracefully
    // so it removes them itself.
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        if (service.child.exitCode === null) service.child.kill("SIGTERM")
        await service.exited
      })
    )
    const url = yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (\S+)/))
    // Each browser's main process carries its profile dir once; renderers and helpers do not start with it.
    const browsers = () => processesMatching(`--user-data-dir=${tmp}`).filter((p) => !/--type=/.test(p.cmdline))
    return { url, browsers }
  })

describe("MCP sessions over HTTP", () => {
  it.live("two clients without a session name get a browser each; ending one closes its browser", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const { url, browsers } = yield* serve()
      const a = yield* httpClient(url)
      const b = yield* httpClient(url)
      assert.strictEqual(
        yield* urlAfter(a.client, "browser_navigate", { url: site.url("/plain.html") }),
        site.url("/plain.html")
      )
      assert.strictEqual(
        yield* urlAfter(b.client, "browser_navigate", { url: site.url("/forms.html") }),
        site.url("/forms.html")
      )
      assert.strictEqual(
        yield* urlAfter(a.client, "browser_status"),
        site.url("/plain.html"),
        "b did not move a's page"
      )
      assert.strictEqual(browsers().length, 2)
      // The state block names the tools as this client calls them.
      const listed = (yield* Effect.promise(() => a.client.listTools())).tools.map((t) => t.name)
      const status = yield* Effect.promise(() => a.client.callTool({ name: "browser_status", arguments: {} }))
      const named = (status.structuredContent as { state: { tools: { available: Array<string> } } }).state.tools
      assert.includeMembers(listed, named.available)
      assert.include(named.available, "browser_navigate")
      yield* Effect.promise(() => a.transport.terminateSession())
      yield* Effect.promise(() => a.client.close())
      yield* Effect.promise(() => waitFor(() => browsers().length === 1, 20_000))
      assert.strictEqual(yield* urlAfter(b.client, "browser_status"), site.url("/forms.html"))
      yield* Effect.promise(() => b.client.close())
    })
  )

  it.live("configured to share, clients without a session name drive one browser", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const { url } = yield* serve({ SWITCHYARD_MCP_SHARED_DEFAULT: "on" })
      const a = yield* httpClient(url)
      const b = yield* httpClient(url)
      yield* urlAfter(a.client, "browser_navigate", { url: site.url("/plain.html") })
      yield* urlAfter(b.client, "browser_navigate", { url: site.url("/forms.html") })
      assert.strictEqual(yield* urlAfter(a.client, "browser_status"), site.url("/forms.html"))
      yield* Effect.promise(() => Promise.all([a.client.close(), b.client.close()]))
    })
  )

  it.live("clients that went away without ending their session leave no new client busy at the browser cap", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const { url, browsers } = yield* serve({ SWITCHYARD_MAX_BROWSERS: "1", SWITCHYARD_QUEUE: "0" })
      // Each client opens a browser, then goes away: its transport closed, no DELETE, its MCP session left open.
      for (const path of ["/plain.html", "/forms.html"]) {
        const gone = yield* httpClient(url)
        assert.strictEqual(yield* urlAfter(gone.client, "browser_navigate", { url: site.url(path) }), site.url(path))
        yield* Effect.promise(() => gone.client.close())
      }
      // A new client gets the one browser at once: the idle session hibernates for it, no wait, no busy.
      const next = yield* httpClient(url)
      const started = Date.now()
      assert.strictEqual(
        yield* urlAfter(next.client, "browser_navigate", { url: site.url("/plain.html") }),
        site.url("/plain.html")
      )
      assert.isBelow(Date.now() - started, 15_000, "the new client waited for a browser")
      assert.strictEqual(browsers().length, 1)
      yield* Effect.promise(() => next.client.close())
    })
  )
})
