/**
 * `switchyard resume <session>` against a running `serve --http` service, as a person types it in another terminal:
 * a session a person took over (VNC takeover, started by an MCP client's `browser_handoff`) is handed back to
 * automation; a wrong token is refused with the service's own answer; an answer (`--submitted`) for a session that
 * has no question waiting is refused, not dropped, and the person keeps the browser.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { missingTools } from "../../src/Sandbox/Provider/Vnc/Tools.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { resumeCli } from "../support/Apply.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const missing = missingTools()
const skipReason = missing.length > 0 ? ` [skipped: needs ${missing.map((m) => m.tool).join(", ")}]` : ""

describe("switchyard resume against a service", () => {
  it.live.skipIf(missing.length > 0)(
    `hands a taken-over session back over HTTP; a wrong token is refused${skipReason}`,
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const service = startService({ SWITCHYARD_HUMAN: "on", SWITCHYARD_HTTP_TOKEN: "sesame" }, [
          "--http",
          "--port",
          "0"
        ])
        const mcp = yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (\S+)/))
        const base = mcp.replace(/\/mcp$/, "")
        const client = new Client({ name: "t", version: "1" })
        yield* Effect.promise(() =>
          client.connect(
            new StreamableHTTPClientTransport(new URL(mcp), {
              requestInit: { headers: { authorization: "Bearer sesame" } }
            })
          )
        )
        yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.promise(() => client.callTool({ name, arguments: { session: "desk", ...args } }))
        yield* call("browser_navigate", { url: site.url("/forms.html") })
        const handed = yield* call("browser_handoff", { reason: "a person checks the form" })
        assert.isNotTrue(handed.isError, JSON.stringify(handed))
        const masked = yield* call("browser_extract", {})
        assert.isTrue(masked.isError, "automation is held while the person has the browser")

        const refused = yield* Effect.promise(() => resumeCli(["desk", "--url", base, "--token", "wrong"]))
        assert.strictEqual(refused.code, 1)
        assert.match(refused.stderr, /answered 401/)

        // The person answers a question nobody asked on this service: refused, saying so; they keep the browser.
        const answered = yield* Effect.promise(() =>
          resumeCli(["desk", "--submitted", "--url", base, "--token", "sesame"])
        )
        assert.strictEqual(answered.code, 1, answered.stdout)
        assert.match(answered.stderr, /answered 409: .*no question waits for an answer on session \\"desk\\"/)
        const still = yield* call("browser_extract", {})
        assert.isTrue(still.isError, "the takeover goes on")

        const resumed = yield* Effect.promise(() => resumeCli(["desk", "--url", base, "--token", "sesame"]))
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.match(resumed.stdout, /"resumed":\s*true/)
        const back = yield* call("browser_extract", {})
        assert.isNotTrue(back.isError, JSON.stringify(back))
      }),
    150_000
  )
})
