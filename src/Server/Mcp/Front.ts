/**
 * MCP's front on stdio: the SDK server on this process's stdin and stdout, with what `initialize` answers. It loads
 * nothing but the SDK, so Main.ts can open it at spawn and answer `initialize` while the command line, the
 * configuration and the service load; the tool list and calls wait until Mcp.ts hands it their handlers.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type {
  CallToolRequest,
  CallToolResult,
  EmptyResult,
  ListResourcesResult,
  ListToolsResult,
  ReadResourceRequest,
  ReadResourceResult,
  ServerNotification,
  ServerRequest,
  SubscribeRequest,
  UnsubscribeRequest
} from "@modelcontextprotocol/sdk/types.js"

export const serverInfo = { name: "switchyard", version: "0.1.0" }

/** How MCP lists tool names: `browser_navigate` (the default, what model APIs accept) or `browser.navigate`. */
export type ToolNames = "underscore" | "dotted"

export const spell = (name: string, names: ToolNames) => (names === "dotted" ? name : name.replaceAll(".", "_"))

const instructions = (names: ToolNames) => {
  const t = (name: string) => spell(`browser.${name}`, names)
  return (
    `Browser automation that does not get stuck. Start with ${t("navigate")}, then ${t("act")} one step at a time ` +
    `(${t("observe")} when unsure what to click) and ${t("extract")} to read. Every answer has a \`state\` block: the ` +
    "engine in use, the page, and which tools work now; follow its `message` when a call fails."
  )
}

const sdk = () =>
  Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("./StdioTransport.ts"),
    import("@modelcontextprotocol/sdk/types.js")
  ])

/** One MCP server as every surface starts it: the same `initialize` answer on stdio and over HTTP. */
export const newServer = (ServerClass: typeof Server, names: ToolNames) =>
  new ServerClass(serverInfo, {
    // Resources: what a client's calls made (screenshots, PDFs, whole snapshots, downloads), for that client alone.
    capabilities: { tools: { listChanged: false }, resources: { subscribe: true, listChanged: true } },
    instructions: instructions(names)
  })

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** What the tool list and calls are answered with, once the tools are loaded. */
export interface Handlers {
  readonly list: () => Promise<ListToolsResult>
  readonly call: (request: CallToolRequest, extra: Extra) => Promise<CallToolResult>
  readonly resources: ResourceHandlers
}

/** The client's resources: listed, read, and subscribed to for `notifications/resources/updated`. */
export interface ResourceHandlers {
  readonly list: () => Promise<ListResourcesResult>
  readonly read: (request: ReadResourceRequest) => Promise<ReadResourceResult>
  readonly subscribe: (request: SubscribeRequest) => Promise<EmptyResult>
  readonly unsubscribe: (request: UnsubscribeRequest) => Promise<EmptyResult>
}

export interface Front {
  readonly server: Server
  readonly toolNames: ToolNames
  /** Answers the tool list and calls from now on (and those that came before). */
  readonly serve: (handlers: Handlers) => void
  /** Resolves when stdin closes, stdout breaks (the client died) or the transport closes. */
  readonly closed: Promise<void>
}

let opened: Promise<Front> | undefined

/** The stdio front: opened once (by Main.ts at spawn, or by the stdio surface), every later call gets that one. */
export const open = (names: ToolNames): Promise<Front> => {
  opened ??= sdk().then(([{ Server }, { StdioTransport }, types]) => {
    const server = newServer(Server, names)
    let serve!: (handlers: Handlers) => void
    const handlers = new Promise<Handlers>((resolve) => {
      serve = resolve
    })
    server.setRequestHandler(types.ListToolsRequestSchema, async () => (await handlers).list())
    server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) =>
      (await handlers).call(request, extra)
    )
    server.setRequestHandler(types.ListResourcesRequestSchema, async () => (await handlers).resources.list())
    server.setRequestHandler(types.ReadResourceRequestSchema, async (request) =>
      (await handlers).resources.read(request)
    )
    server.setRequestHandler(types.SubscribeRequestSchema, async (request) =>
      (await handlers).resources.subscribe(request)
    )
    server.setRequestHandler(types.UnsubscribeRequestSchema, async (request) =>
      (await handlers).resources.unsubscribe(request)
    )
    const closed = new Promise<void>((resolve) => {
      process.stdin.once("end", resolve)
      process.stdin.once("close", resolve)
      // The client went away (nobody reads stdout): nothing can be answered any more, so shut down.
      process.stdout.on("error", () => resolve())
      server.onclose = () => resolve()
    })
    return server.connect(new StdioTransport()).then(() => ({ server, toolNames: names, serve, closed }))
  })
  return opened
}

/** The flags `serve` on stdio may have for the front to open at spawn. */
const frontFlags = ["--headed", "--log-dir", "--max-browsers"]

/**
 * Whether this process serves MCP on stdio with tool names known before the configuration is read: `serve` (or no
 * command) with no flag but those above (`flags` from ServeArgs.flags; undefined: not a `serve`), no fleet database,
 * and neither a configuration file nor SWITCHYARD_MCP_TOOL_NAMES that could spell the tools otherwise. Anything else
 * starts without the front.
 */
export const opensAtSpawn = (flags: ReadonlySet<string> | undefined, env: Record<string, string | undefined>) => {
  if (env.SWITCHYARD_CONFIG || env.SWITCHYARD_MCP_TOOL_NAMES) return false
  if (env.SWITCHYARD_DATABASE_URL || env.DATABASE_URL) return false
  return flags !== undefined && [...flags].every((flag) => frontFlags.includes(flag))
}
