/** The relay the model-free engine reaches the browser through: the same CDP socket, its frames uncompressed. */
import { WebSocket } from "@effect/platform-node/NodeWS"
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { BrowserSession } from "../../../src/Engine/BrowserSession.ts"
import * as Uncompressed from "../../../src/Engine/Playwright/Uncompressed.ts"
import * as TestBrowser from "../../support/TestBrowser.ts"

/** Opens a socket offering compression, as Playwright's bundled copy of this client does, and sends one command: what
 * was agreed, and the answer. */
const ask = (endpoint: string) =>
  Effect.promise(
    () =>
      new Promise<{ readonly extensions: string; readonly product: string }>((resolve, reject) => {
        const socket = new WebSocket(endpoint, { perMessageDeflate: true })
        socket.once("error", reject)
        socket.once("open", () => socket.send(JSON.stringify({ id: 1, method: "Browser.getVersion" })))
        socket.once("message", (data) => {
          const extensions = socket.extensions
          socket.close()
          resolve({ extensions, product: JSON.parse(String(data)).result.product })
        })
      })
  )

layer(TestBrowser.layer(), { excludeTestServices: true })("Playwright's uncompressed relay", (it) => {
  it.effect("the browser agrees to compress when asked directly, and compresses nothing through the relay", () =>
    Effect.gen(function* () {
      const session = yield* BrowserSession
      const direct = yield* ask(session.wsEndpoint)
      assert.match(direct.extensions, /permessage-deflate/)
      const scope = yield* Scope.make()
      const relayed = yield* Uncompressed.endpoint(session.wsEndpoint).pipe(Scope.provide(scope))
      assert.notStrictEqual(relayed, session.wsEndpoint)
      const through = yield* ask(relayed)
      assert.strictEqual(through.extensions, "")
      assert.match(through.product, /Chrome/)
      // Closed with its scope: nothing listens there any more.
      yield* Scope.close(scope, Exit.void)
      const refused = yield* Effect.exit(ask(relayed))
      assert.isTrue(Exit.isFailure(refused))
    })
  )

  it.effect(
    "the relay carries only its WebSocket: the browser's other DevTools routes are not reached through it",
    () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const relayed = yield* Uncompressed.endpoint(session.wsEndpoint)
        const { port } = new URL(relayed)
        // The browser's own port answers /json/version; through the relay, the same request gets no answer.
        const directly = yield* Effect.promise(() =>
          fetch(`http://127.0.0.1:${new URL(session.wsEndpoint).port}/json/version`).then((r) => r.status)
        )
        assert.strictEqual(directly, 200)
        const through = yield* Effect.promise(() =>
          fetch(`http://127.0.0.1:${port}/json/version`).then(
            (r) => `answered ${r.status}`,
            () => "refused"
          )
        )
        assert.strictEqual(through, "refused")
      }).pipe(Effect.scoped)
  )

  it.effect("a browser elsewhere is reached directly", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        yield* Uncompressed.endpoint("wss://browsers.example/devtools/browser/1"),
        "wss://browsers.example/devtools/browser/1"
      )
    })
  )
})
