/**
 * The JSON-RPC sidecar as users run it: batches, `params` of the wrong type, session names checked on the extras,
 * and `$/cancelRequest` stopping a navigation in flight — each request answered exactly once.
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

type Reply = {
  readonly id: unknown
  readonly result?: Record<string, unknown>
  readonly error?: { code: number; message: string; data?: { type?: string } }
}

/** A loopback page that never answers: a navigation to it stays in flight until stopped. */
const hangingSite = Effect.acquireRelease(
  Effect.promise(async () => {
    const held: Array<ServerResponse> = []
    let hit: () => void = () => undefined
    const requested = new Promise<void>((resolve) => {
      hit = resolve
    })
    const server = createServer((_req, res) => {
      held.push(res)
      hit()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    return { server, held, requested, url: `http://127.0.0.1:${port}/never` }
  }),
  ({ server, held }) =>
    Effect.promise(async () => {
      for (const res of held) res.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    })
)

describe("JSON-RPC sidecar", () => {
  it.live(
    "a batch is answered as an array, notifications left out; bad params and bad session names refused",
    () =>
      Effect.gen(function* () {
        const service = startService()
        const batch = JSON.stringify([
          { jsonrpc: "2.0", id: "a", method: "browserStatus" },
          { jsonrpc: "2.0", method: "browserStatus" },
          { jsonrpc: "2.0", id: "b", method: "browserStatus", params: { session: "worker-1" } },
          { jsonrpc: "2.0", id: "c", method: "browserStatus", params: 5 }
        ])
        const answers = (yield* Effect.promise(() => service.send(batch))) as unknown as Array<Reply>
        assert.isTrue(Array.isArray(answers), JSON.stringify(answers))
        assert.deepStrictEqual(
          answers.map((a) => a.id),
          ["a", "b", "c"]
        )
        assert.strictEqual(answers[0]?.result?.session, "default")
        assert.strictEqual(answers[1]?.result?.session, "worker-1")
        assert.strictEqual(answers[2]?.error?.code, -32600)

        const empty = (yield* Effect.promise(() => service.send("[]"))) as Reply
        assert.strictEqual(empty.error?.code, -32600)

        for (const method of ["browserStatus", "browserClose"]) {
          const answer = (yield* Effect.promise(() => service.call(method, { session: "../../etc" }))) as Reply
          assert.strictEqual(answer.error?.data?.type, "invalid_input", `${method}: ${JSON.stringify(answer)}`)
          assert.include(answer.error?.message, "session names")
        }
        const notObject = (yield* Effect.promise(() =>
          service.send(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "browserStatus", params: "x" }), 7)
        )) as Reply
        assert.strictEqual(notObject.error?.code, -32600)
        assert.strictEqual(service.extra(), 0)
      }),
    60_000
  )

  it.live(
    "$/cancelRequest stops a navigation in flight: it answers Request cancelled once, the session keeps serving",
    () =>
      Effect.gen(function* () {
        const site = yield* hangingSite
        const service = startService()
        const navigation = service.send(
          JSON.stringify({ jsonrpc: "2.0", id: "nav", method: "browser.navigate", params: { url: site.url } }),
          "nav"
        )
        yield* Effect.promise(() => site.requested)
        const ack = (yield* Effect.promise(() => service.call("$/cancelRequest", { id: "nav" }))) as Reply
        assert.deepStrictEqual(ack.result, { cancelled: true })
        const answer = (yield* Effect.promise(() => navigation)) as Reply
        assert.strictEqual(answer.id, "nav")
        assert.strictEqual(answer.error?.code, -32800, JSON.stringify(answer))
        assert.strictEqual(answer.error?.message, "Request cancelled")
        const status = (yield* Effect.promise(() => service.call("browser.status"))) as Reply
        assert.isDefined(status.result, JSON.stringify(status))
        const again = (yield* Effect.promise(() => service.call("$/cancelRequest", { id: "nav" }))) as Reply
        assert.deepStrictEqual(again.result, { cancelled: false })
        assert.strictEqual(service.extra(), 0)
        assert.strictEqual(service.unanswered(), 0)
      }),
    120_000
  )

  it.live(
    "cancelling the call that opens a session leaves the session usable: the next call on it is answered",
    () =>
      Effect.gen(function* () {
        const site = yield* hangingSite
        const service = startService()
        const first = service.send(
          JSON.stringify({
            jsonrpc: "2.0",
            id: "first",
            method: "browser.navigate",
            params: { url: site.url, session: "w" }
          }),
          "first"
        )
        // Sent at once: the cancel arrives while the session's browser is still starting.
        const ack = (yield* Effect.promise(() => service.call("$/cancelRequest", { id: "first" }))) as Reply
        assert.deepStrictEqual(ack.result, { cancelled: true })
        const cancelled = (yield* Effect.promise(() => first)) as Reply
        assert.strictEqual(cancelled.error?.code, -32800)
        const next = (yield* Effect.promise(() => service.call("browser.status", { session: "w" }))) as Reply
        assert.isDefined(next.result, JSON.stringify(next))
        assert.strictEqual(service.extra(), 0)
      }),
    120_000
  )
})
