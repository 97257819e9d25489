/**
 * The egress proxy the browser is forced through: plain HTTP in absolute form and CONNECT tunnels (HTTPS, WSS, WS;
 * no TLS interception), each checked against the policy on the addresses the proxy itself resolved and then
 * connects to — the browser never resolves a name, so a name that rebinds between check and connect cannot pass.
 * A destination it could not reach (refused, not resolved, timed out, reset) is recorded with its cause and answered
 * with a page marked as the proxy's own, so no call takes it for the site's. Its headers are in Proxy/Headers.ts.
 */
import { lookup as dnsLookup } from "node:dns/promises"
import type { IncomingMessage, ServerResponse } from "node:http"
import { connect, type LookupFunction, type Socket } from "node:net"
import type { Duplex } from "node:stream"
import { Effect } from "effect"
import { defaultRedactor } from "../Logging/Redact.ts"
import * as Address from "./Address.ts"
import * as Policy from "./Policy.ts"
import { answerHeaders, endToEnd, headerLines, kindOf, plainAnswer } from "./Proxy/Headers.ts"
import { causeOf, type Unreached, unreachedAnswer } from "./Unreached.ts"

export { type Unreached, unreachedHeader } from "./Unreached.ts"

// Not `import ... from "node:http"`: an ES import of node:http reads every export, and its WebSocket getters load
// Node's bundled undici (fetch, HTTP/2, TLS, zlib): ~90 ms of CPU on every start, before the first browser.
const { Agent, createServer, request } = process.getBuiltinModule("node:http")

/** A refused request, as recorded for the session's current call. */
export interface Block {
  /** The URL with query values, fragment and credentials redacted (a tunnel: `https://host:port`). */
  readonly url: string
  readonly host: string
  readonly port: number
  readonly rule: string
  readonly reason: string
  /** How the browser asked: plain HTTP, a CONNECT tunnel, or a local scheme stopped in the browser. */
  readonly via: "http" | "connect" | "scheme"
  /** What the browser said it was loading (`Sec-Fetch-Dest`: `document` is a top-level page or popup, `iframe` a
   * frame); absent for a tunnel, whose headers the proxy cannot see. */
  readonly dest?: string
  readonly at: number
}

/** Names to addresses; the default is the system resolver (`dns.lookup`, every address). */
export type Resolver = (host: string) => Promise<ReadonlyArray<string>>

export interface ProxyOptions {
  readonly policy: Policy.Policy
  readonly resolve?: Resolver
  readonly onBlock: (block: Block) => void
  /** Told of each destination the proxy could not reach. */
  readonly onUnreached?: (unreached: Unreached) => void
  /** How long a name may take to resolve. */
  readonly resolveTimeoutMs?: number
  /** How long a connection to the destination may take to open; default 15 s. */
  readonly connectTimeoutMs?: number
}

export interface RunningProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's `--proxy-server`. */
  readonly url: string
  readonly port: number
}

export const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address)

const unbracket = (host: string) =>
  host
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase()

/** A `lookup` for `net.connect` that answers only with addresses already checked. */
const checkedLookup =
  (addresses: ReadonlyArray<Address.Address>): LookupFunction =>
  (_host, options, callback) => {
    const all = addresses.map((a) => ({ address: Address.format(a), family: a.version }))
    if (options.all) return (callback as (e: null, a: typeof all) => void)(null, all)
    const first = all[0]
    if (first === undefined) return callback(new Error("no checked address"), "", 4)
    callback(null, first.address, first.family)
  }

type Outcome =
  | { readonly ok: true; readonly addresses: ReadonlyArray<Address.Address> }
  | {
      readonly ok: false
      readonly status: number
      readonly rule?: string
      readonly reason: string
      /** A destination not reached (no rule refused it): the network's code and the cause. */
      readonly unreached?: { readonly code: string; readonly cause: string }
    }

