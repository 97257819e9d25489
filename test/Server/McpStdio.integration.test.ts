/**
 * MCP over stdio when the client misbehaves, against a real `switchyard serve` process and Chromium: a client that
 * dies mid-call (its end of stdout closed) and a message over the transport's 10 MB limit both end in a clean
 * shutdown, with no browser and no temp profile left.
 */
import { chmodSync, mkdtempSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { slowSite } from "../fixtures/SlowSite.ts"
import { processesMatching } from "../support/Processes.ts"
import { startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopServices)

const message = (id: number, method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params })
const initialize = message(1, "initialize", {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw", version: "1" }
})
const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })

/** A stdio MCP service with its own temp dir, initialized. */
const started = Effect.gen(function* () {
  const tmp = mkdtempSync(join(tmpdir(), "switchyard-stdio-"))
  // As root the browser runs as an unprivileged user, whose profile can live here only if it can pass through.
  chmodSync(tmp, 0o711)
  const service = startService({ TMPDIR: tmp }, [])
  // The service may exit before reading all of a huge line: that write's EPIPE is expected.
  service.child.stdin.on("error", () => undefined)
  const answer = yield* Effect.promise(() => service.send(initialize, 1))
  assert.isDefined(answer.result, JSON.stringify(answer))
  service.child.stdin.write(`${initialized}\n`)
  const profiles = () => readdirSync(tmp).filter((p) => p.startsWith(LocalChromium.profilePrefix))
  const browsers = () => processesMatching(`--user-data-dir=${tmp}`)
  return { service, profiles, browsers }
})

describe("MCP over stdio", () => {
  it.live("a client that dies mid-call: the service shuts down cleanly, no browser or profile left", () =>
    Effect.gen(function* () {
      const site = yield* slowSite(8_000)
      const { service, profiles, browsers } = yield* started
      service.child.stdin.write(
        `${message(2, "tools/call", { name: "browser_navigate", arguments: { url: site.url } })}\n`
      )
      yield* Effect.promise(() => waitFor(() => browsers().length > 0, 30_000))
      // The client is gone: nobody reads the service's stdout any more.
      service.child.stdout.destroy()
      const exit = yield* Effect.promise(() => service.exited)
      assert.deepStrictEqual(exit, { code: 0, signal: null }, service.stderr())
      assert.notMatch(service.stderr(), /EPIPE/)
      assert.deepStrictEqual(browsers(), [])
      assert.deepStrictEqual(profiles(), [])
    })
  )

  it.live("a message over 10 MB: a clear error and a clean shutdown", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const { service, profiles, browsers } = yield* started
      const navigated = yield* Effect.promise(() =>
        service.send(
          message(2, "tools/call", { name: "browser_navigate", arguments: { url: site.url("/plain.html") } }),
          2
        )
      )
      assert.isDefined(navigated.result, JSON.stringify(navigated))
      assert.isAbove(browsers().length, 0)
      const huge = message(3, "tools/call", {
        name: "browser_act",
        arguments: { instruction: "x".repeat(11 * 1024 * 1024) }
      })
      const answer = yield* Effect.promise(() => service.send(huge, null))
      assert.match(JSON.stringify(answer), /10485760 bytes|10 MB/)
      const exit = yield* Effect.promise(() => service.exited)
      assert.deepStrictEqual(exit, { code: 0, signal: null }, service.stderr())
      assert.deepStrictEqual(browsers(), [])
      assert.deepStrictEqual(profiles(), [])
    })
  )
})
