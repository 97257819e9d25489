/**
 * The MCP Streamable HTTP surface's guards against a real `switchyard serve --http`: Host/Origin checked against the
 * bound address (DNS rebinding), unknown or ended session ids answered 404, idle sessions expired, their number bounded.
 */
import { request } from "node:http"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { httpClient } from "../support/McpClient.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})
const listTools = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })

/** A raw POST with the headers given (node:http, so Host can be set), answering status, headers and body. */
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  Effect.promise(
    () =>
      new Promise<{ status: number; session: string | undefined; body: string }>((resolve, reject) => {
        const req = request(
          url,
          {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }
          },
          (res) => {
            let text = ""
            res.on("data", (chunk) => (text += String(chunk)))
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                session: res.headers["mcp-session-id"] as string | undefined,
                body: text
              })
            )
          }
        )
        req.on("error", reject)
        req.end(body)
      })
  )

const serve = (env: Record<string, string> = {}) =>
  Effect.promise(() => startService(env, ["--http", "--port", "0"]).stderrLine(/MCP over HTTP at (\S+)/))

describe("MCP over HTTP", () => {
  it.live("refuses a foreign Host or Origin (DNS rebinding); accepts the bound address and configured names", () =>
    Effect.gen(function* () {
      const url = yield* serve({ SWITCHYARD_HTTP_ALLOWED_HOSTS: "switchyard.internal" })
      const port = new URL(url).port
      assert.strictEqual((yield* post(url, initialize, { host: "evil.example" })).status, 403)
      assert.strictEqual((yield* post(url, initialize, { host: `evil.example:${port}` })).status, 403)
      assert.strictEqual((yield* post(url, initialize, { origin: "http://evil.example" })).status, 403)
      assert.strictEqual((yield* post(url, initialize)).status, 200)
      assert.strictEqual((yield* post(url, initialize, { host: `localhost:${port}` })).status, 200)
      assert.strictEqual((yield* post(url, initialize, { origin: `http://127.0.0.1:${port}` })).status, 200)
      assert.strictEqual((yield* post(url, initialize, { host: `switchyard.internal:${port}` })).status, 200)
    })
  )

  it.live("answers 404 to unknown and ended sessions, so clients initialize again", () =>
    Effect.gen(function* () {
      const url = yield* serve()
      const unknown = yield* post(url, listTools, {
        "mcp-session-id": "no-such-session",
        "mcp-protocol-version": "2025-06-18"
      })
      assert.strictEqual(unknown.status, 404)
      const { client, transport } = yield* httpClient(url)
      const id = transport.sessionId!
      yield* Effect.promise(() => transport.terminateSession())
      yield* Effect.promise(() => client.close())
      const ended = yield* post(url, listTools, { "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" })
      assert.strictEqual(ended.status, 404)
    })
  )

  it.live("expires idle sessions and bounds their number, closing the oldest idle one", () =>
    Effect.gen(function* () {
      const url = yield* serve({ SWITCHYARD_MCP_SESSION_IDLE_MS: "1500", SWITCHYARD_MCP_MAX_SESSIONS: "2" })
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        const opened = yield* post(url, initialize)
        assert.strictEqual(opened.status, 200)
        ids.push(opened.session!)
        yield* Effect.sleep(50)
      }
      const headers = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" })
      assert.strictEqual((yield* post(url, listTools, headers(ids[0]!))).status, 404, "the oldest idle one was closed")
      assert.strictEqual((yield* post(url, listTools, headers(ids[2]!))).status, 200)
      yield* Effect.sleep(4_000)
      assert.strictEqual((yield* post(url, listTools, headers(ids[2]!))).status, 404, "expired after idling")
    })
  )
})
