/**
 * A page cannot reach the service that drives its browser, nor that browser's DevTools: on the real service over
 * MCP's Streamable HTTP, bound to a port the system picked (`--port 0`), a navigate to the service's own port or to
 * the DevTools port, by any spelling of this machine (the unspecified address too), is refused by the egress policy.
 */

import { afterAll, assert, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { httpClient } from "../support/McpClient.ts"
import { startService, stopServices } from "../support/Service.ts"

afterAll(stopServices)

interface Answer {
  readonly isError: boolean
  readonly error?: { readonly type?: string; readonly message?: string }
  readonly state?: { readonly url?: string | null; readonly title?: string | null }
  readonly wsEndpoint?: string | null
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async (): Promise<Answer> => {
    const answer = await client.callTool({ name, arguments: args })
    // A failed call's answer is its error as JSON text; a result's is in the structured content.
    const text = (answer.content as Array<{ type: string; text?: string }>)[0]?.text ?? "{}"
    const content = (answer.isError === true ? JSON.parse(text) : answer.structuredContent) as
      | { error?: Answer["error"]; state?: Answer["state"]; result?: { wsEndpoint?: string | null } }
      | undefined
    return {
      isError: answer.isError === true,
      ...(content?.error === undefined ? {} : { error: content.error }),
      ...(content?.state === undefined ? {} : { state: content.state }),
      wsEndpoint: content?.result?.wsEndpoint ?? null
    }
  })

describe("the service's own ports", () => {
  it.live(
    "a page reaches neither the service's HTTP port (picked at bind) nor its browser's DevTools, by any spelling",
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const service = startService({}, ["--http", "--port", "0"])
        const url = yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (\S+)/))
        const port = Number(new URL(url).port)
        const { client } = yield* httpClient(url)
        const opened = yield* call(client, "browser_navigate", { url: site.url("/plain.html") })
        assert.isFalse(opened.isError, JSON.stringify(opened))
        const status = yield* call(client, "browser_status", {})
        const devtools = Number(new URL(status.wsEndpoint ?? "").port)
        assert.isAbove(devtools, 0, JSON.stringify(status))
        for (const [target, path] of [
          [port, "/mcp"],
          [devtools, "/json/version"]
        ] as const) {
          for (const host of ["127.0.0.1", "localhost", "0.0.0.0", "[::ffff:0.0.0.0]"]) {
            const answer = yield* call(client, "browser_navigate", { url: `http://${host}:${target}${path}` })
            const context = `${host}:${target}${path}: ${JSON.stringify(answer)}`
            assert.isTrue(answer.isError, context)
            assert.strictEqual(answer.error?.type, "rejected_by_policy", context)
            assert.include(answer.error?.message, `:${target}`, context)
            assert.notInclude(answer.state?.title ?? "", "webSocketDebuggerUrl", context)
          }
        }
        // The refusals left the session working.
        const back = yield* call(client, "browser_navigate", { url: site.url("/forms.html") })
        assert.isFalse(back.isError, JSON.stringify(back))
        yield* Effect.promise(() => client.close())
      }),
    120_000
  )
})
