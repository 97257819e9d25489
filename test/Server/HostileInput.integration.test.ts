/**
 * Every surface of a real service process fed random and hostile input (test/support/Hostile.ts: nesting thousands
 * deep, big values, bytes that are not UTF-8, JSON of the wrong types, requests right and wrong), as a property: each
 * request gets exactly one answer (a notification none), carrying its id when it had a usable one, and the service
 * still answers a plain call after. JSON-RPC and MCP over stdio count answered lines; MCP over HTTP counts responses.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import { createInterface } from "node:readline"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { maxLineBytes } from "../../src/Server/Lines.ts"
import { Hostile, lineOf, owed } from "../support/Hostile.ts"
import { type Service, startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterAll(stopServices)

const batch = Schema.Array(Hostile)
const runs = { arbitrary: { runs: 6 } }
let fresh = 0

/** Every line the service writes on stdout, in order. */
const collect = (child: ChildProcessWithoutNullStreams) => {
  const lines: Array<string> = []
  createInterface({ input: child.stdout }).on("line", (line) => lines.push(line))
  return lines
}

const write = (child: ChildProcessWithoutNullStreams, bytes: Buffer) =>
  new Promise<void>((resolve) =>
    child.stdin.write(Buffer.concat([bytes, Buffer.from("\n")])) ? resolve() : child.stdin.once("drain", resolve)
  )

/**
 * Sends each message as a line, then waits for the answers owed: exactly that many lines come back (no more, however
 * long one waits after), each request with a usable id answered once with it.
 */
const exchange = (
  surface: "jsonrpc" | "mcp",
  child: ChildProcessWithoutNullStreams,
  out: Array<string>,
  messages: ReadonlyArray<Hostile>
) =>
  Effect.promise(async () => {
    const mark = out.length
    const sent = messages.slice(0, 25).map((message) => {
      const id = `h-${++fresh}`
      const line = lineOf(message, id, surface)
      return { line, id, owed: owed(line, surface, maxLineBytes) }
    })
    for (const { line } of sent) await write(child, line)
    const expected = sent.reduce((n, s) => n + s.owed.answers, 0)
    const arrived = await waitFor(() => out.length - mark >= expected, 90_000)
    await new Promise((r) => setTimeout(r, 500))
    const answers = out.slice(mark).map((text) => JSON.parse(text) as unknown)
    const context = () =>
      `${sent.map((s) => `${s.line.toString("utf8").slice(0, 80)} → ${s.owed.answers}`).join("\n")}\nanswers:\n${out
        .slice(mark)
        .map((a) => a.slice(0, 200))
        .join("\n")}`
    assert.isTrue(arrived, `answers missing:\n${context()}`)
    assert.strictEqual(answers.length, expected, `answers for ${sent.length} lines:\n${context()}`)
    for (const s of sent.filter((s) => s.owed.answers === 1 && s.owed.id === s.id)) {
      const mine = answers.filter((a) => (a as { id?: unknown }).id === s.id)
      assert.strictEqual(mine.length, 1, `${s.id}: ${context()}`)
    }
    for (const answer of answers.filter((a) => !Array.isArray(a))) {
      const a = answer as { jsonrpc?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } }
      assert.strictEqual(a.jsonrpc, "2.0")
      assert.isTrue(
        a.result !== undefined || (typeof a.error?.code === "number" && typeof a.error.message === "string")
      )
    }
  })

/** The service still answers a plain call on the surface. */
const alive = (child: ChildProcessWithoutNullStreams, out: Array<string>, line: (id: string) => string) =>
  Effect.promise(async () => {
    const id = `alive-${++fresh}`
    await write(child, Buffer.from(line(id)))
    assert.isTrue(await waitFor(() => out.some((l) => l.includes(`"id":"${id}"`)), 30_000), "the service answers")
    assert.isNull(child.exitCode)
  })

let jsonRpc: { service: Service; out: Array<string> } | undefined
let mcp: { service: Service; out: Array<string> } | undefined

