/**
 * The session's console and network rings on the browser's own events: a message written several times within a
 * millisecond is kept each time, the same message replayed when a page is attached again is kept once, and each ring
 * keeps its newest entries, saying how many older ones it dropped; a request's body is kept capped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type * as Protocol from "../../src/Cdp/Protocol.ts"
import * as Console from "../../src/Sandbox/PageLink/Console.ts"
import * as Network from "../../src/Sandbox/PageLink/Network.ts"

const tab = "T1"

/** `console.warn(text)` as Chromium reports it, at `timestamp` (milliseconds, to the microsecond). */
const warned = (text: string, timestamp: number): Protocol.Event => ({
  method: "Runtime.consoleAPICalled",
  params: {
    type: "warning",
    args: [{ type: "string", value: text }],
    executionContextId: 1,
    timestamp,
    stackTrace: {
      callFrames: [{ functionName: "", scriptId: "1", url: "http://127.0.0.1/p", lineNumber: 2, columnNumber: 4 }]
    }
  }
})

describe("console ring", () => {
  it.effect("the same text written three times in one millisecond is three messages; a replay adds none", () =>
    Effect.gen(function* () {
      const ring = yield* Console.make(500)
      const stamps = [1_764_270_000_000.101, 1_764_270_000_000.203, 1_764_270_000_000.342]
      for (const stamp of stamps) yield* ring.observe(warned("retrying", stamp), tab)
      // The link reconnects: Chromium reports the page's earlier messages again, with the timestamps they had.
      for (const stamp of stamps) yield* ring.observe(warned("retrying", stamp), tab)
      const read = yield* ring.read({})
      assert.deepStrictEqual(
        read.messages.map((m) => [m.seq, m.text, m.at, m.source]),
        [
          [1, "retrying", 1_764_270_000_000, "http://127.0.0.1/p:3:5"],
          [2, "retrying", 1_764_270_000_000, "http://127.0.0.1/p:3:5"],
          [3, "retrying", 1_764_270_000_000, "http://127.0.0.1/p:3:5"]
        ]
      )
      assert.notProperty(read.messages[0], "stamp", "the answer shows the millisecond only")
    })
  )

  it.effect("a full ring keeps the newest and says how many it dropped", () =>
    Effect.gen(function* () {
      const ring = yield* Console.make(3)
      for (let i = 1; i <= 5; i++) yield* ring.observe(warned(`message ${i}`, 1_764_270_000_000 + i), tab)
      const read = yield* ring.read({})
      assert.deepStrictEqual(
        read.messages.map((m) => m.text),
        ["message 3", "message 4", "message 5"]
      )
      assert.strictEqual(read.last, 5)
      assert.strictEqual(read.dropped, 2)
      const newer = yield* ring.read({ since: 4 })
      assert.deepStrictEqual(
        newer.messages.map((m) => m.text),
        ["message 5"]
      )
      assert.isUndefined(newer.dropped)
    })
  )

  it.effect("a full network ring keeps the newest requests, says how many it dropped, and caps a body", () =>
    Effect.gen(function* () {
      const ring = yield* Network.make(3)
      for (let i = 1; i <= 5; i++) {
        yield* ring.observe(
          {
            method: "Network.requestWillBeSent",
            params: {
              requestId: `r${i}`,
              loaderId: "l",
              documentURL: "http://127.0.0.1/p",
              request: {
                url: `http://127.0.0.1/api/${i}`,
                method: "POST",
                headers: {},
                postData: "x".repeat(10_000),
                initialPriority: "High",
                referrerPolicy: "no-referrer"
              },
              timestamp: i,
              wallTime: i,
              initiator: { type: "script" },
              redirectHasExtraInfo: false,
              type: "Fetch"
            }
          },
          tab
        )
      }
      const read = yield* ring.read({})
      assert.deepStrictEqual(
        read.requests.map((r) => r.url),
        ["http://127.0.0.1/api/3", "http://127.0.0.1/api/4", "http://127.0.0.1/api/5"]
      )
      assert.strictEqual(read.dropped, 2)
      assert.isUndefined(yield* ring.find(1), "the oldest is gone")
      assert.strictEqual((yield* ring.find(5))?.requestBody?.length, 4_096)
    })
  )
})
