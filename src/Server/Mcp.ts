/**
 * The MCP surface (the official TypeScript SDK's server): the stable `browser.*` tool list with JSON schemas and
 * descriptions, every call answered through the Sessions' Routers with the state block, screenshots as image
 * content. Stdio by default; Streamable HTTP on 127.0.0.1, with a bearer token required when bound elsewhere.
 */
import { randomUUID, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Option, Redacted } from "effect"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { splitCommon } from "../Cascade/Tool.ts"
import { find, toolNames, tools } from "../Cascade/Tools.ts"
import { InvalidInput } from "../Errors/Page.ts"
import { Sessions } from "./Sessions.ts"

export const serverInfo = { name: "switchyard", version: "0.1.0" }

/** How MCP lists tool names: `browser_navigate` (the default, what model APIs accept) or `browser.navigate`. */
export type ToolNames = "underscore" | "dotted"

export interface McpOptions {
  readonly toolNames: ToolNames
}

const spell = (name: string, names: ToolNames) => (names === "dotted" ? name : name.replaceAll(".", "_"))

const instructions = (names: ToolNames) => {
  const t = (name: string) => spell(`browser.${name}`, names)
  return (
    `Browser automation that does not get stuck. Start with ${t("navigate")}, then ${t("act")} one step at a time ` +
    `(${t("observe")} when unsure what to click) and ${t("extract")} to read. Every answer has a \`state\` block: the ` +
    "engine in use, the page, and which tools work now; follow its `message` when a call fails."
  )
}

type Content = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string }

/**
 * An answer as MCP content: the result and state as JSON text (for clients that ignore structured content), a
 * screenshot as an image block, and a successful answer as `structuredContent` matching the tool's `outputSchema`.
 */
export const toContent = (
  answer: ToolAnswer
): { content: Array<Content>; structuredContent?: Record<string, unknown>; isError?: boolean } => {
  const { ok, result, ...rest } = answer
  if (!ok) return { content: [{ type: "text", text: JSON.stringify(rest) }], isError: true }
  const structuredContent = { result, ...rest }
  const image = result as { mimeType?: string; data?: string } | undefined
  if (image?.mimeType === "image/png" && typeof image.data === "string") {
    return {
      content: [
        { type: "image", data: image.data, mimeType: "image/png" },
        { type: "text", text: JSON.stringify(rest) }
      ],
      structuredContent
    }
  }
  return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent }
}

/** The tool list as MCP lists it, derived from the tools' records. */
const listed = (names: ToolNames) =>
  tools.map((tool) => ({
    name: spell(tool.name, names),
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: { title: tool.title, ...tool.annotations }
  }))

