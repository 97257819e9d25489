/** The Sandbox's kept CDP connection against a real Chromium, reached through a loopback proxy that can cut it. */
import { createServer, type Socket, connect as tcpConnect } from "node:net"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as CdpConnection from "../../src/Cdp/Connection.ts"
import * as CdpHttp from "../../src/Cdp/Http.ts"
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

/**
 * A TCP proxy on loopback to the browser's `port` that holds back every `Target.targetDestroyed` the browser sends (it
 * reads the WebSocket frames, which go uncompressed): a page leaves the browser's target list a while before that event
 * comes, and here the while lasts until the test ends.
 */
const destroyedHeld = (port: number) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ readonly port: number; readonly held: () => number; readonly close: () => void }>((resolve) => {
          const open = new Set<Socket>()
          let held = 0
          const server = createServer((client) => {
            const upstream = tcpConnect(port, "127.0.0.1")
            open.add(client).add(upstream)
            client.pipe(upstream)
            let pending = Buffer.alloc(0)
            let upgraded = false
            upstream.on("data", (chunk: Buffer) => {
              pending = Buffer.concat([pending, chunk])
              if (!upgraded) {
                const end = pending.indexOf("\r\n\r\n")
                if (end === -1) return
                client.write(pending.subarray(0, end + 4))
                pending = pending.subarray(end + 4)
                upgraded = true
              }
              // A server's frames are unmasked: a two-byte head, then a 16- or 64-bit length when the short one says so.
              for (;;) {
                if (pending.length < 2) return
                const short = pending[1]! & 0x7f
                const head = short === 126 ? 4 : short === 127 ? 10 : 2
                if (pending.length < head) return
                const length =
                  short === 126 ? pending.readUInt16BE(2) : short === 127 ? Number(pending.readBigUInt64BE(2)) : short
                if (pending.length < head + length) return
                const frame = pending.subarray(0, head + length)
                pending = pending.subarray(head + length)
                if (frame.includes('"Target.targetDestroyed"')) held++
                else client.write(frame)
              }
            })
            for (const [from, to] of [
              [client, upstream],
              [upstream, client]
            ] as const) {
              from.on("error", () => to.destroy())
              from.on("close", () => {
                open.delete(from)
                to.destroy()
              })
            }
          })
          server.listen(0, "127.0.0.1", () => {
            const address = server.address()
            resolve({
              port: typeof address === "object" && address !== null ? address.port : 0,
              held: () => held,
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
  describe("a page closed by someone else", () => {
    it.effect("is known closed once the browser no longer lists it, before its target event comes", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const browserPort = Number(new URL(session.wsEndpoint).port)
        const through = yield* destroyedHeld(browserPort)
        const link = yield* PageLink.make(session.wsEndpoint.replace(`:${browserPort}/`, `:${through.port}/`), {
          dialogs: Effect.succeed(Option.none())
        })
        const other = yield* CdpConnection.connect(session.wsEndpoint)
        const { targetId } = yield* other.send("Target.createTarget", { url: "about:blank" })
        yield* link.watch(targetId)
        assert.isTrue(yield* link.alive)
        assert.isTrue(
          (yield* link.pages).some((p) => p.targetId === targetId),
          "the link lists the new page"
        )

        yield* other.send("Target.closeTarget", { targetId })
        assert.isTrue(
          yield* Effect.promise(() =>
            waitFor(
              async () =>
                !(await Effect.runPromise(CdpHttp.listTargets(session.httpEndpoint))).some((t) => t.id === targetId),
              10_000
            )
          ),
          "the browser no longer lists the page"
        )
        assert.isTrue(yield* link.alive, "the browser answers")
        assert.deepStrictEqual(yield* link.fate(targetId), Option.some("closed" as const))
        assert.isFalse(
          (yield* link.pages).some((p) => p.targetId === targetId),
          "the link no longer lists it"
        )
        // A call raced against the page's loss ends now.
        assert.deepStrictEqual(
          yield* link.lost(targetId).pipe(Effect.timeoutOption(1_000)),
          Option.some("closed" as const)
        )
        assert.isAtLeast(through.held(), 1, "the browser's targetDestroyed never reached the link")
      })
    )
  })
})
