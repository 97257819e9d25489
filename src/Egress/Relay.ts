/**
 * A browser started before its session exists still goes through that session's egress proxy: it is launched with
 * `--proxy-server` naming a relay on 127.0.0.1, which refuses every connection until it is bound to one proxy, and
 * from then on passes each connection's bytes to that proxy unchanged. The proxy sees exactly what the browser sent,
 * so its policy applies as for a browser launched through it.
 */
import { connect, createServer, type Server, type Socket } from "node:net"
import { Effect } from "effect"

export interface Relay {
  /** `http://127.0.0.1:<port>`, for the browser's `--proxy-server`. */
  readonly url: string
  readonly port: number
  /** Sends every connection from now on to the proxy at `proxyUrl` (`http://127.0.0.1:<port>`); bound once, for
   * good: a second bind is ignored. */
  readonly bind: (proxyUrl: string) => Effect.Effect<void>
}

/** Starts a relay that refuses everything until bound; it closes, with every connection through it, with the scope. */
export const start = Effect.acquireRelease(
  Effect.callback<{ readonly server: Server; readonly sockets: Set<Socket>; readonly relay: Relay }>((resume) => {
    const sockets = new Set<Socket>()
    let target: { readonly host: string; readonly port: number } | undefined
    const track = (socket: Socket) => {
      sockets.add(socket)
      socket.once("close", () => sockets.delete(socket))
    }
    const server = createServer((client) => {
      track(client)
      const to = target
      if (to === undefined) {
        client.destroy()
        return
      }
      const upstream = connect({ host: to.host, port: to.port })
      track(upstream)
      client.pipe(upstream)
      upstream.pipe(client)
      client.on("error", () => upstream.destroy())
      upstream.on("error", () => client.destroy())
      client.on("close", () => upstream.destroy())
      upstream.on("close", () => client.destroy())
    })
    server.once("error", (error) => resume(Effect.die(error)))
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const bind = (proxyUrl: string) =>
        Effect.sync(() => {
          if (target !== undefined) return
          const url = new URL(proxyUrl)
          target = { host: url.hostname, port: Number(url.port) }
        })
      resume(Effect.succeed({ server, sockets, relay: { url: `http://127.0.0.1:${port}`, port, bind } }))
    })
  }),
  ({ server, sockets }) =>
    Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
      for (const socket of sockets) socket.destroy()
    }).pipe(Effect.timeoutOption(2_000))
).pipe(Effect.map(({ relay }) => relay))
