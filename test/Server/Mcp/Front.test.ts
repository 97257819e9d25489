/** Which command lines open MCP's stdio front at spawn: only those whose tool names are known before any config. */
import { assert, describe, it } from "@effect/vitest"
import * as ServeArgs from "../../../src/Main/ServeArgs.ts"
import * as Front from "../../../src/Server/Mcp/Front.ts"

const opensAtSpawn = (argv: ReadonlyArray<string>, env: Record<string, string>) =>
  Front.opensAtSpawn(ServeArgs.flags(argv), env)

describe("Front.opensAtSpawn", () => {
  it("MCP on stdio with the default tool names: no command, `serve`, and the flags stdio takes", () => {
    assert.isTrue(opensAtSpawn([], {}))
    assert.isTrue(opensAtSpawn(["serve"], {}))
    assert.isTrue(opensAtSpawn(["serve", "--headed", "--log-dir", "/tmp/x", "--max-browsers=2"], {}))
  })

  it("anything else starts without it", () => {
    for (const argv of [
      ["--jsonrpc"],
      ["serve", "--http"],
      ["status"],
      ["demo"],
      ["--help"],
      ["--version"],
      ["serve", "--config", "c.json"],
      ["serve", "--port", "1"]
    ]) {
      assert.isFalse(opensAtSpawn(argv, {}), argv.join(" "))
    }
    assert.isFalse(opensAtSpawn([], { SWITCHYARD_CONFIG: "c.json" }))
    assert.isFalse(opensAtSpawn([], { SWITCHYARD_MCP_TOOL_NAMES: "dotted" }))
    assert.isFalse(opensAtSpawn([], { DATABASE_URL: "postgres://127.0.0.1/x" }))
  })
})
