/**
 * Minimal raw CDP: the DevTools HTTP endpoints and a short-lived WebSocket for a few commands. It carries no page
 * semantics; the Sandbox uses it when no engine is connected or the connected one is broken.
 */
import { Effect, Fiber, type Scope } from "effect"
import { EndpointUnreachable, InvalidEndpoint } from "../Errors/Browser.ts"
import { CdpClosed } from "../Errors/Engine.ts"

export interface TargetInfo {
  readonly id: string
  readonly type: string
  readonly url: string
  readonly title: string
}

export interface VersionInfo {
  readonly Browser: string
  readonly webSocketDebuggerUrl: string
}

/** Parses a CDP endpoint (`ws://host:port/devtools/browser/<id>` or `http://host:port`) into its HTTP origin. */
export const httpOrigin = (endpoint: string): Effect.Effect<string, InvalidEndpoint> =>
  Effect.suspend(() => {
    let url: URL
    try {
      url = new URL(endpoint)
    } catch {
      return Effect.fail(
        new InvalidEndpoint({
          endpoint,
          message: `"${endpoint}" is not a URL; expected ws://host:port/devtools/browser/<id> or http://host:port`
        })
      )
    }
    const scheme = url.protocol.replace(/:$/, "")
    if (!["ws", "wss", "http", "https"].includes(scheme) || url.hostname === "") {
      return Effect.fail(
        new InvalidEndpoint({
          endpoint,
          message: `"${endpoint}" is not a CDP endpoint: the scheme must be ws, wss, http or https and a host is required`
        })
      )
    }
    const http = scheme === "wss" || scheme === "https" ? "https" : "http"
    return Effect.succeed(`${http}://${url.host}`)
  })

const getJson = <A>(origin: string, path: string, timeoutMs: number): Effect.Effect<A, EndpointUnreachable> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`${origin}${path}`, {
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
      })
      if (!response.ok) throw new Error(`HTTP ${response.status} from ${path}`)
      return (await response.json()) as A
    },
    catch: (cause) =>
      new EndpointUnreachable({
        endpoint: origin,
        message: `CDP endpoint ${origin} did not answer ${path}: ${cause instanceof Error ? cause.message : String(cause)}`
      })
  })

/** `GET /json/version`: doubles as the browser-alive check of the switch protocol (step 5). */
export const version = (origin: string, timeoutMs = 2_000) => getJson<VersionInfo>(origin, "/json/version", timeoutMs)

/** `GET /json/list`: the browser's targets, pages first in most-recently-used order. */
export const listTargets = (origin: string, timeoutMs = 2_000) =>
  getJson<ReadonlyArray<TargetInfo>>(origin, "/json/list", timeoutMs)

/** A CDP WebSocket connection, closed with its scope. */
export interface CdpConnection {
  readonly send: <A = unknown>(
    method: string,
    params?: Record<string, unknown>,
    sessionId?: string
  ) => Effect.Effect<A, CdpClosed>
  /** Waits for the next event named `method` (on `sessionId` when given). */
  readonly nextEvent: (method: string, sessionId?: string) => Effect.Effect<unknown, CdpClosed>
  /** Calls `listener` with every event, until the socket closes. */
  readonly onEvent: (listener: (event: CdpEvent) => void) => void
  /** Calls `listener` once when the socket closes (at once if it already has). */
  readonly onClose: (listener: () => void) => void
  /** Whether the socket is still open. */
  readonly isOpen: () => boolean
}

export interface CdpEvent {
  readonly method: string
  readonly params: Record<string, unknown>
  readonly sessionId?: string
}

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
}

export const connect = (wsEndpoint: string, timeoutMs = 5_000): Effect.Effect<CdpConnection, CdpClosed, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        new Promise<WebSocket>((resolve, reject) => {
          const socket = new WebSocket(wsEndpoint)
          const timer = setTimeout(() => {
            socket.close()
            reject(new Error(`no answer within ${timeoutMs} ms`))
          }, timeoutMs)
          socket.addEventListener("open", () => {
            clearTimeout(timer)
            resolve(socket)
          })
          socket.addEventListener("error", () => {
            clearTimeout(timer)
            reject(new Error("connection refused or closed"))
          })
        }),
      catch: (cause) => new CdpClosed({ message: `cannot open CDP socket ${wsEndpoint}: ${(cause as Error).message}` })
    }),
    (socket) => Effect.sync(() => socket.close())
  ).pipe(Effect.map(makeConnection))