/** Starts the proxy on 127.0.0.1 and an ephemeral port; closing the scope closes it and every connection through it. */
export const start = (options: ProxyOptions) =>
  Effect.acquireRelease(
    Effect.callback<{
      readonly server: ReturnType<typeof createServer>
      readonly close: () => Promise<void>
      readonly port: number
    }>((resume) => {
      const resolve = options.resolve ?? systemResolver
      const timeoutMs = options.resolveTimeoutMs ?? 10_000
      const connectTimeoutMs = options.connectTimeoutMs ?? 15_000
      const sockets = new Set<Duplex>()
      const track = (socket: Duplex) => {
        sockets.add(socket)
        socket.once("close", () => sockets.delete(socket))
      }
      const agent = new Agent({ keepAlive: true })
      // Its own connection for each request that is not sent again (see `resendable`).
      const fresh = new Agent({ keepAlive: false })

      /** The policy's answer for a request, after resolving the name itself when the names pass. */
      const check = async (target: Policy.Target): Promise<Outcome> => {
        const literal = Address.parse(target.host)
        const early = literal === undefined ? Policy.decide(options.policy, target, []) : { allowed: true as const }
        if (!early.allowed) return { ok: false, status: 403, rule: early.rule, reason: early.reason }
        let addresses: ReadonlyArray<Address.Address>
        if (literal !== undefined) addresses = [literal]
        else if (Address.isLoopbackName(target.host))
          addresses = [Address.parse("127.0.0.1"), Address.parse("::1")].filter((a) => a !== undefined)
        else {
          try {
            const found = await within(resolve(target.host), timeoutMs)
            addresses = found.flatMap((text) => {
              const a = Address.parse(text)
              return a === undefined ? [] : [a]
            })
          } catch (error) {
            const timedOut = error instanceof ResolveTimeout
            const unreached = timedOut
              ? { code: "ETIMEDOUT", cause: `ETIMEDOUT resolving ${target.host} (no answer within ${timeoutMs} ms)` }
              : causeOf(error, target.host)
            // A resolver's ENOTFOUND names the host itself; other failures name it here.
            const named = unreached.cause.includes(target.host)
              ? unreached
              : { ...unreached, cause: `${unreached.code} ${target.host}` }
            return { ok: false, status: 502, reason: `cannot resolve ${target.host}: ${named.cause}`, unreached: named }
          }
          if (addresses.length === 0) {
            const unreached = { code: "ENOTFOUND", cause: `ENOTFOUND ${target.host}` }
            return { ok: false, status: 502, reason: `${target.host} has no address`, unreached }
          }
        }
        const decision = Policy.decide(options.policy, target, addresses)
        return decision.allowed
          ? { ok: true, addresses }
          : { ok: false, status: 403, rule: decision.rule, reason: decision.reason }
      }

      const unreached = (
        url: string,
        target: { readonly host: string; readonly port: number },
        failure: { readonly code: string; readonly cause: string },
        via: Unreached["via"],
        dest?: unknown
      ) =>
        options.onUnreached?.({
          url: defaultRedactor.url(url),
          host: target.host,
          port: target.port,
          cause: failure.cause,
          code: failure.code,
          via,
          ...(typeof dest === "string" && dest !== "" ? { dest } : {}),
          at: Date.now()
        })

      const record = (url: string, target: Policy.Target, outcome: Outcome, via: Block["via"], dest?: unknown) => {
        if (outcome.ok) return
        if (outcome.unreached !== undefined)
          return unreached(url, target, outcome.unreached, via === "scheme" ? "http" : via, dest)
        if (outcome.rule === undefined) return
        options.onBlock({
          url: defaultRedactor.url(url),
          host: target.host,
          port: target.port,
          rule: outcome.rule,
          reason: outcome.reason,
          via,
          ...(typeof dest === "string" && dest !== "" ? { dest } : {}),
          at: Date.now()
        })
      }

      const refuse = (res: ServerResponse, status: number, reason: string, rule?: string) => {
        const answer = plainAnswer(reason, rule)
        res.writeHead(status, answer.headers).end(answer.body)
      }

      const notReached = (
        res: ServerResponse,
        url: string,
        failure: { readonly code: string; readonly cause: string }
      ) => {
        const answer = unreachedAnswer(defaultRedactor.url(url), failure.cause, failure.code)
        res.writeHead(failure.code === "ETIMEDOUT" ? 504 : 502, answer.headers).end(answer.body)
      }

      const forward = async (req: IncomingMessage, res: ServerResponse) => {
        const raw = req.url ?? ""
        if (!/^http:\/\//i.test(raw) || !URL.canParse(raw))
          return refuse(res, 400, "this is an egress proxy: only absolute http:// requests and CONNECT are served")
        const url = new URL(raw)
        const target: Policy.Target = {
          scheme: "http",
          host: unbracket(url.hostname),
          port: Number(url.port || 80),
          kind: kindOf(req)
        }
        const outcome = await check(target)
        if (!outcome.ok) {
          record(raw, target, outcome, "http", req.headers["sec-fetch-dest"])
          if (outcome.unreached !== undefined) return notReached(res, raw, outcome.unreached)
          return refuse(res, outcome.status, outcome.reason, outcome.rule)
        }
        const where = `${target.host}:${target.port}`
        // A request the site may act on (a form's POST) never rides a kept connection that may be closing under it.
        const again = resendable.has(req.method ?? "") && !hasBody(req)
        const send = () => {
          const upstream = request({
            host: target.host,
            port: target.port,
            method: req.method,
            path: `${url.pathname}${url.search}`,
            headers: endToEnd(req.rawHeaders),
            setHost: false,
            agent: again ? agent : fresh,
            maxHeaderSize: browserHeaderBytes,
            // A site's answer is read as leniently as Chromium reads it; the browser's own requests are parsed strictly.
            insecureHTTPParser: true,
            lookup: checkedLookup(outcome.addresses)
          })
          // A destination that does not accept the connection in time is not reached; a slow answer is the site's.
          let connected = false
          const connecting = setTimeout(() => {
            if (!connected) upstream.destroy(Object.assign(new Error("connect timed out"), { code: "ETIMEDOUT" }))
          }, connectTimeoutMs)
          upstream.once("socket", (socket) => {
            if (!socket.connecting) connected = true
            else socket.once("connect", () => (connected = true))
          })
          upstream.on("response", (answer) => {
            clearTimeout(connecting)
            try {
              res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answerHeaders(answer))
            } catch (error) {
              // Whatever else Node cannot pass on fails this request, never the service.
              return upstream.destroy(error as Error)
            }
            answer.pipe(res)
          })
          upstream.on("error", (error) => {
            clearTimeout(connecting)
            if (res.headersSent) return res.destroy()
            // The site closed its idle kept connection as this request went out on it, so it never read it: sent
            // again on another connection, as a browser does (a new one, in the end, is never reused).
            if (again && upstream.reusedSocket && closedUnder(error) && !res.destroyed) return send()
            const failure =
              (error as { code?: unknown }).code === "ETIMEDOUT" && !connected
                ? { code: "ETIMEDOUT", cause: `ETIMEDOUT ${where} (no connection within ${connectTimeoutMs} ms)` }
                : causeOf(error, where)
            unreached(raw, target, failure, "http", req.headers["sec-fetch-dest"])
            notReached(res, raw, failure)
          })
          res.once("close", () => {
            if (!res.writableFinished) upstream.destroy()
          })
          if (again) upstream.end()
          else req.pipe(upstream)
        }
        send()
      }

      const tunnel = async (req: IncomingMessage, client: Duplex, head: Buffer) => {
        track(client)
        client.on("error", () => client.destroy())
        const authority = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(req.url ?? "")
        const port = Number(authority?.[2])
        if (authority === null || !(port > 0 && port < 65536)) {
          const answer = plainAnswer("CONNECT needs host:port")
          return client.end(`HTTP/1.1 400 Bad Request\r\n${headerLines(answer.headers)}\r\n${answer.body}`)
        }
        const target: Policy.Target = { host: unbracket(authority[1] ?? ""), port, kind: "document" }
        const outcome = await check(target)
        if (!outcome.ok) {
          record(`https://${req.url}`, target, outcome, "connect")
          const answer =
            outcome.unreached === undefined
              ? plainAnswer(outcome.reason, outcome.rule)
              : unreachedAnswer(`https://${req.url}`, outcome.unreached.cause, outcome.unreached.code)
          const status = outcome.status === 403 ? "403 Forbidden" : "502 Bad Gateway"
          return client.end(
            `HTTP/1.1 ${status}\r\n${headerLines(answer.headers)}Connection: close\r\n\r\n${answer.body}`
          )
        }
        const upstream: Socket = connect({
          host: target.host,
          port,
          lookup: checkedLookup(outcome.addresses),
          timeout: connectTimeoutMs
        })
        track(upstream)
        let established = false
        upstream.once("connect", () => {
          established = true
          upstream.setTimeout(0)
          client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
          if (head.length > 0) upstream.write(head)
          upstream.pipe(client)
          client.pipe(upstream)
        })
        upstream.once("timeout", () => {
          if (!established) upstream.destroy(Object.assign(new Error("connect timed out"), { code: "ETIMEDOUT" }))
        })
        upstream.on("error", (error) => {
          if (established || client.destroyed) return client.destroy()
          const where = `${target.host}:${port}`
          const failure =
            (error as { code?: unknown }).code === "ETIMEDOUT"
              ? { code: "ETIMEDOUT", cause: `ETIMEDOUT ${where} (no connection within ${connectTimeoutMs} ms)` }
              : causeOf(error, where)
          unreached(`https://${req.url}`, target, failure, "connect")
          const answer = unreachedAnswer(`https://${req.url}`, failure.cause, failure.code)
          client.end(
            `HTTP/1.1 502 Bad Gateway\r\n${headerLines(answer.headers)}Connection: close\r\n\r\n${answer.body}`
          )
        })
        client.on("close", () => upstream.destroy())
        upstream.on("close", () => client.destroy())
      }

      const server = createServer({ maxHeaderSize: browserHeaderBytes }, (req, res) => void forward(req, res))
      server.on("connection", track)
      server.on("connect", (req, socket, head) => void tunnel(req, socket, head))
      // A WebSocket or other upgrade in absolute form is not something Chromium sends through a proxy: refuse it.
      server.on("upgrade", (_req, socket: Duplex) =>
        socket.end("HTTP/1.1 501 Not Implemented\r\nConnection: close\r\n\r\n")
      )
      server.on("clientError", (_error, socket) => socket.destroy())
      const close = () =>
        new Promise<void>((done) => {
          server.close(() => done())
          agent.destroy()
          fresh.destroy()
          for (const socket of sockets) socket.destroy()
        })
      server.once("error", (error) => resume(Effect.die(error)))
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resume(
          Effect.succeed({ server, close, port: typeof address === "object" && address !== null ? address.port : 0 })
        )
      })
    }),
    (running) => Effect.promise(running.close).pipe(Effect.timeoutOption(2_000))
  ).pipe(Effect.map(({ port }): RunningProxy => ({ url: `http://127.0.0.1:${port}`, port })))

/**
 * Headers as large as Chromium takes (its limit for a response's, 256 KiB), both ways: Node's default of 16 KiB
 * would make a site that sets or is sent many cookies look unreached, where the browser alone loads it.
 */
const browserHeaderBytes = 256 * 1024

/**
 * Methods sent again when a kept connection closed under them before any answer: the safe ones (RFC 9110 §9.2.1),
 * without a body. Every other request goes out on a new connection, so it is sent once.
 */
const resendable = new Set(["GET", "HEAD", "OPTIONS", "TRACE"])

const hasBody = (req: IncomingMessage) =>
  req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0

/** How a kept connection closed by the site as a request went out on it fails: reset, or closed before any answer. */
const closedUnder = (error: Error) => {
  const code = (error as { code?: unknown }).code
  return code === "ECONNRESET" || code === "EPIPE"
}

class ResolveTimeout extends Error {}

const within = <A>(promise: Promise<A>, ms: number) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ResolveTimeout(`no answer within ${ms} ms`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

export { chromiumArgs } from "./ProxyFlags.ts"
