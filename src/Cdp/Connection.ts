/**
 * One raw CDP WebSocket, opened through Effect's socket module and closed with its scope: commands typed from
 * devtools-protocol and answered through Deferreds, events published to subscribers. Transport only, no page semantics.
 */
import { WebSocket as NodeWebSocket } from "@effect/platform-node/NodeWS"
import { Deferred, Effect, Exit, Layer, PubSub, type Scope } from "effect"
import { Socket } from "effect/socket"
import { CdpClosed } from "../Errors/Engine.ts"
import type * as Protocol from "./Protocol.ts"

/** A CDP WebSocket connection, closed with the scope that opened it. */
export interface Connection {
  /** Sends a command (on the flat session `sessionId` when given) and waits for its answer. */
  readonly send: <M extends Protocol.Command>(
    method: M,
    ...args: Protocol.Args<M>
  ) => Effect.Effect<Protocol.Result<M>, CdpClosed>
  /** Every event from now on, for as long as the scope lasts. */
  readonly events: Effect.Effect<PubSub.Subscription<Protocol.Event>, never, Scope.Scope>
  /**
   * Starts listening for the next event named `method` (on `sessionId` when given) and returns the wait: listen
   * before sending the command that causes it. The wait fails when the socket closes first.
   */
  readonly nextEvent: <E extends Protocol.EventName>(
    method: E,
    sessionId?: string
  ) => Effect.Effect<Effect.Effect<Protocol.EventParams<E>, CdpClosed>, never, Scope.Scope>
  /** Completes when the socket closes (at once if it has). */
  readonly closed: Effect.Effect<void>
  /** Whether the socket is still open. */
  readonly isOpen: Effect.Effect<boolean>
}

/** A frame from the browser: an answer (with `id`) or an event (with `method`). */
interface Frame {
  readonly id?: number
  readonly method?: string
  readonly sessionId?: string
  readonly params?: unknown
  readonly result?: unknown
  readonly error?: { readonly message: string }
}

