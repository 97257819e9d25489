/**
 * The MCP surface driven by the official TypeScript SDK client, over stdio and over Streamable HTTP, against a real
 * `switchyard serve` process and a real Chromium.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Schema } from "effect"
import { toolNames, tools } from "../../src/Cascade/Tools.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { randomLines } from "../support/Garbage.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const main = join(import.meta.dirname, "..", "..", "src", "Main.ts")

type Text = { type: "text"; text: string }
type Image = { type: "image"; data: string; mimeType: string }
type Result = { content: Array<Text | Image>; structuredContent?: Record<string, any>; isError?: boolean }

const parse = (result: Result) => JSON.parse((result.content.find((c) => c.type === "text") as Text).text)

/** A successful answer's result, in its structured content, is what its tool's result Schema says. */
const conforms = (name: string, result: Result) => {
  const tool = tools.find((t) => t.name === name)!
  const structured = result.structuredContent?.result
  assert.isTrue(Schema.is(tool.result)(structured), `${name}: ${JSON.stringify(structured)}`)
}

/** The scenario a user runs: list, navigate, act, extract, screenshot, status, close. */
const session = (client: Client, url: string) =>
  Effect.promise(async () => {
    const { tools } = await client.listTools()
    assert.deepStrictEqual(tools.map((t) => t.name).sort(), toolNames.map((n) => n.replaceAll(".", "_")).sort())
    for (const tool of tools) {
      assert.strictEqual(tool.inputSchema.type, "object")
      assert.isAbove(tool.description?.length ?? 0, 30, `${tool.name} teaches an LLM when to use it`)
    }
    const call = (name: string, args: Record<string, unknown> = {}) =>
      client.callTool({ name, arguments: { traceId: "mcp-trace", ...args } }) as Promise<Result>

    const navigated = await call("browser.navigate", { url })
    assert.isNotTrue(navigated.isError, JSON.stringify(navigated))
    assert.strictEqual(parse(navigated).result.title, "Sign up")
    assert.strictEqual(parse(navigated).state.url, url)
    conforms("browser.navigate", navigated)

    const acted = await call("browser.act", { instruction: 'fill "Email" with "mcp@example.test"' })
    assert.isNotTrue(acted.isError, JSON.stringify(acted))
    conforms("browser.act", acted)
    // The text says what the act did and what the field now shows; the call's ids and the action run are in the
    // structured content, and the page that did not change is not repeated.
    const said = parse(acted)
    assert.strictEqual(said.result.target.value, "mcp@example.test")
    assert.include(said.result.description, "Email")
    for (const key of ["traceId", "attemptId"]) assert.notProperty(said, key)
    assert.notProperty(said.result, "action")
    assert.notProperty(said.state ?? {}, "url")
    assert.strictEqual(acted.structuredContent?.traceId, "mcp-trace")
    assert.isString(acted.structuredContent?.attemptId)
    assert.isObject(acted.structuredContent?.result.action)
    assert.strictEqual(acted.structuredContent?.state.url, url)

    const extracted = parse(await call("browser.extract", { instruction: "the form" }))
    assert.strictEqual(
      extracted.result.fields.find((f: { name: string }) => f.name === "email").value,
      "mcp@example.test"
    )

    const shot = await call("browser.screenshot")
    const image = shot.content.find((c) => c.type === "image") as Image
    assert.strictEqual(image.mimeType, "image/png")
    assert.strictEqual(Buffer.from(image.data, "base64").subarray(1, 4).toString(), "PNG")
    // The picture comes once: the structured content does not carry it again as base64.
    const structured = shot.structuredContent
    assert.deepStrictEqual(structured?.result, { mimeType: "image/png" })

    const missing = await call("browser.act", { instruction: 'click "No such thing"' })
    assert.isTrue(missing.isError)
    assert.strictEqual(parse(missing).error.type, "element_not_found")
    assert.isUndefined(parse(missing).state.tools, "unchanged since the previous answer: not repeated")

    const statusAnswer = await call("browser.status")
    conforms("browser.status", statusAnswer)
    const status = parse(statusAnswer)
    assert.isTrue(status.result.active)
    assert.isNumber(status.result.browserPid)
    const closedAnswer = await call("browser.close")
    conforms("browser.close", closedAnswer)
    const closed = parse(closedAnswer)
    assert.deepStrictEqual(closed.result, { status: "ok" })
    return status.result.browserPid as number
  })

describe("MCP", () => {
  it.live("over stdio with the official SDK client", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve"],
        env: {
          ...(process.env as Record<string, string>),
          SWITCHYARD_LOG_DIR: mkdtempSync(join(tmpdir(), "switchyard-logs-")),
          SWITCHYARD_IDLE_TIMEOUT_MS: "0"
        },
        stderr: "ignore"
      })
      const client = new Client({ name: "switchyard-test", version: "1.0.0" })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(transport)),
        () => Effect.promise(() => client.close())
      )
      yield* session(client, site.url("/forms.html"))
    })
  )

  it.live("over Streamable HTTP with the official SDK client, with a bearer token", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const service = startService({ SWITCHYARD_HTTP_TOKEN: "t0ken-for-test" }, ["--http", "--port", "0"])
      const url = yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (\S+)/))
      const refused = yield* Effect.promise(() =>
        fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      )
      assert.strictEqual(refused.status, 401)
      // A person's "done" button needs no MCP client, but it does need the token.
      const resumeUnauthorized = yield* Effect.promise(() =>
        fetch(url.replace(/\/mcp$/, "/resume"), { method: "POST" })
      )
      assert.strictEqual(resumeUnauthorized.status, 401)
      const resume = yield* Effect.promise(() =>
        fetch(url.replace(/\/mcp$/, "/resume"), { method: "POST", headers: { authorization: "Bearer t0ken-for-test" } })
      )
      assert.strictEqual(resume.status, 409, "no takeover here: human takeover is not set up")
      assert.strictEqual(
        ((yield* Effect.promise(() => resume.json())) as { error: { type: string } }).error.type,
        "not_configured"
      )
      const client = new Client({ name: "switchyard-test", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: "Bearer t0ken-for-test" } }
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(transport)),
        () => Effect.promise(() => client.close())
      )
      yield* session(client, site.url("/forms.html"))
    })
  )

  it.live("random bodies over HTTP get JSON-RPC errors; the server keeps serving real clients", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const service = startService({}, ["--http", "--port", "0"])
      const url = yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (\S+)/))
      for (const body of randomLines(60, 7)) {
        const response = yield* Effect.promise(() =>
          fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body
          })
        )
        assert.isAtLeast(response.status, 400, body)
        assert.isBelow(response.status, 500, body)
        const answer = (yield* Effect.promise(() => response.json())) as { error?: { code: number; message: string } }
        assert.isNumber(answer.error?.code)
      }
      const client = new Client({ name: "switchyard-test", version: "1.0.0" })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url)))),
        () => Effect.promise(() => client.close())
      )
      const answer = (yield* Effect.promise(() =>
        client.callTool({ name: "browser.navigate", arguments: { url: site.url("/plain.html") } })
      )) as Result
      assert.strictEqual(parse(answer).result.title, "Plain page")
    })
  )

  it.live("refuses to listen beyond 127.0.0.1 without a token", () =>
    Effect.gen(function* () {
      const service = startService({}, ["--http", "--host", "0.0.0.0", "--port", "0"])
      const exit = yield* Effect.promise(() => service.exited)
      assert.strictEqual(exit.code, 2)
      assert.match(service.stderr(), /needs a bearer token/)
    })
  )
})
