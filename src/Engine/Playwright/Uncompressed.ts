/**
 * Playwright's CDP socket always offers per-message compression, and Chromium accepts it: every frame between them is
 * deflated by the browser and inflated here, the largest share of this process's CPU on a call for bytes that only
 * cross the loopback. Playwright has no option to refuse it, so a relay on 127.0.0.1, in this process, passes the
 * WebSocket's opening request on without the offer and then the bytes both ways untouched.
 */
import { createConnection, createServer, type Socket } from "node:net"
import { Effect, type Scope } from "effect"
import { isLoopback } from "../../Cdp/Connection.ts"

/** The end of an HTTP request's head. */
const headEnd = Buffer.from("\r\n\r\n")

/** The opening request without its `Sec-WebSocket-Extensions` line: the browser then compresses nothing. */
const withoutOffer = (head: string) =>
  head
    .split("\r\n")
    .filter((line) => !/^sec-websocket-extensions\s*:/i.test(line))
    .join("\r\n")

/**
 * An endpoint for `wsEndpoint` whose WebSocket carries uncompressed frames, open for the scope's lifetime. A browser
 * elsewhere (not `ws://` on this machine) is reached directly: over a network, compression may pay for itself.
 */
export const endpoint = (wsEndpoint: string): Effect.Effect<string, never, Scope.Scope> => {
  const target = URL.canParse(wsEndpoint) ? new URL(wsEndpoint) : undefined
  if (target === undefined || target.protocol !== "ws:" || !isLoopback(wsEndpoint)) return Effect.succeed(wsEndpoint)
  const port = Number(target.port || 80)
  const host = target.hostname === "[::1]" ? "::1" : target.hostname
  const open = new Set<Socket>()
  const relay = createServer((client) => {
    open.add(client)
    client.setNoDelay(true)
    const browser = createConnection({ port, host, noDelay: true })
    open.add(browser)
    const end = () => {
      client.destroy()
      browser.destroy()
      open.delete(client)
      open.delete(browser)
    }
    for (const socket of [client, browser]) {
      socket.on("error", end)
      socket.on("close", end)
    }
    let head = Buffer.alloc(0)
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk])
      const at = head.indexOf(headEnd)
      if (at < 0) return
      client.off("data", onHead)
      // Only the WebSocket it stands for: the browser's other DevTools routes (`/json/*`) are not reached through it.
      if (!head.subarray(0, at).toString("latin1").startsWith(`GET ${target.pathname}${target.search} `)) return end()
      browser.write(withoutOffer(head.subarray(0, at).toString("latin1")), "latin1")
      browser.write(head.subarray(at))
      client.pipe(browser)
      browser.pipe(client)
    }
    client.on("data", onHead)
  })
  return Effect.acquireRelease(
    Effect.callback<string>((resume) => {
      // A relay that cannot listen leaves the endpoint as it was (compressed, still working); a failed accept later
      // is that connection's, never the service's.
      let listening = false
      relay.on("error", () => {
        if (!listening) resume(Effect.succeed(wsEndpoint))
      })
      relay.listen(0, "127.0.0.1", () => {
        listening = true
        const address = relay.address() as { readonly port: number }
        resume(Effect.succeed(`ws://127.0.0.1:${address.port}${target.pathname}${target.search}`))
      })
    }),
    () =>
      Effect.sync(() => {
        relay.close()
        for (const socket of open) socket.destroy()
        open.clear()
      })
  )
}