/** A WebSocket endpoint on this machine, where compressing frames costs CPU and saves nothing. */
export const isLoopback = (wsEndpoint: string) => {
  if (!URL.canParse(wsEndpoint)) return false
  const host = new URL(wsEndpoint).hostname
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/**
 * WebSockets without per-message compression to a browser on this machine. Node's own WebSocket always asks for it
 * and Chromium agrees, so every frame (a screenshot's megabyte of base64, every network event) was deflated by the
 * browser and inflated here: most of the service's CPU on a call, for bytes that only cross the loopback. As
 * Playwright's own transport does. A browser elsewhere keeps it: over a network, compression may pay for itself.
 */
const uncompressed = Layer.succeed(Socket.WebSocketConstructor)(
  (url, options) =>
    new NodeWebSocket(url, typeof options === "object" && !Array.isArray(options) ? options.protocols : options, {
      perMessageDeflate: !isLoopback(String(url)),
      maxPayload: 256 * 1024 * 1024
    }) as unknown as globalThis.WebSocket
)

/** Opens a connection to `wsEndpoint` (a browser's or a Node inspector's), failing after `timeoutMs`. */
export const connect = (wsEndpoint: string, timeoutMs = 5_000): Effect.Effect<Connection, CdpClosed, Scope.Scope> =>
  Effect.gen(function* () {
    const socket = yield* Socket.makeWebSocket(wsEndpoint, { openTimeout: timeoutMs }).pipe(
      Effect.provide(uncompressed)
    )
    const reader = yield* socket.reader.pipe(
      Effect.mapError((cause) => {
        const why =
          cause.reason._tag === "SocketOpenError" && cause.reason.kind === "Timeout"
            ? `no answer within ${timeoutMs} ms`
            : "connection refused or closed"
        return new CdpClosed({ message: `cannot open CDP socket ${wsEndpoint}: ${why}`, cause })
      })
    )
    const writer = yield* socket.writer
    const events = yield* PubSub.unbounded<Protocol.Event>()
    const closed = yield* Deferred.make<void>()
    /** Commands sent and not answered yet, by id: each completes its caller's Deferred. */
    const pending = new Map<number, (frame: Frame) => void>()
    let nextId = 1

    const receive = (text: string) => {
      const frame = JSON.parse(text) as Frame
      if (frame.id !== undefined) {
        pending.get(frame.id)?.(frame)
        pending.delete(frame.id)
      } else if (frame.method !== undefined) {
        // The browser speaks the protocol: its events are taken as typed by their name.
        const event = {
          method: frame.method,
          params: frame.params,
          ...(frame.sessionId === undefined ? {} : { sessionId: frame.sessionId })
        } as Protocol.Event
        PubSub.publishUnsafe(events, event)
      }
    }
    const decoder = new TextDecoder()
    // Closed first: a caller resumed by its failed answer may send again at once (a cleanup), and must fail too.
    const shut = Effect.sync(() => {
      Deferred.doneUnsafe(closed, Exit.void)
      const waiting = [...pending.values()]
      pending.clear()
      for (const answer of waiting) answer({ error: { message: "CDP socket closed" } })
    })
    // One reader for the socket's life; when it ends (the socket closed, or the scope did), every waiting command fails.
    yield* reader.pull.pipe(
      Effect.flatMap((frames) =>
        Effect.sync(() => {
          for (const frame of frames) receive(typeof frame === "string" ? frame : decoder.decode(frame))
        })
      ),
      Effect.forever,
      Effect.ignore,
      Effect.ensuring(shut),
      Effect.forkScoped
    )

    const send = <M extends Protocol.Command>(
      method: M,
      ...[params, sessionId]: Protocol.Args<M>
    ): Effect.Effect<Protocol.Result<M>, CdpClosed> =>
      Effect.suspend(() => {
        if (Deferred.isDoneUnsafe(closed)) {
          return Effect.fail(new CdpClosed({ message: `CDP ${method} failed: CDP socket closed` }))
        }
        const id = nextId++
        const answer = Deferred.makeUnsafe<Protocol.Result<M>, CdpClosed>()
        pending.set(id, (frame) =>
          Deferred.doneUnsafe(
            answer,
            frame.error === undefined
              ? // The answer to `method` has the protocol's result type for it.
                Exit.succeed(frame.result as Protocol.Result<M>)
              : Exit.fail(new CdpClosed({ message: `CDP ${method} failed: ${frame.error.message}` }))
          )
        )
        return writer
          .write(JSON.stringify({ id, method, params: params ?? {}, ...(sessionId ? { sessionId } : {}) }))
          .pipe(
            Effect.mapError((cause) => new CdpClosed({ message: `CDP ${method} failed: ${cause.message}`, cause })),
            Effect.andThen(Deferred.await(answer)),
            // A caller that gives up (a timeout on a hung page) leaves nothing behind waiting for the answer.
            Effect.ensuring(Effect.sync(() => pending.delete(id)))
          )
      })

    const nextEvent = <E extends Protocol.EventName>(method: E, sessionId?: string) =>
      Effect.map(PubSub.subscribe(events), (subscription) => {
        const matching: Effect.Effect<Protocol.EventParams<E>> = PubSub.take(subscription).pipe(
          Effect.flatMap((event) =>
            event.method === method && (sessionId === undefined || event.sessionId === sessionId)
              ? // An event named `method` carries that event's payload.
                Effect.succeed(event.params as Protocol.EventParams<E>)
              : matching
          )
        )
        return Effect.raceFirst(
          matching,
          Deferred.await(closed).pipe(
            Effect.andThen(Effect.fail(new CdpClosed({ message: `waiting for ${method}: CDP socket closed` })))
          )
        )
      })

    return {
      send,
      events: PubSub.subscribe(events),
      nextEvent,
      closed: Deferred.await(closed),
      isOpen: Effect.sync(() => !Deferred.isDoneUnsafe(closed))
    } satisfies Connection
  })
