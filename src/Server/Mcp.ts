/**
 * The MCP surface (the official TypeScript SDK's server): the stable `browser.*` tool list with JSON schemas and
 * descriptions, every call answered through the Sessions' Routers with the state block, screenshots as image
 * content. Stdio here; Streamable HTTP in Mcp/Http.ts, progress notifications in Mcp/Progress.ts.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Option } from "effect"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { splitCommon } from "../Cascade/Tool.ts"
import { find, toolNames, tools } from "../Cascade/Tools.ts"
import { withProgress } from "./Mcp/Progress.ts"
import { Sessions } from "./Sessions.ts"

export const serverInfo = { name: "switchyard", version: "0.1.0" }

/** How MCP lists tool names: `browser_navigate` (the default, what model APIs accept) or `browser.navigate`. */
export type ToolNames = "underscore" | "dotted"

export interface McpOptions {
  readonly toolNames: ToolNames
  /** A call with a progressToken reports progress at least this often, besides each cascade step. */
  readonly progressIntervalMs: number
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
  answer: ToolAnswer,
  names: ToolNames
): { content: Array<Content>; structuredContent?: Record<string, unknown>; isError?: boolean } => {
  const { ok, result, ...rest } = respelled(answer, names)
  if (!ok) return { content: [{ type: "text", text: JSON.stringify(rest) }], isError: true }
  const image = result as { mimeType?: string; data?: string } | undefined
  if (image?.mimeType === "image/png" && typeof image.data === "string") {
    // The picture once, as the image block: not again as base64 in the structured content.
    return {
      content: [
        { type: "image", data: image.data, mimeType: "image/png" },
        { type: "text", text: JSON.stringify(rest) }
      ],
      structuredContent: { result: { mimeType: image.mimeType }, ...rest }
    }
  }
  const structuredContent = { result, ...rest }
  return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent }
}

/** The state block's tool list in the names this client calls them by. */
const respelled = (answer: ToolAnswer, names: ToolNames): ToolAnswer => {
  const tools = answer.state.tools
  if (names === "dotted" || tools === undefined) return answer
  return {
    ...answer,
    state: {
      ...answer.state,
      tools: {
        available: tools.available.map((name) => spell(name, names)) as typeof tools.available,
        masked: Object.fromEntries(
          Object.entries(tools.masked).map(([name, why]) => [spell(name, names), why])
        ) as typeof tools.masked
      }
    }
  }
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
/** The browser sessions one MCP client's calls go to. */
export interface Client {
  /** Where calls without a `session` go; undefined: the service's default session. */
  readonly defaultSession?: string
  /** Each browser session a call went to (the service's default one as undefined). */
  readonly used: Set<string | undefined>
}

export const makeServer = (
  run: <A>(effect: Effect.Effect<A>, signal: AbortSignal) => Promise<A>,
  sessions: Sessions["Service"],
  options: McpOptions,
  client: Client = { used: new Set() }
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
    const { session: named, meta, args } = splitCommon(request.params.arguments)
    const session = named ?? client.defaultSession
    if (typeof session === "string") client.used.add(session)
    const work = sessions.call(session, tool.value.name, args, meta)
    const token = request.params._meta?.progressToken
    if (token === undefined) return toContent(await run(work, extra.signal), options.toolNames)
    let progress = 0
    const notify = (message: string) => {
      progress++
      extra
        .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message } })
        .catch(() => undefined)
    }
    return toContent(await run(withProgress(work, notify, options.progressIntervalMs), extra.signal), options.toolNames)
  })
  return server
}

/** Runs Effects for the SDK, interrupted when the client cancels the request; `drain` waits for those in flight. */
export const runner = Effect.gen(function* () {
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

/**
 * MCP over stdio until stdin closes, stdout breaks (the client died), the transport closes (a message over its
 * 10 MB limit) or `stop` completes; then calls in flight answer `shutting_down` and the service shuts down.
 */
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
      // The client went away (nobody reads stdout): nothing can be answered any more, so shut down.
      process.stdout.on("error", () => resume(Effect.void))
      server.onerror = (error) => {
        if (!/ReadBuffer exceeded/.test(error.message)) return
        // The SDK transport drops a message over its buffer limit and closes: say why, then shut down.
        const message = `a message over the stdio limit of ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes (10 MB) was refused; the service is shutting down`
        process.stderr.write(`switchyard: ${message}\n`)
        if (process.stdout.writable) {
          process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message } })}\n`)
        }
      }
      server.onclose = () => resume(Effect.void)
      server.connect(transport).catch((error: Error) => resume(Effect.die(error)))
    })
    yield* Effect.raceFirst(closed, stop)
    yield* sessions.shutdown
    yield* drain
  })
