/**
 * The MCP surface (the official TypeScript SDK's server): the stable `browser.*` tool list with JSON schemas and
 * descriptions, every call answered through the Sessions' Routers with the state block, screenshots as image
 * content. Stdio here; Streamable HTTP in Mcp/Http.ts, progress notifications in Mcp/Progress.ts.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Option } from "effect"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { splitCommon } from "../Cascade/Tool.ts"
import { find, toolNames, tools } from "../Cascade/Tools.ts"
import * as Front from "./Mcp/Front.ts"
import { withProgress } from "./Mcp/Progress.ts"
import type { Sessions } from "./Sessions.ts"

const spell = Front.spell

export interface McpOptions {
  readonly toolNames: Front.ToolNames
  /** A call with a progressToken reports progress at least this often, besides each cascade step. */
  readonly progressIntervalMs: number
}

type Content = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string }

/**
 * An answer as MCP content: the result and state as JSON text (for clients that ignore structured content), a
 * screenshot as an image block, and a successful answer as `structuredContent` matching the tool's `outputSchema`.
 */
export const toContent = (
  answer: ToolAnswer,
  names: Front.ToolNames
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
const respelled = (answer: ToolAnswer, names: Front.ToolNames): ToolAnswer => {
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
const listed = (names: Front.ToolNames) =>
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

/** The tool list and calls of one MCP client, answered through the Sessions. */
export const handlers = (
  run: <A>(effect: Effect.Effect<A>, signal: AbortSignal) => Promise<A>,
  sessions: Sessions["Service"],
  options: McpOptions,
  client: Client = { used: new Set() }
): Front.Handlers => {
  const list = listed(options.toolNames)
  return {
    // Our JSON Schemas are objects; the SDK's type wants `type: "object"` spelled out.
    list: async () => ({ tools: list }) as ListToolsResult,
    call: async (request, extra) => {
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
      return toContent(
        await run(withProgress(work, notify, options.progressIntervalMs), extra.signal),
        options.toolNames
      )
    }
  }
}

/** One MCP server object (one per HTTP client); its calls run on `run` (the surface's fiber set). */
export const makeServer = (
  run: <A>(effect: Effect.Effect<A>, signal: AbortSignal) => Promise<A>,
  sessions: Sessions["Service"],
  options: McpOptions,
  client: Client = { used: new Set() }
) => {
  const server = Front.newServer(Server, options.toolNames)
  const { list, call } = handlers(run, sessions, options, client)
  server.setRequestHandler(ListToolsRequestSchema, list)
  server.setRequestHandler(CallToolRequestSchema, call)
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
        // A defect rejects the SDK's handler, which answers -32603 with its message: it is logged here.
        effect.pipe(Effect.tapDefect((defect) => Effect.logError("an MCP call failed with a defect", defect))),
        Effect.callback<never>((resume) => {
          if (signal.aborted) return resume(Effect.interrupt)
          signal.addEventListener("abort", () => resume(Effect.interrupt), { once: true })
        })
      )
    )
  return { run, drain }
})

/**
 * MCP over stdio (on the front Main.ts may have opened at spawn) until stdin closes, stdout breaks (the client died),
 * the transport closes (a message over its 10 MB limit) or `stop` completes; then calls in flight answer
 * `shutting_down` and the service shuts down.
 */
export const serveStdio = (options: McpOptions, stop: Effect.Effect<void>, sessions: Sessions["Service"]) =>
  Effect.gen(function* () {
    const { run, drain } = yield* runner
    const front = yield* Effect.promise(() => Front.open(options.toolNames))
    yield* Effect.addFinalizer(() => Effect.promise(() => front.server.close().catch(() => undefined)))
    front.serve(handlers(run, sessions, options))
    yield* Effect.raceFirst(
      Effect.promise(() => front.closed),
      stop
    )
    yield* sessions.shutdown
    yield* drain
  })
