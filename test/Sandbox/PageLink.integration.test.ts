/** The Sandbox's kept CDP connection against a real Chromium, reached through a loopback proxy that can cut it. */
import { createServer, type Socket, connect as tcpConnect } from "node:net"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import * as PageLink from "../../src/Sandbox/PageLink.ts"
import * as TestBrowser from "../support/TestBrowser.ts"
import { waitFor } from "../support/Wait.ts"

/** A TCP proxy on loopback to `port`; `cut` resets every connection through it, as a network fault would. */
const proxy = (port: number) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{
          readonly port: number
          /** How many connections were made through it. */
          readonly accepted: () => number
          readonly cut: () => void
          readonly close: () => void
        }>((resolve) => {
          const open = new Set<Socket>()
          let accepted = 0
          const server = createServer((client) => {
            accepted++
            const upstream = tcpConnect(port, "127.0.0.1")
            for (const [from, to] of [
              [client, upstream],
              [upstream, client]
            ] as const) {
              open.add(from)
              from.pipe(to)
              from.on("error", () => to.destroy())
              from.on("close", () => open.delete(from))
            }
          })
          server.listen(0, "127.0.0.1", () => {
            const address = server.address()
            resolve({
              port: typeof address === "object" && address !== null ? address.port : 0,
              accepted: () => accepted,
              cut: () => {
                for (const socket of open) socket.resetAndDestroy()
              },
              close: () => {
                for (const socket of open) socket.destroy()
                server.close()
              }
            })
          })
        })
    ),
    (p) => Effect.sync(() => p.close())
  )

// Live clock: the link reopens on a schedule.
layer(TestBrowser.layer(), { excludeTestServices: true })("PageLink", (it) => {
  describe("a dropped connection", () => {
    it.effect("is reopened on its own, and the followed page's dialogs are answered again before any read", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const browserPort = Number(new URL(session.wsEndpoint).port)
        const through = yield* proxy(browserPort)
        const link = yield* PageLink.make(session.wsEndpoint.replace(`:${browserPort}/`, `:${through.port}/`), {
          dialogs: Effect.succeed(Option.some({ mode: "dismiss", beforeunload: "accept" }))
        })
        yield* link.follow(session.targetId)
        assert.isTrue(yield* link.alive)

        assert.strictEqual(through.accepted(), 1)
        through.cut()
        // `alive` only asks the current socket (it never opens one): true again means the link reopened by itself.
        assert.isTrue(
          yield* Effect.promise(() =>
            waitFor(async () => through.accepted() === 2 && (await Effect.runPromise(link.alive)), 5_000)
          ),
          "the link reopened its connection without being used"
        )
        // Runtime.evaluate returns only when the dialog is answered: the link attached to the page again.
        const answered = yield* Session.evaluate<boolean>(
          session.wsEndpoint,
          session.targetId,
          "confirm('Still there?')"
        ).pipe(Effect.timeoutOption(10_000))
        assert.deepStrictEqual(answered, Option.some(false))
      })
    )
  })
})
