/**
 * The MCP surface (the official TypeScript SDK's server): the stable `browser.*` tool list with JSON schemas and
 * descriptions, every call answered through the Sessions' Routers with the state block, screenshots as image
 * content. Stdio here; Streamable HTTP in Mcp/Http.ts, progress notifications in Mcp/Progress.ts.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Option } from "effect"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { splitCommon } from "../Cascade/Tool.ts"
import { find, toolNames, tools } from "../Cascade/Tools.ts"
import * as ClientResources from "./Mcp/ClientResources.ts"
import * as Front from "./Mcp/Front.ts"
import { withProgress } from "./Mcp/Progress.ts"
import * as Resources from "./Mcp/Resources.ts"
import type { Sessions } from "./Sessions.ts"

const spell = Front.spell

export interface McpOptions {
  readonly toolNames: Front.ToolNames
  /** A call with a progressToken reports progress at least this often, besides each cascade step. */
  readonly progressIntervalMs: number
}

type Content =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name: string; mimeType: string; description?: string }

const linkTo = (entry: Resources.Entry): Content => ({
  type: "resource_link",
  uri: entry.uri,
  name: entry.name,
  mimeType: entry.mimeType,
  ...(entry.description === undefined ? {} : { description: entry.description })
})

/** The page and engine as the client's previous answer on a session showed them. */
export type Shown = Map<string | undefined, Partial<Record<"engine" | "level" | "url" | "title", unknown>>>

/**
 * An answer's text, compact: what the call did and what changed. The call's ids (the logs find a call by them) and an
 * act's echoed action stay in the structured content; the state's engine, level, url and title come when they
 * changed since the client's previous answer on the session (`shown`), the rest of the state when the Router sent it.
 */
const compactText = (answer: Record<string, unknown>, shown: Shown | undefined, session: string | undefined) => {
  const { traceId: _t, attemptId: _a, stepId: _s, state, result, ...rest } = answer
  const { engine, level, url, title, ...changing } = (state ?? {}) as Record<string, unknown>
  const now = { engine, level, url, title }
  const before = shown?.get(session)
  shown?.set(session, now)
  const changed = Object.fromEntries(
    Object.entries(now).filter(([key, value]) => before === undefined || before[key as keyof typeof now] !== value)
  )
  const page = { ...changed, ...changing }
  // An act's answer: what the page now shows on the target and where the page went, not the action run to get there.
  const acted =
    typeof result === "object" && result !== null && (result as { success?: unknown }).success === true
      ? (({ success: _ok, action: _action, ...kept }) => kept)(result as Record<string, unknown>)
      : result
  return JSON.stringify({
    ...(acted === undefined ? {} : { result: acted }),
    ...rest,
    ...(Object.keys(page).length > 0 ? { state: page } : {})
  })
}

/**
 * An answer as MCP content: the result and what changed as compact JSON text (for clients that ignore structured
 * content), a screenshot as an image block, and a successful answer in full as `structuredContent` matching the
 * tool's `outputSchema`. What the call made besides (`made`: the client's new resources) comes as resource links; a
 * PDF's bytes only there. A failure comes whole, with its ids.
 */
export const toContent = (
  answer: ToolAnswer,
  names: Front.ToolNames,
  made: ReadonlyArray<Resources.Entry> = [],
  shown?: Shown,
  session?: string
): { content: Array<Content>; structuredContent?: Record<string, unknown>; isError?: boolean } => {
  const { ok, result, resources: _resources, ...rest } = respelled(answer, names)
  if (!ok) {
    shown?.delete(session)
    return { content: [{ type: "text", text: JSON.stringify(rest) }], isError: true }
  }
  const links = made.map(linkTo)
  const image = result as { mimeType?: string; data?: string } | undefined
  if (image?.mimeType === "image/png" && typeof image.data === "string") {
    // The picture once, as the image block: not again as base64 in the structured content. What was done to it to
    // fit (scaled, clipped) goes with the text.
    const { data, ...about } = image
    const resized = Object.keys(about).length > 1
    return {
      content: [
        { type: "image", data, mimeType: "image/png" },
        { type: "text", text: compactText(resized ? { result: about, ...rest } : rest, shown, session) },
        ...links
      ],
      structuredContent: { result: about, ...rest }
    }
  }
  // A file's bytes (a PDF) are the resource's: the answer names it instead.
  const file = made.find((e) => e.mimeType !== "image/png" && e.blob !== undefined && e.blob === image?.data)
  const shownResult =
    file === undefined ? result : { ...(result as Record<string, unknown>), data: undefined, uri: file.uri }
  const structuredContent = { result: shownResult, ...rest }
  return {
    content: [{ type: "text", text: compactText(structuredContent, shown, session) }, ...links],
    structuredContent
  }
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
  /** What the client's calls made, as its resources (made with the client's first call when absent). */
  resources?: Resources.Store
  /** Sends the client a notification outside any request (a download that finished). */
  notify?: (notification: ServerNotification) => Promise<void>
}

/** The tool list and calls of one MCP client, answered through the Sessions. */
export const handlers = (
  run: <A>(effect: Effect.Effect<A>, signal: AbortSignal) => Promise<A>,
  sessions: Sessions["Service"],
  options: McpOptions,
  client: Client = { used: new Set() }
): Front.Handlers => {
  const list = listed(options.toolNames)
  client.resources ??= Resources.make()
  const shown: Shown = new Map()
  const { collect, handlers: resources } = ClientResources.make(client.resources, {
    page: (session) => run(sessions.page(session), new AbortController().signal),
    notify: (notification) => client.notify?.(notification).catch(() => undefined) ?? Promise.resolve()
  })

  return {
    resources,
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
      // A bad session name was refused (nothing ran): its answer names no session of the client.
      const browserSession = typeof session === "string" ? session : undefined
      const answered = (answer: ToolAnswer) =>
        toContent(
          answer,
          options.toolNames,
          collect(answer, browserSession),
          // A tool whose answer carries the whole state block (browser.status) shows it all.
          tool.value.fullState ? undefined : shown,
          browserSession
        )
      if (token === undefined) return answered(await run(work, extra.signal))
      let progress = 0
      const progressed = (message: string) => {
        progress++
        extra
          .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message } })
          .catch(() => undefined)
      }
      return answered(await run(withProgress(work, progressed, options.progressIntervalMs), extra.signal))
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
  client.notify = (notification) => server.notification(notification)
  const { list, call, resources } = handlers(run, sessions, options, client)
  server.setRequestHandler(ListToolsRequestSchema, list)
  server.setRequestHandler(CallToolRequestSchema, call)
  server.setRequestHandler(ListResourcesRequestSchema, resources.list)
  server.setRequestHandler(ReadResourceRequestSchema, resources.read)
  server.setRequestHandler(SubscribeRequestSchema, resources.subscribe)
  server.setRequestHandler(UnsubscribeRequestSchema, resources.unsubscribe)
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
    front.serve(
      handlers(run, sessions, options, {
        used: new Set(),
        notify: (notification) => front.server.notification(notification)
      })
    )
    yield* Effect.raceFirst(
      Effect.promise(() => front.closed),
      stop
    )
    yield* sessions.shutdown
    yield* drain
  })
