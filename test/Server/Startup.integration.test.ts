/**
 * The service reads requests while it starts: MCP's `initialize` is answered before the command line has loaded
 * (its load held by a loader hook), the tool list and JSON-RPC's ready line while the service's layers cannot finish
 * building (its cascade policy is a named pipe nobody has written yet); a call made meanwhile is answered once they
 * are built. A configuration error found while building still ends the start with the error.
 */
import { execFileSync } from "node:child_process"
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultPolicy } from "../../src/Cascade/Policy.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { stdioClient } from "../support/McpClient.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

/** A named pipe whoever reads it waits on until `release` writes `content` into it. */
const heldPipe = (content: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "switchyard-startup-"))
      const path = join(dir, "held")
      execFileSync("mkfifo", [path])
      return { path, release: () => writeFile(path, content), dir }
    }),
    ({ dir, path }) =>
      Effect.sync(() => {
        // A service still waiting on the pipe (a test that failed early) is let go, so it can see its stdin close.
        try {
          const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
          writeSync(fd, content)
          closeSync(fd)
        } catch {
          // Nobody is reading it.
        }
        rmSync(dir, { recursive: true, force: true })
      })
  )

/** A cascade policy file the service blocks on reading until `release` writes it. */
const heldPolicy = heldPipe(JSON.stringify(defaultPolicy))

const holdModule = join(import.meta.dirname, "..", "fixtures", "HoldModule.ts")

describe("service start", () => {
  it.live("MCP: initialize is answered before the command line and the service have loaded", () =>
    Effect.gen(function* () {
      const pipe = yield* heldPipe("go")
      // connect() is the initialize handshake; the service cannot load src/Main/Cli.ts until the pipe is written.
      const client = yield* stdioClient({
        NODE_OPTIONS: `--import=${holdModule}`,
        SWITCHYARD_TEST_HOLD_MODULE: "/src/Main/Cli.ts",
        SWITCHYARD_TEST_HOLD_PIPE: pipe.path
      })
      const listed = client.listTools()
      yield* Effect.promise(pipe.release)
      const { tools } = yield* Effect.promise(() => listed)
      assert.include(
        tools.map((t) => t.name),
        "browser_navigate"
      )
    }).pipe(Effect.scoped)
  )

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

  it.live("JSON-RPC: ready before the service is built; calls sent meanwhile are answered once it is, in order", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const policy = yield* heldPolicy
      const service = startService({ SWITCHYARD_CASCADE: policy.path })
      yield* Effect.promise(() => service.stderrLine(/switchyard: ready/))
      const status = service.call("browserStatus")
      const first = service.call("browser.navigate", { url: site.url("/plain.html") })
      const second = service.call("browser.navigate", { url: site.url("/forms.html") })
      yield* Effect.promise(policy.release)
      const answer = yield* Effect.promise(() => status)
      assert.strictEqual((answer.result as { active: boolean } | undefined)?.active, false, JSON.stringify(answer))
      yield* Effect.promise(() => Promise.all([first, second]))
      // The session ran them in the order they came: the page is the second one's.
      const after = yield* Effect.promise(() => service.call("browser.status"))
      const state = (after.result as { state?: { url?: string } } | undefined)?.state
      assert.include(String(state?.url), "/forms.html", JSON.stringify(after))
    }).pipe(Effect.scoped)
  )

  it.live("JSON-RPC: ready before the tool list has loaded; a call sent meanwhile is answered once it has", () =>
    Effect.gen(function* () {
      const pipe = yield* heldPipe("go")
      // The service cannot load the tool list (and so its method table) until the pipe is written.
      const service = startService({
        NODE_OPTIONS: `--import=${holdModule}`,
        SWITCHYARD_TEST_HOLD_MODULE: "/src/Cascade/Tools.ts",
        SWITCHYARD_TEST_HOLD_PIPE: pipe.path
      })
      yield* Effect.promise(() => service.stderrLine(/switchyard: ready/))
      const status = service.call("browserStatus")
      const unknown = service.call("browser.nope")
      yield* Effect.promise(pipe.release)
      const answer = yield* Effect.promise(() => status)
      assert.strictEqual((answer.result as { active: boolean } | undefined)?.active, false, JSON.stringify(answer))
      // The method table is the tools' once loaded: an unknown method is refused with the methods there are.
      const refused = (yield* Effect.promise(() => unknown)).error as { code: number; message: string } | undefined
      assert.strictEqual(refused?.code, -32601, JSON.stringify(refused))
      assert.include(refused?.message, "browser.navigate")
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