const makeConnection = (socket: WebSocket): CdpConnection => {
  let nextId = 1
  const pending = new Map<number, Pending>()
  const waiting = new Set<{ method: string; sessionId: string | undefined; pending: Pending }>()
  const listeners = new Set<(event: CdpEvent) => void>()
  const closeListeners = new Set<() => void>()
  let open = true
  const failAll = (reason: string) => {
    for (const p of pending.values()) p.reject(new Error(reason))
    for (const w of waiting) w.pending.reject(new Error(reason))
    pending.clear()
    waiting.clear()
  }
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number
      method?: string
      sessionId?: string
      params?: unknown
      result?: unknown
      error?: { message: string }
    }
    if (message.id === undefined) {
      if (message.method !== undefined) {
        const event = {
          method: message.method,
          params: (message.params ?? {}) as Record<string, unknown>,
          ...(message.sessionId ? { sessionId: message.sessionId } : {})
        }
        for (const listener of listeners) listener(event)
      }
      for (const w of waiting) {
        if (w.method !== message.method || (w.sessionId !== undefined && w.sessionId !== message.sessionId)) continue
        waiting.delete(w)
        w.pending.resolve(message.params)
      }
      return
    }
    const p = pending.get(message.id)
    if (p === undefined) return
    pending.delete(message.id)
    if (message.error) p.reject(new Error(message.error.message))
    else p.resolve(message.result)
  })
  socket.addEventListener("close", () => {
    open = false
    failAll("CDP socket closed")
    listeners.clear()
    for (const listener of closeListeners) listener()
    closeListeners.clear()
  })
  return {
    onEvent: (listener) => {
      if (open) listeners.add(listener)
    },
    onClose: (listener) => {
      if (open) closeListeners.add(listener)
      else listener()
    },
    isOpen: () => open && socket.readyState === WebSocket.OPEN,
    send: <A>(method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
      Effect.tryPromise({
        try: (signal) =>
          new Promise<A>((resolve, reject) => {
            if (socket.readyState !== WebSocket.OPEN) return reject(new Error("CDP socket closed"))
            const id = nextId++
            pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
            // A caller that gives up (a timeout on a hung page) leaves nothing behind waiting for the answer.
            signal.addEventListener("abort", () => {
              pending.delete(id)
              reject(new Error("abandoned"))
            })
            socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }))
          }),
        catch: (cause) => new CdpClosed({ message: `CDP ${method} failed: ${(cause as Error).message}` })
      }),
    nextEvent: (method, sessionId) =>
      Effect.tryPromise({
        try: () => {
          let entry: { method: string; sessionId: string | undefined; pending: Pending } | undefined
          return new Promise<unknown>((resolve, reject) => {
            entry = { method, sessionId, pending: { resolve, reject } }
            waiting.add(entry)
          }).finally(() => entry && waiting.delete(entry))
        },
        catch: (cause) => new CdpClosed({ message: `waiting for ${method}: ${(cause as Error).message}` })
      })
  }
}

/** Runs commands on a session attached to one page, however the connection to it is kept. */
export type PageRun = <A, E>(
  f: (cdp: CdpConnection, sessionId: string) => Effect.Effect<A, E>
) => Effect.Effect<A, E | CdpClosed>

/** Runs `f` with a flat session attached to one page target, over a fresh connection that closes afterwards. */
export const withTarget = <A, E>(
  wsEndpoint: string,
  targetId: string,
  f: (cdp: CdpConnection, sessionId: string) => Effect.Effect<A, E>
): Effect.Effect<A, E | CdpClosed> =>
  Effect.scoped(
    Effect.gen(function* () {
      const cdp = yield* connect(wsEndpoint)
      const { sessionId } = yield* cdp.send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true })
      return yield* f(cdp, sessionId)
    })
  )

/** A page reached over a fresh connection per use. */
export const fresh =
  (target: { readonly wsEndpoint: string; readonly targetId: string }): PageRun =>
  (f) =>
    withTarget(target.wsEndpoint, target.targetId, f)

/** Evaluates an expression on an attached session and returns its JSON value. */
export const evaluateOn = <A>(cdp: CdpConnection, sessionId: string, expression: string) =>
  cdp
    .send<{ result: { value?: A }; exceptionDetails?: { text: string } }>(
      "Runtime.evaluate",
      { expression, returnByValue: true, awaitPromise: true },
      sessionId
    )
    .pipe(
      Effect.flatMap((r) =>
        r.exceptionDetails
          ? Effect.fail(new CdpClosed({ message: `evaluation failed: ${r.exceptionDetails.text}` }))
          : Effect.succeed(r.result.value as A)
      )
    )

/** Evaluates an expression in a page target and returns its JSON value. */
export const evaluate = <A>(wsEndpoint: string, targetId: string, expression: string) =>
  withTarget(wsEndpoint, targetId, (cdp, sessionId) => evaluateOn<A>(cdp, sessionId, expression))

/** Navigates a page target and waits for its load event: used to restore the URL in a relaunched browser. */
export const navigate = (wsEndpoint: string, targetId: string, url: string) =>
  withTarget(wsEndpoint, targetId, (cdp, sessionId) => navigateOn(cdp, sessionId, url))

/** Navigates the page of an attached session and waits for its load event. */
export const navigateOn = (cdp: CdpConnection, sessionId: string, url: string) =>
  Effect.gen(function* () {
    yield* cdp.send("Page.enable", {}, sessionId)
    const loaded = yield* Effect.forkChild(cdp.nextEvent("Page.loadEventFired", sessionId))
    const result = yield* cdp.send<{ errorText?: string }>("Page.navigate", { url }, sessionId)
    if (result.errorText) return yield* new CdpClosed({ message: `navigation to ${url} failed: ${result.errorText}` })
    yield* Fiber.join(loaded)
  })
