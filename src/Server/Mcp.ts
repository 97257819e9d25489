/**
 * The MCP surface (the official TypeScript SDK's server): the stable `browser.*` tool list with JSON schemas and
 * descriptions, every call answered through the Sessions' Routers with the state block, screenshots as image
 * content. Stdio by default; Streamable HTTP on 127.0.0.1, with a bearer token required when bound elsewhere.
 */
import { randomUUID, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { networkInterfaces } from "node:os"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Option, Redacted, Schedule } from "effect"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { splitCommon } from "../Cascade/Tool.ts"
import { find, toolNames, tools } from "../Cascade/Tools.ts"
import { InvalidInput } from "../Errors/Page.ts"
import * as Events from "../Logging/Events.ts"
import { Sessions } from "./Sessions.ts"

export const serverInfo = { name: "switchyard", version: "0.1.0" }

/** How MCP lists tool names: `browser_navigate` (the default, what model APIs accept) or `browser.navigate`. */
export type ToolNames = "underscore" | "dotted"

export interface McpOptions {
  readonly toolNames: ToolNames
  /** A call with a progressToken reports progress at least this often, besides each cascade step. */
  readonly progressIntervalMs: number
}

/** What a progress notification says about an event of the call: the cascade's steps, in a few words. */
const describeEvent = (event: Events.Stamped): string => {
  const fields = event as Record<string, unknown>
  const engine =
    typeof fields.engine === "string" ? ` ${fields.engine}${fields.mode ? `/${String(fields.mode)}` : ""}` : ""
  const detail = ["reason", "from", "to", "level", "attempt"]
    .filter((key) => fields[key] !== undefined)
    .map((key) => `${key} ${String(fields[key])}`)
    .join(", ")
  return `${event.event}${engine}${detail === "" ? "" : ` (${detail})`}`
}

/**
 * Runs a call reporting progress through `notify`: each event the cascade emits (attempt start, failure, fallback,
 * switch, escalation) and, while it runs, a heartbeat every `everyMs`.
 */
const withProgress = <A>(work: Effect.Effect<A>, notify: (message: string) => void, everyMs: number) =>
  Effect.gen(function* () {
    const sink = yield* Events.Events
    const started = Date.now()
    const heartbeat = Effect.sync(() =>
      notify(`still running after ${Math.round((Date.now() - started) / 1000)} s`)
    ).pipe(Effect.delay(everyMs), Effect.forever)
    const forwarding: Events.EventSink = {
      emit: (event) => sink.emit(event).pipe(Effect.andThen(Effect.sync(() => notify(describeEvent(event)))))
    }
    return yield* Effect.raceFirst(work.pipe(Effect.provideService(Events.Events, forwarding)), heartbeat)
  })

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
/** The browser sessions one MCP client's calls go to. */
interface Client {
  /** Where calls without a `session` go; undefined: the service's default session. */
  readonly defaultSession?: string
  /** Each browser session a call went to (the service's default one as undefined). */
  readonly used: Set<string | undefined>
}

const makeServer = (
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
    if (token === undefined) return toContent(await run(work, extra.signal))
    let progress = 0
    const notify = (message: string) => {
      progress++
      extra
        .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message } })
        .catch(() => undefined)
    }
    return toContent(await run(withProgress(work, notify, options.progressIntervalMs), extra.signal))
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

