/** A loopback port nothing listens on, for "unreachable endpoint" cases. */
import { createServer } from "node:net"
import { Effect } from "effect"

export const freePort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = createServer()
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number }
        server.close(() => resolve(port))
      })
    })
)
