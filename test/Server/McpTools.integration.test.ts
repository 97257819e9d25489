/**
 * The MCP tool list as clients and model APIs read it (titles, annotations, output schemas, names model APIs accept)
 * and how calls are answered (structured content, nullable optionals, unknown tools), with the official SDK client.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { toolNames } from "../../src/Cascade/Tools.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { stdioClient } from "../support/McpClient.ts"
import { stopServices } from "../support/Service.ts"

afterEach(stopServices)

const underscore = /^[a-zA-Z0-9_-]+$/

describe("MCP tool metadata", () => {
  it.live("lists underscore names with titles, annotations and output schemas; answers carry structured content", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const client = yield* stdioClient()
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.map((t) => t.name).sort(), toolNames.map((n) => n.replaceAll(".", "_")).sort())
      for (const tool of tools) {
        assert.match(tool.name, underscore)
        assert.isString(tool.title, tool.name)
        assert.isDefined(tool.annotations, tool.name)
        assert.strictEqual(tool.outputSchema?.type, "object", tool.name)
      }
      const readOnly = tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name)
      assert.includeMembers(readOnly, ["browser_status", "browser_screenshot", "browser_extract", "browser_observe"])
      assert.notInclude(readOnly, "browser_act")
      assert.isTrue(tools.find((t) => t.name === "browser_act")?.annotations?.destructiveHint)
      assert.isTrue(tools.find((t) => t.name === "browser_navigate")?.annotations?.openWorldHint)

      // The SDK client checks structuredContent against the listed outputSchema.
      const navigated = yield* Effect.promise(() =>
        client.callTool({ name: "browser_navigate", arguments: { url: site.url("/plain.html") } })
      )
      assert.isNotTrue(navigated.isError, JSON.stringify(navigated))
      const structured = navigated.structuredContent as { result: { title: string }; state: unknown }
      assert.strictEqual(structured.result.title, "Plain page")
      assert.isDefined(structured.state)
      const text = (navigated.content as Array<{ type: string; text: string }>).find((c) => c.type === "text")!
      assert.strictEqual(JSON.parse(text.text).result.title, "Plain page")

      // An act's answer says what the page now shows for its target, within the listed outputSchema.
      yield* Effect.promise(() =>
        client.callTool({ name: "browser_navigate", arguments: { url: site.url("/forms.html") } })
      )
      const acted = yield* Effect.promise(() =>
        client.callTool({ name: "browser_act", arguments: { instruction: 'fill "Email" with "ada@example.com"' } })
      )
      assert.isNotTrue(acted.isError, JSON.stringify(acted))
      const target = (acted.structuredContent as { result: { target: Record<string, unknown> } }).result.target
      assert.deepInclude(target, { role: "textbox", name: "Email", value: "ada@example.com" })

      // The dotted spelling still works; a null optional is taken as absent.
      const shot = yield* Effect.promise(() =>
        client.callTool({ name: "browser.screenshot", arguments: { fullPage: null, session: null } })
      )
      assert.isNotTrue(shot.isError, JSON.stringify(shot).slice(0, 500))
      const status = yield* Effect.promise(() => client.callTool({ name: "browser_status", arguments: {} }))
      assert.isTrue((status.structuredContent as { result: { active: boolean } }).result.active)

      // An unknown tool is a protocol error (-32602), not a tool result.
      const unknown = yield* Effect.promise(() =>
        client.callTool({ name: "browser_fly", arguments: {} }).then(
          () => undefined,
          (error: unknown) => error
        )
      )
      assert.instanceOf(unknown, McpError)
      assert.strictEqual((unknown as McpError).code, ErrorCode.InvalidParams)
    })
  )

  it.live("lists seed 002's dotted names when configured", () =>
    Effect.gen(function* () {
      const client = yield* stdioClient({ SWITCHYARD_MCP_TOOL_NAMES: "dotted" })
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.map((t) => t.name).sort(), [...toolNames].sort())
    })
  )
})
