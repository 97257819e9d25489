/**
 * The relay's listening socket and forwarding (Relay.ts says what the relay is for), in plain Node with no effect: the
 * early launch (Sandbox/Provider/EarlyBrowser.ts) opens one before the service's modules load.
 */
import { connect, createServer, type Socket } from "node:net"

export interface RelayServer {
  /** `http://127.0.0.1:<port>`, for the browser's `--proxy-server`. */
  readonly url: string
  readonly port: number
  /** Sends every connection from now on to the proxy at `proxyUrl`; bound once, for good: a second bind is ignored. */
  readonly bind: (proxyUrl: string) => void
  /** Stops listening and ends every connection through it. */
  readonly close: () => Promise<void>
}

/** Listens on 127.0.0.1 (a free port), refusing every connection until bound. */
export const listen = () =>
  new Promise<RelayServer>((resolve, reject) => {
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
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        bind: (proxyUrl) => {
          if (target !== undefined) return
          const url = new URL(proxyUrl)
          target = { host: url.hostname, port: Number(url.port) }
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            for (const socket of sockets) socket.destroy()
          })
      })
    })
  })