export interface HttpOptions extends McpOptions {
  readonly host: string
  readonly port: number
  /** The bearer token clients must send; opened only to compare it with what a request carries. */
  readonly token?: Redacted.Redacted<string> | undefined
  /** Host names accepted in Host/Origin besides the bound address (and loopback names on a loopback bind). */
  readonly allowedHosts: ReadonlyArray<string>
  /** MCP sessions idle (no request open) this long are closed. */
  readonly sessionIdleMs: number
  /** MCP sessions at once; past it the least recently used idle one is closed, or 503 when none is idle. */
  readonly maxSessions: number
  /** MCP clients that name no `session` share the service's default browser session (else each gets its own). */
  readonly sharedDefaultSession: boolean
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

const wildcard = (host: string) => ["0.0.0.0", "::", ""].includes(host)

/** A host name as compared: lower case, without brackets or port; undefined when it does not parse. */
const hostnameOf = (value: string) => {
  try {
    return new URL(value.includes("://") ? value : `http://${value}`).hostname.replace(/^\[|\]$/g, "").toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * The host names a request may name in Host and Origin: the bound address (every interface's on a wildcard bind),
 * loopback names on a loopback or wildcard bind, and the configured ones. Anything else is a DNS-rebinding page.
 */
const allowedHostsOf = (options: HttpOptions) => {
  const bound = wildcard(options.host)
    ? Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
    : [options.host]
  const local = loopback(options.host) || wildcard(options.host) ? ["127.0.0.1", "::1", "localhost"] : []
  return new Set([...bound, ...local, ...options.allowedHosts].map((h) => hostnameOf(h) ?? h.toLowerCase()))
}

const hostAllowed = (req: IncomingMessage, allowed: ReadonlySet<string>) => {
  const host = hostnameOf(req.headers.host ?? "")
  if (host === undefined || !allowed.has(host)) return false
  const origin = req.headers.origin
  if (origin === undefined) return true
  const from = hostnameOf(origin)
  return from !== undefined && allowed.has(from)
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

/** One MCP client's session over HTTP: its transport, the requests it has open, when it last sent one. */
interface McpSession {
  readonly id: string
  readonly transport: StreamableHTTPServerTransport
  open: number
  lastUsed: number
}

/**
 * MCP over Streamable HTTP at `/mcp`, one SDK transport per MCP session, until the scope closes. Host and Origin
 * must name the bound address or a configured host (else 403); unknown or ended session ids get 404; sessions with
 * no request for `sessionIdleMs` are closed; past `maxSessions` a new session closes the least recently used idle
 * one (503 with Retry-After when every one has a request open).
 */
export const serveHttp = (options: HttpOptions & { readonly maxBodyBytes: number }, stop: Effect.Effect<void>) =>
  Effect.gen(function* () {
    yield* checkHttpOptions(options)
    const sessions = yield* Sessions
    const { run, drain } = yield* runner
    const allowed = allowedHostsOf(options)
    /** Live MCP sessions by id, least recently used first (a request moves its session to the end). */
    const live = new Map<string, McpSession>()

    /** Every MCP client's browser sessions, to tell whether another client still uses one. */
    const clients = new Set<Client>()

    /** An MCP session ended: the browser sessions it used close, unless another client uses them too. */
    const release = (client: Client) => {
      if (!clients.delete(client)) return
      const stillUsed = new Set([...clients].flatMap((other) => [...other.used]))
      const unused = [...client.used].filter((name) => !stillUsed.has(name))
      if (unused.length === 0) return
      run(
        Effect.forEach(unused, (name) => sessions.close(name), { discard: true }),
        new AbortController().signal
      ).catch(() => undefined)
    }

    /** Ends an MCP session: its transport and server close. */
    const end = (mcp: McpSession) => {
      live.delete(mcp.id)
      return mcp.transport.close().catch(() => undefined)
    }

    /** Counts a request as open on its session until the response closes. */
    const opened = (mcp: McpSession, res: ServerResponse) => {
      mcp.open++
      mcp.lastUsed = Date.now()
      if (live.delete(mcp.id)) live.set(mcp.id, mcp)
      res.once("close", () => {
        mcp.open--
        mcp.lastUsed = Date.now()
      })
    }

    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      if (!hostAllowed(req, allowed)) {
        return jsonError(
          res,
          403,
          -32000,
          "Forbidden: the Host or Origin header names a host this service does not serve (see http.allowedHosts)"
        )
      }
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
      if (id !== undefined) {
        const mcp = typeof id === "string" ? live.get(id) : undefined
        // 404 tells a client its session is gone, so it initializes a new one (the spec's rule).
        if (!mcp) return jsonError(res, 404, -32001, "Session not found: it ended or expired; initialize a new one")
        opened(mcp, res)
        return mcp.transport.handleRequest(req, res, body)
      }
      if (req.method !== "POST" || !isInitializeRequest(body)) {
        return jsonError(res, 400, -32000, "no MCP session: send an initialize request first")
      }
      if (live.size >= options.maxSessions) {
        const idle = [...live.values()].find((mcp) => mcp.open === 0)
        if (!idle) {
          res.setHeader("retry-after", "5")
          return jsonError(
            res,
            503,
            -32000,
            `${live.size} MCP sessions are open and each has a request open (the limit is ${options.maxSessions}); retry later`
          )
        }
        await end(idle)
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          const mcp: McpSession = { id: sessionId, transport, open: 0, lastUsed: Date.now() }
          live.set(sessionId, mcp)
          opened(mcp, res)
        }
      })
      const client: Client = {
        ...(options.sharedDefaultSession ? {} : { defaultSession: `mcp-${randomUUID()}` }),
        used: new Set()
      }
      clients.add(client)
      transport.onclose = () => {
        if (transport.sessionId) live.delete(transport.sessionId)
        release(client)
      }
      await makeServer(run, sessions, options, client).connect(transport)
      return transport.handleRequest(req, res, body)
    }

    // Idle MCP sessions are closed, so clients that went away without DELETE do not hold memory for good.
    yield* Effect.forkScoped(
      Effect.promise(async () => {
        const now = Date.now()
        for (const mcp of [...live.values()]) {
          if (mcp.open === 0 && now - mcp.lastUsed > options.sessionIdleMs) await end(mcp)
        }
      }).pipe(Effect.repeat(Schedule.spaced(Math.max(250, Math.min(60_000, options.sessionIdleMs / 4)))))
    )

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
          for (const mcp of [...live.values()]) await end(mcp)
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
