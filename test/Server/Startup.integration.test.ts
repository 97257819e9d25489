/**
 * The service reads requests while it starts: MCP `initialize` and the tool list, and JSON-RPC's ready line, come
 * while the service's layers cannot finish building (its cascade policy is a named pipe nobody has written yet); a
 * call made meanwhile is answered once they are built. A configuration error found while building still ends the
 * start with the error.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultPolicy } from "../../src/Cascade/Policy.ts"
import { stdioClient } from "../support/McpClient.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

/** A cascade policy file the service blocks on reading until `release` writes it. */
const heldPolicy = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-startup-"))
    const path = join(dir, "cascade.json")
    execFileSync("mkfifo", [path])
    return { path, release: () => writeFile(path, JSON.stringify(defaultPolicy)), dir }
  }),
  ({ dir }) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("service start", () => {
  it.live("MCP: initialize and the tool list are answered before the service is built; a call waits for it", () =>
    Effect.gen(function* () {
      const policy = yield* heldPolicy
      // connect() is the initialize handshake.
      const client = yield* stdioClient({ SWITCHYARD_CASCADE: policy.path })
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.include(
        tools.map((t) => t.name),
        "browser_navigate"
      )
      const status = client.callTool({ name: "browser_status", arguments: {} })
      yield* Effect.promise(policy.release)
      const answer = yield* Effect.promise(() => status)
      assert.notStrictEqual(answer.isError, true, JSON.stringify(answer))
      assert.strictEqual((answer.structuredContent as { result: { active: boolean } }).result.active, false)
    }).pipe(Effect.scoped)
  )

  it.live("JSON-RPC: ready before the service is built; a call sent meanwhile is answered once it is", () =>
    Effect.gen(function* () {
      const policy = yield* heldPolicy
      const service = startService({ SWITCHYARD_CASCADE: policy.path })
      yield* Effect.promise(() => service.stderrLine(/switchyard: ready/))
      const status = service.call("browserStatus")
      yield* Effect.promise(policy.release)
      const answer = yield* Effect.promise(() => status)
      assert.strictEqual((answer.result as { active: boolean } | undefined)?.active, false, JSON.stringify(answer))
    }).pipe(Effect.scoped)
  )

  it.live("a configuration error found while building ends the start with the error, on MCP's front too", () =>
    Effect.gen(function* () {
      const missing = join(tmpdir(), "switchyard-no-such-policy.json")
      const service = startService({ SWITCHYARD_CASCADE: missing }, [])
      const exit = yield* Effect.promise(() => service.exited)
      // 2: what every configuration error exits with.
      assert.strictEqual(exit.code, 2)
      assert.include(service.stderr(), `cannot read cascade policy ${missing}`)
    })
  )
})
