/**
 * Screenshots a model accepts, through the official MCP client on a real service: a full-page capture past the
 * configured size comes scaled down, or clipped when scaling would leave it unreadable, and the answer says which.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Screenshot from "../../src/Engine/Screenshot.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { stdioClient } from "../support/McpClient.ts"
import { stopServices } from "../support/Service.ts"

afterEach(stopServices)

interface Shot {
  readonly content: ReadonlyArray<{ readonly type: string; readonly data?: string; readonly text?: string }>
  readonly structuredContent?: { readonly result?: Record<string, unknown> }
}

describe("browser_screenshot", () => {
  it.live("a full page past the limit is scaled or clipped to it, and the answer says which", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const client = yield* stdioClient({ SWITCHYARD_SCREENSHOT_MAX_PX: "4000" })
      const shoot = (path: string) =>
        Effect.promise(async () => {
          await client.callTool({ name: "browser_navigate", arguments: { url: site.url(path) } })
          return (await client.callTool({ name: "browser_screenshot", arguments: { fullPage: true } })) as Shot
        })
      const sizeOf = (shot: Shot) =>
        Screenshot.sizeOf(Buffer.from(shot.content.find((c) => c.type === "image")!.data!, "base64"))

      const medium = yield* shoot("/screens/tall-6000.html")
      const scaled = medium.structuredContent?.result?.scaled as Screenshot.Fitted["scaled"]
      assert.strictEqual(scaled?.from.height, 6_000)
      assert.deepStrictEqual(sizeOf(medium), scaled!.to)
      assert.strictEqual(scaled!.to.height, 4_000)
      assert.include(medium.content.find((c) => c.type === "text")?.text, '"scaled"')

      const long = yield* shoot("/screens/tall-20000.html")
      const clipped = long.structuredContent?.result?.clipped as Screenshot.Fitted["clipped"]
      assert.strictEqual(clipped?.from.height, 20_000)
      assert.deepStrictEqual(sizeOf(long), { width: clipped!.from.width, height: 4_000 })
    })
  )
})
