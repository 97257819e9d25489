/** The raw CDP connection against a real Chromium: typed commands and errors, events, and a socket that closes. */
import { createConnection, createServer, type Server } from "node:net"
import { assert, describe, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option, PubSub, Scope } from "effect"
import * as CdpConnection from "../../src/Cdp/Connection.ts"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import * as TestBrowser from "../support/TestBrowser.ts"

// Live clock: a hang shows as a time limit running out, not as a test that never ends.
layer(TestBrowser.layer(), { excludeTestServices: true })("Cdp connection", (it) => {
  describe("commands", () => {
    it.effect("answers with the protocol's result type, and a refused command is a cdp_closed naming it", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const cdp = yield* CdpConnection.connect(session.wsEndpoint)
        const version = yield* cdp.send("Browser.getVersion")
        assert.match(version.product, /Chrome/)
        const refused = yield* Effect.flip(cdp.send("Target.attachToTarget", { targetId: "no-such-target" }))
        assert.strictEqual(refused.type, "cdp_closed")
        assert.match(refused.message, /^CDP Target\.attachToTarget failed: /)
      })
    )

    it.effect("a command waiting for its answer fails with cdp_closed when the socket closes", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const scope = yield* Scope.make()
        const cdp = yield* CdpConnection.connect(session.wsEndpoint).pipe(Scope.provide(scope))
        const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId: session.targetId, flatten: true })
        const waiting = yield* Effect.forkChild(
          cdp.send("Runtime.evaluate", { expression: "new Promise(() => {})", awaitPromise: true }, sessionId)
        )
        yield* Effect.yieldNow
        yield* Scope.close(scope, Exit.void)
        const error = yield* Effect.flip(Fiber.join(waiting))
        assert.strictEqual(error.type, "cdp_closed")
        assert.isFalse(yield* cdp.isOpen)
        const late = yield* Effect.flip(cdp.send("Browser.getVersion"))
        assert.strictEqual(late.type, "cdp_closed", "a command after the close fails at once")
      })
    )
    it.effect("a command sent as another fails on a closing socket (a cleanup, say) fails too instead of waiting", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const scope = yield* Scope.make()
        const cdp = yield* CdpConnection.connect(session.wsEndpoint).pipe(Scope.provide(scope))
        const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId: session.targetId, flatten: true })
        const cleanup = yield* Deferred.make<Exit.Exit<unknown, unknown>>()
        const waiting = yield* Effect.forkChild(
          cdp.send("Runtime.evaluate", { expression: "new Promise(() => {})", awaitPromise: true }, sessionId).pipe(
            Effect.ensuring(
              cdp.send("Runtime.evaluate", { expression: "1" }, sessionId).pipe(
                Effect.exit,
                Effect.flatMap((exit) => Deferred.succeed(cleanup, exit))
              )
            )
          )
        )
        yield* Effect.yieldNow
        yield* Scope.close(scope, Exit.void)
        const joined = yield* Fiber.await(waiting).pipe(Effect.timeoutOption(5_000))
        assert.isTrue(Option.isSome(joined), "the command and its cleanup ended")
        const cleaned = yield* Deferred.await(cleanup)
        assert.isTrue(Exit.isFailure(cleaned), "the cleanup's command failed at once")
      })
    )
  })

  describe("events", () => {
    it.effect("a subscription sees the events a command causes, typed by their name", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const site = yield* SiteServer.start
        const cdp = yield* CdpConnection.connect(session.wsEndpoint)
        yield* cdp.send("Target.setDiscoverTargets", { discover: true })
        const events = yield* cdp.events
        const { targetId } = yield* cdp.send("Target.createTarget", { url: "about:blank" })
        const created = yield* PubSub.take(events).pipe(
          Effect.repeat({
            until: (event) => event.method === "Target.targetCreated" && event.params.targetInfo.targetId === targetId
          })
        )
        assert.strictEqual(created.method === "Target.targetCreated" ? created.params.targetInfo.type : "", "page")
        // navigateOn listens for the load event (nextEvent) before it navigates.
        const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId, flatten: true })
        yield* Session.navigateOn(cdp, sessionId, site.url("/plain.html"))
        assert.strictEqual(yield* Session.evaluateOn<string>(cdp, sessionId, "location.pathname"), "/plain.html")
        yield* cdp.send("Target.closeTarget", { targetId })
      })
    )

    it.effect("every subscriber sees every event", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const cdp = yield* CdpConnection.connect(session.wsEndpoint)
        const a = yield* cdp.nextEvent("Target.targetCreated")
        const b = yield* cdp.nextEvent("Target.targetCreated")
        yield* cdp.send("Target.setDiscoverTargets", { discover: true })
        const [first, second] = yield* Effect.all([a, b])
        assert.deepStrictEqual(first, second)
      })
    )
  })

  describe("transport", () => {
    /** A TCP relay on 127.0.0.1 in front of the browser's DevTools port that keeps the browser's upgrade answer. */
    const relay = (wsEndpoint: string) =>
      Effect.acquireRelease(
        Effect.promise(
          () =>
            new Promise<{ server: Server; endpoint: string; answers: Array<string> }>((resolve) => {
              const target = new URL(wsEndpoint)
              const answers: Array<string> = []
              const server = createServer((client) => {
                const browser = createConnection(Number(target.port), target.hostname)
                let head = ""
                browser.on("data", (chunk) => {
                  if (!head.includes("\r\n\r\n")) {
                    head += chunk.toString("latin1")
                    if (head.includes("\r\n\r\n")) answers.push(head.split("\r\n\r\n")[0]!)
                  }
                })
                client.pipe(browser).pipe(client)
                client.on("error", () => browser.destroy())
                browser.on("error", () => client.destroy())
              })
              server.listen(0, "127.0.0.1", () => {
                const port = (server.address() as { port: number }).port
                resolve({ server, endpoint: `ws://127.0.0.1:${port}${target.pathname}`, answers })
              })
            })
        ),
        ({ server }) =>
          Effect.promise(
            () =>
              new Promise<void>((done) => {
                server.close(() => done())
              })
          )
      )

    it.effect("the browser sends its frames uncompressed: no per-message deflate to undo on every answer", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const { endpoint, answers } = yield* relay(session.wsEndpoint)
        const cdp = yield* CdpConnection.connect(endpoint)
        const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId: session.targetId, flatten: true })
        // A large answer (a screenshot's base64) still arrives whole.
        const shot = yield* cdp.send("Page.captureScreenshot", { format: "png" }, sessionId)
        assert.isAbove(Buffer.from(shot.data, "base64").length, 1_000)
        assert.strictEqual(answers.length, 1)
        assert.match(answers[0]!, /^HTTP\/1\.1 101/)
        assert.notMatch(answers[0]!, /sec-websocket-extensions/i, "the browser agreed to compress its frames")
      })
    )
  })
})
