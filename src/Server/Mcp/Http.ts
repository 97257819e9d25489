/**
 * MCP over Streamable HTTP at `/mcp`: one SDK transport per MCP session, Host/Origin checked against the bound
 * address and configured names, a bearer token off loopback, unknown sessions answered 404, idle ones expired.
 */
import { randomUUID, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { networkInterfaces } from "node:os"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Option, Redacted, Schedule } from "effect"
import * as Address from "../../Egress/Address.ts"
import { NotConfigured } from "../../Errors/Engine.ts"
import { InvalidInput } from "../../Errors/Page.ts"
import type { SwitchyardError } from "../../Errors.ts"
import { Questions } from "../../Takeover/Questions.ts"
import { Takeovers } from "../../Takeover/Takeovers.ts"
import { type Client, type McpOptions, makeServer, runner } from "../Mcp.ts"
import { refuse, Sessions } from "../Sessions.ts"

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
  /** Set to the port the server listens on once it does (a configured 0 lets the system pick it): the sessions'
   * egress refuses it (Service.ts). */
  readonly bound?: Deferred.Deferred<number> | undefined
}

/** Refuses to expose the service beyond this machine without a token. */
export const checkHttpOptions = (options: HttpOptions) =>
  !Address.isLoopbackHost(options.host) && !options.token
    ? Effect.fail(
        new InvalidInput({
          field: "http.token",
          message: `binding MCP over HTTP to ${options.host} needs a bearer token (--token or SWITCHYARD_HTTP_TOKEN); only a loopback address (127.0.0.0/8, ::1, localhost) may go without`
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
  const local = Address.isLoopbackHost(options.host) || wildcard(options.host) ? ["127.0.0.1", "::1", "localhost"] : []
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
  // As on stdio: a leading BOM is ignored, bytes that are not UTF-8 are a parse error.
  let text: string
  try {
    text = utf8.decode(Buffer.concat(chunks))
  } catch {
    throw new Error("the body is not UTF-8")
  }
  return text === "" ? undefined : (JSON.parse(text) as unknown)
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

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
    const takeovers = yield* Effect.serviceOption(Takeovers)
    const questions = yield* Effect.serviceOption(Questions)
    const { run, drain } = yield* runner
    const allowed = allowedHostsOf(options)
    /** Live MCP sessions by id, least recently used first (a request moves its session to the end). */
    const live = new Map<string, McpSession>()

    /** Every MCP client's browser sessions, to tell whether another client still uses one. */
    const clients = new Set<Client>()

    /**
     * An MCP session ended (DELETE, its transport closed, idle expiry, eviction): the browser sessions it used, unless
     * another client uses them too, hibernate — their pages saved, their browsers freed for others.
     */
    const release = (client: Client) => {
      if (!clients.delete(client)) return
      const stillUsed = new Set([...clients].flatMap((other) => [...other.used]))
      const unused = [...client.used].filter((name) => !stillUsed.has(name))
      if (unused.length === 0) return
      run(
        Effect.forEach(unused, (name) => sessions.hibernate(name), { discard: true }),
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

    /**
     * `POST /sessions/<name>/resume` ends that session's takeover; `POST /resume` ends the one takeover open (or names
     * the sessions a person holds, when there are several). Neither opens a session, so neither starts a display. A
     * body `{answer}` answers the question a workflow's wait on the named session asks (a job application's "was it
     * submitted?"); with no such wait it is refused, never dropped, and the takeover goes on.
     */
    const resumeOver = (named: string | undefined, answer: string | undefined) =>
      Effect.gen(function* () {
        const conflict = (error: SwitchyardError, extra: Record<string, unknown> = {}) => ({
          status: 409,
          body: { ...refuse(error, {}), ...extra }
        })
        if (named !== undefined && Option.isSome(questions)) {
          const asked = yield* Effect.result(questions.value.answer(named, answer))
          if (asked._tag === "Failure") return conflict(asked.failure, { session: named })
          if (Option.isSome(asked.success)) return { status: 200, body: { ...asked.success.value, session: named } }
        }
        if (answer !== undefined) {
          const message = `no question waits for an answer on session "${named ?? ""}" here, so "${answer}" was not taken and nothing was resumed: --submitted and --not-submitted answer a job application's question on its submit, which \`switchyard resume\` finds in the application's store (--store FILE, or DATABASE_URL for a fleet); resume without an answer to end a person's takeover`
          return conflict(new InvalidInput({ field: "answer", message }), named === undefined ? {} : { session: named })
        }
        if (Option.isNone(takeovers)) {
          const message = "no person can take over on this service (start it with SWITCHYARD_HUMAN=on)"
          return conflict(new NotConfigured({ engine: "human", action: "resume", message }))
        }
        const held = (yield* takeovers.value.held).map((t) => t.session)
        const session = named ?? (held.length === 1 ? held[0] : undefined)
        if (session === undefined || !held.includes(session)) {
          const message =
            named !== undefined
              ? `no person holds session "${named}"${held.length === 0 ? "" : ` (they hold ${held.join(", ")})`}`
              : held.length === 0
                ? "no person holds a session: nothing to resume"
                : `a person holds ${held.length} sessions (${held.join(", ")}): POST /sessions/<name>/resume names one`
          return conflict(new InvalidInput({ field: "session", message }), { held })
        }
        const resumed = yield* sessions.call(session, "browser.resume", {})
        return { status: resumed.ok ? 200 : 409, body: { ...resumed, session } }
      })

    /** The answer a resume's body carries (`{"answer": "submitted"}`); an empty body carries none. */
    const answerIn = (body: unknown): string | undefined | InvalidInput => {
      if (body === undefined) return undefined
      const answer = typeof body === "object" && body !== null ? (body as { answer?: unknown }).answer : body
      if (answer === undefined || answer === null) return undefined
      return answer === "submitted" || answer === "not-submitted"
        ? answer
        : new InvalidInput({
            field: "answer",
            message: `a resume's body is {"answer": "submitted" | "not-submitted"} or empty, not ${JSON.stringify(body).slice(0, 100)}`
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
          `no endpoint ${url.pathname}; MCP is served at /mcp, a person's "done" at POST /sessions/<name>/resume (or POST /resume while one session is held)`
        )
      }
      if (!authorized(req, options.token)) {
        res.setHeader("www-authenticate", "Bearer")
        return jsonError(res, 401, -32001, "missing or wrong bearer token")
      }
      if (resume) {
        // The person's "done" button: ends a takeover without an MCP client.
        if (req.method !== "POST") return jsonError(res, 405, -32600, "POST to resume")
        let sent: unknown
        try {
          sent = await readBody(req, options.maxBodyBytes)
        } catch (error) {
          return jsonError(res, 400, -32700, `Parse error: ${(error as Error).message}`)
        }
        const answer = answerIn(sent)
        if (answer instanceof InvalidInput) {
          res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(refuse(answer, {})))
          return
        }
        const { status, body } = await run(
          resumeOver(resume[1] === undefined ? undefined : decodeURIComponent(resume[1]), answer),
          new AbortController().signal
        )
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
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
    if (options.bound !== undefined) yield* Deferred.succeed(options.bound, port)
    const host = options.host.includes(":") ? `[${options.host}]` : options.host
    // Takeovers say how to resume over HTTP and with the CLI, which reach a wildcard bind on loopback.
    const local = wildcard(options.host) ? "127.0.0.1" : host
    if (Option.isSome(takeovers))
      yield* takeovers.value.serving({ url: `http://${local}:${port}`, token: options.token !== undefined })
    options.onListening?.(`http://${host}:${port}/mcp`)
    yield* stop
    yield* sessions.shutdown
    yield* drain
  })