describe("hostile input on every surface", () => {
  it.effect.prop(
    "JSON-RPC on stdio: one answer per request, whatever it holds; the service goes on",
    [batch],
    ([messages]) =>
      Effect.gen(function* () {
        jsonRpc ??= (() => {
          const service = startService({ SWITCHYARD_PRIVATE_NETWORKS: "off" })
          return { service, out: collect(service.child) }
        })()
        yield* exchange("jsonrpc", jsonRpc.service.child, jsonRpc.out, messages)
        yield* alive(jsonRpc.service.child, jsonRpc.out, (id) =>
          JSON.stringify({ jsonrpc: "2.0", id, method: "browserStatus" })
        )
      }),
    { ...runs, timeout: 300_000 }
  )

  it.effect.prop(
    "MCP on stdio: one answer per request, whatever it holds; the service goes on",
    [batch],
    ([messages]) =>
      Effect.gen(function* () {
        if (mcp === undefined) {
          const service = startService({ SWITCHYARD_PRIVATE_NETWORKS: "off" }, [])
          const out = collect(service.child)
          mcp = { service, out }
          yield* Effect.promise(async () => {
            await write(
              service.child,
              Buffer.from(
                JSON.stringify({
                  jsonrpc: "2.0",
                  id: "init",
                  method: "initialize",
                  params: {
                    protocolVersion: "2025-06-18",
                    capabilities: {},
                    clientInfo: { name: "hostile", version: "1" }
                  }
                })
              )
            )
            await waitFor(() => out.length > 0, 30_000)
            await write(
              service.child,
              Buffer.from(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
            )
            out.splice(0)
          })
        }
        yield* exchange("mcp", mcp.service.child, mcp.out, messages)
        yield* alive(mcp.service.child, mcp.out, (id) =>
          JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name: "browser_status", arguments: {} }
          })
        )
      }),
    { ...runs, timeout: 300_000 }
  )

  it.effect.prop(
    "MCP over HTTP: one response per request, the request's answer in it once; the service goes on",
    [batch],
    ([messages]) =>
      Effect.gen(function* () {
        const endpoint = yield* http
        for (const message of messages.slice(0, 25)) {
          const id = `h-${++fresh}`
          const body = lineOf(message, id, "mcp")
          const owes = owed(body, "mcp", Number.POSITIVE_INFINITY)
          const response = yield* Effect.promise(() =>
            fetch(endpoint.url, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-session-id": endpoint.session,
                "mcp-protocol-version": "2025-06-18"
              },
              body: new Uint8Array(body)
            }).then(async (r) => ({ status: r.status, text: await r.text() }))
          )
          const context = `${body.toString("utf8").slice(0, 120)} → ${response.status} ${response.text.slice(0, 200)}`
          assert.isBelow(response.status, 500, context)
          if (owes.answers === 1 && owes.id === id) {
            assert.strictEqual(response.text.split(`"id":"${id}"`).length - 1, 1, context)
          }
        }
        const status = yield* Effect.promise(() =>
          fetch(endpoint.url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-session-id": endpoint.session,
              "mcp-protocol-version": "2025-06-18"
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: "alive",
              method: "tools/call",
              params: { name: "browser_status", arguments: {} }
            })
          }).then((r) => r.text())
        )
        assert.include(status, '"id":"alive"')
      }),
    { ...runs, timeout: 300_000 }
  )
})

/** One HTTP service and one MCP session on it, for every run. */
let httpEndpoint: { url: string; session: string } | undefined
const http = Effect.promise(async () => {
  if (httpEndpoint !== undefined) return httpEndpoint
  const service = startService({ SWITCHYARD_PRIVATE_NETWORKS: "off" }, ["--http", "--port", "0"])
  const url = await service.stderrLine(/MCP over HTTP at (\S+)/)
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "hostile", version: "1" } }
    })
  })
  await response.text()
  const session = response.headers.get("mcp-session-id") ?? ""
  await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": session,
      "mcp-protocol-version": "2025-06-18"
    },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
  })
  httpEndpoint = { url, session }
  return httpEndpoint
})