/** One MCP server object; its calls run on `run` (the surface's fiber set). */
const makeServer = (
  run: <A>(effect: Effect.Effect<A>, signal: AbortSignal) => Promise<A>,
  sessions: Sessions["Service"],
  options: McpOptions
) => {
  const server = new Server(serverInfo, {
    capabilities: { tools: { listChanged: false } },
    instructions: instructions(options.toolNames)
  })
  const list = listed(options.toolNames)
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: list }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = find(request.params.name)
    if (Option.isNone(tool)) {
      // The spec's answer to an unknown tool is a protocol error, not a tool result.
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name}; the tools are ${toolNames.map((n) => spell(n, options.toolNames)).join(", ")}`
      )
    }
    const { session, meta, args } = splitCommon(request.params.arguments)
    return toContent(await run(sessions.call(session, tool.value.name, args, meta), extra.signal))
  })
  return server
}

/** Runs Effects for the SDK, interrupted when the client cancels the request; `drain` waits for those in flight. */
const runner = Effect.gen(function* () {
  const inFlight = yield* FiberSet.make()
  const runPromise = yield* FiberSet.runtimePromise(inFlight)()
  const drain = FiberSet.awaitEmpty(inFlight).pipe(Effect.timeoutOption(10_000), Effect.asVoid)
  const run = <A>(effect: Effect.Effect<A>, signal: AbortSignal) =>
    runPromise(
      Effect.raceFirst(
        effect,
        Effect.callback<never>((resume) => {
          if (signal.aborted) return resume(Effect.interrupt)
          signal.addEventListener("abort", () => resume(Effect.interrupt), { once: true })
        })
      )
    )
  return { run, drain }
})

/** MCP over stdio until stdin closes or `stop` completes; then calls in flight answer `shutting_down`. */
export const serveStdio = (options: McpOptions, stop: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const { run, drain } = yield* runner
    const server = makeServer(run, sessions, options)
    const transport = new StdioServerTransport()
    yield* Effect.addFinalizer(() => Effect.promise(() => server.close().catch(() => undefined)))
    const closed = Effect.callback<void>((resume) => {
      process.stdin.once("end", () => resume(Effect.void))
      process.stdin.once("close", () => resume(Effect.void))
      server.connect(transport).catch((error: Error) => resume(Effect.die(error)))
    })
    yield* Effect.raceFirst(closed, stop)
    yield* sessions.shutdown
    yield* drain
  })

export interface HttpOptions extends McpOptions {
  readonly host: string
  readonly port: number
  /** The bearer token clients must send; opened only to compare it with what a request carries. */
  readonly token?: Redacted.Redacted<string> | undefined
  /** Called once listening, with the URL of the MCP endpoint. */
  readonly onListening?: (url: string) => void
}

const loopback = (host: string) => ["127.0.0.1", "::1", "localhost"].includes(host)

/** Refuses to expose the service beyond this machine without a token. */
export const checkHttpOptions = (options: HttpOptions) =>
  !loopback(options.host) && !options.token
    ? Effect.fail(
        new InvalidInput({
          field: "http.token",
          message: `binding MCP over HTTP to ${options.host} needs a bearer token (--token or SWITCHYARD_HTTP_TOKEN); only 127.0.0.1 may go without`
        })
      )
    : Effect.void

const authorized = (req: IncomingMessage, token: Redacted.Redacted<string> | undefined) => {
  if (token === undefined) return true
  const given = Buffer.from(req.headers.authorization ?? "")
  const wanted = Buffer.from(`Bearer ${Redacted.value(token)}`)
  return given.length === wanted.length && timingSafeEqual(given, wanted)
}

const readBody = async (req: IncomingMessage, limit: number) => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) throw new Error(`request body over ${limit} bytes`)
    chunks.push(chunk as Buffer)
  }
  const text = Buffer.concat(chunks).toString("utf8")
  return text === "" ? undefined : (JSON.parse(text) as unknown)
}

const jsonError = (res: ServerResponse, status: number, code: number, message: string) =>
  res
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }))

/** MCP over Streamable HTTP at `/mcp`, one SDK transport per MCP session, until the scope closes. */
export const serveHttp = (options: HttpOptions & { readonly maxBodyBytes: number }, stop: Effect.Effect<void>) =>
  Effect.gen(function* () {
    yield* checkHttpOptions(options)
    const sessions = yield* Sessions
    const { run, drain } = yield* runner
    const transports = new Map<string, StreamableHTTPServerTransport>()

    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://host")
      const resume = /^\/(?:sessions\/([^/]+)\/)?resume$/.exec(url.pathname)
      if (url.pathname !== "/mcp" && !resume) {
        return jsonError(
          res,
          404,
          -32601,
          `no endpoint ${url.pathname}; MCP is served at /mcp, a person's "done" at POST /resume`
        )
      }
      if (!authorized(req, options.token)) {
        res.setHeader("www-authenticate", "Bearer")
        return jsonError(res, 401, -32001, "missing or wrong bearer token")
      }
      if (resume) {
        // The person's "done" button: ends a takeover without an MCP client.
        if (req.method !== "POST") return jsonError(res, 405, -32600, "POST to resume")
        const session = resume[1] === undefined ? undefined : decodeURIComponent(resume[1])
        const answer = await run(sessions.call(session, "browser.resume", {}), new AbortController().signal)
        res.writeHead(answer.ok ? 200 : 409, { "content-type": "application/json" }).end(JSON.stringify(answer))
        return
      }
      let body: unknown
      try {
        body = req.method === "POST" ? await readBody(req, options.maxBodyBytes) : undefined
      } catch (error) {
        return jsonError(res, 400, -32700, `Parse error: ${(error as Error).message}`)
      }
      const id = req.headers["mcp-session-id"]
      const existing = typeof id === "string" ? transports.get(id) : undefined
      if (existing) return existing.handleRequest(req, res, body)
      if (req.method !== "POST" || !isInitializeRequest(body)) {
        return jsonError(
          res,
          400,
          -32000,
          "no MCP session: send an initialize request first (or the session id is unknown)"
        )
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          transports.set(sessionId, transport)
        }
      })
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId)
      }
      await makeServer(run, sessions, options).connect(transport)
      return transport.handleRequest(req, res, body)
    }

    const server = yield* Effect.acquireRelease(
      Effect.callback<ReturnType<typeof createServer>, InvalidInput>((resume) => {
        const server = createServer((req, res) => {
          handle(req, res).catch((error: Error) => {
            if (!res.headersSent) jsonError(res, 500, -32603, `Internal error: ${error.message}`)
          })
        })
        server.once("error", (error) =>
          resume(
            Effect.fail(
              new InvalidInput({
                field: "http",
                message: `cannot listen on ${options.host}:${options.port}: ${error.message}`
              })
            )
          )
        )
        server.listen(options.port, options.host, () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.promise(async () => {
          for (const t of transports.values()) await t.close().catch(() => undefined)
          server.closeAllConnections()
          await new Promise<void>((resolve) => server.close(() => resolve()))
        })
    )
    const { port } = server.address() as AddressInfo
    const host = options.host.includes(":") ? `[${options.host}]` : options.host
    options.onListening?.(`http://${host}:${port}/mcp`)
    yield* stop
    yield* sessions.shutdown
    yield* drain
  })
