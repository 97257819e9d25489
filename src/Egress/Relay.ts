/**
 * A browser started before its session exists still goes through that session's egress proxy: it is launched with
 * `--proxy-server` naming a relay on 127.0.0.1, which refuses every connection until it is bound to one proxy, and
 * from then on passes each connection's bytes to that proxy unchanged. The proxy sees exactly what the browser sent,
 * so its policy applies as for a browser launched through it. The socket itself is RelayServer.ts's.
 */
import { Effect } from "effect"
import * as RelayServer from "./RelayServer.ts"

export interface Relay {
  /** `http://127.0.0.1:<port>`, for the browser's `--proxy-server`. */
  readonly url: string
  readonly port: number
  /** Sends every connection from now on to the proxy at `proxyUrl` (`http://127.0.0.1:<port>`); bound once, for
   * good: a second bind is ignored. */
  readonly bind: (proxyUrl: string) => Effect.Effect<void>
}

const close = (server: RelayServer.RelayServer) => Effect.promise(server.close).pipe(Effect.timeoutOption(2_000))

const relayOf = (server: RelayServer.RelayServer): Relay => ({
  url: server.url,
  port: server.port,
  bind: (proxyUrl) => Effect.sync(() => server.bind(proxyUrl))
})

/** A relay already listening (the early launch's), closed, with every connection through it, with the scope. */
export const adopt = (server: RelayServer.RelayServer) =>
  Effect.acquireRelease(Effect.succeed(server), close).pipe(Effect.map(relayOf))

/** Starts a relay that refuses everything until bound; it closes, with every connection through it, with the scope. */
export const start = Effect.acquireRelease(Effect.promise(RelayServer.listen), close).pipe(Effect.map(relayOf))
