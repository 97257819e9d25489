/**
 * Long MCP calls report progress: with a progressToken, a call sends `notifications/progress` on each cascade step
 * and on a steady cadence, so a client that resets its timeout on progress keeps waiting (official SDK client).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import type { Progress } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { slowSite } from "../fixtures/SlowSite.ts"
import { stdioClient } from "../support/McpClient.ts"
import { stopServices } from "../support/Service.ts"

afterEach(stopServices)

describe("MCP progress", () => {
  it.live("a long call sends progress on each cascade step and on a steady cadence", () =>
    Effect.gen(function* () {
      const site = yield* slowSite(6_000)
      const client = yield* stdioClient({ SWITCHYARD_MCP_PROGRESS_MS: "1000" })
      // MCP answers before the service is built, and loading its modules (the service's, then an engine's with the
      // first browser) holds the service's event loop, so no heartbeat goes out meanwhile, for as long as a loaded
      // machine makes it: the timed call comes once the service and its browser are up.
      const warm = yield* Effect.promise(() => client.callTool({ name: "browser_snapshot", arguments: {} }))
      assert.isNotTrue(warm.isError, JSON.stringify(warm))
      const seen: Array<Progress> = []
      const answer = yield* Effect.promise(() =>
        client.callTool({ name: "browser_navigate", arguments: { url: site.url } }, undefined, {
          onprogress: (progress) => seen.push(progress),
          timeout: 4_000,
          resetTimeoutOnProgress: true
        })
      )
      assert.isNotTrue(answer.isError, JSON.stringify(answer))
      assert.isAtLeast(seen.length, 4, JSON.stringify(seen))
      assert.isTrue(
        seen.some((p) => /start/.test(p.message ?? "")),
        `an attempt's start is reported: ${JSON.stringify(seen)}`
      )
      for (let i = 1; i < seen.length; i++) assert.isAbove(seen[i]!.progress, seen[i - 1]!.progress)
    })
  )
})
