/**
 * MCP over stdio when the client misbehaves, against a real `switchyard serve` process and Chromium: a client that
 * dies mid-call (its end of stdout closed) ends in a clean shutdown, with no browser and no temp profile left; a
 * message over the 10 MB limit, a line that is not JSON or not a JSON-RPC message each get one error answer, and the
 * service and its sessions go on.
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

  it.live("a message over 10 MB is refused with an error; the service and its session go on", () =>
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
      assert.strictEqual((answer.error as { code?: number })?.code, -32600, JSON.stringify(answer).slice(0, 300))
      assert.match(JSON.stringify(answer), /10485760 bytes/)
      // The next message is read and answered; the session kept its page.
      const status = yield* Effect.promise(() =>
        service.send(message(4, "tools/call", { name: "browser_status", arguments: {} }), 4)
      )
      const text = (status.result as { content: Array<{ text: string }> }).content[0]!.text
      assert.include(text, "/plain.html")
      assert.strictEqual(service.child.exitCode, null)
      service.child.stdin.end()
      const exit = yield* Effect.promise(() => service.exited)
      assert.deepStrictEqual(exit, { code: 0, signal: null }, service.stderr())
      assert.deepStrictEqual(browsers(), [])
      assert.deepStrictEqual(profiles(), [])
    })
  )

  it.live("a line that is not a JSON-RPC message gets one error answer with id null, and the service goes on", () =>
    Effect.gen(function* () {
      const { service } = yield* started
      const lines: ReadonlyArray<readonly [string | Buffer, number]> = [
        ["this is not json", -32700],
        ['{"jsonrpc": "2.0", "id": 5, "method": "tools/li', -32700],
        ["[]", -32600],
        [`[${message(6, "tools/list", {})}]`, -32600],
        ["7", -32600],
        ['"a string"', -32600],
        ['{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', -32600],
        ['{"id": 8, "method": "tools/list"}', -32600],
        ['{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}', -32600],
        [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), -32700]
      ]
      for (const [line, code] of lines) {
        const answered = new Promise<Record<string, unknown>>((resolve) => {
          void service.send("", null).then(resolve)
        })
        // `send` writes the line and registers the waiter for id null; write the raw bytes ourselves.
        service.child.stdin.write(Buffer.concat([Buffer.from(line), Buffer.from("\n")]))
        const answer = yield* Effect.promise(() => answered)
        assert.strictEqual(
          (answer.error as { code?: number })?.code,
          code,
          `${String(line)} → ${JSON.stringify(answer)}`
        )
      }
      const listed = yield* Effect.promise(() => service.send(message(9, "tools/list", {}), 9))
      assert.isDefined(listed.result, JSON.stringify(listed))
      yield* Effect.sleep("300 millis")
      assert.strictEqual(service.extra(), 0, "no line was answered twice")
    })
  )
})
