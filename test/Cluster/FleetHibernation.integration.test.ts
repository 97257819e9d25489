/**
 * A fleet places new sessions by the browsers its runners hold: a session hibernated on a runner (its MCP client went
 * away; its page saved, its browser closed) holds none, so a new client's session goes there instead of `busy`.
 * Debian's PostgreSQL in a temp dir, a real runner serving MCP over HTTP, the official MCP client.
 */
import { chmodSync } from "node:fs"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { fleet, stopFleets } from "../support/Fleet.ts"
import { httpClient } from "../support/McpClient.ts"
import { processesMatching } from "../support/Processes.ts"
import { startService } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopFleets)

describe.skipIf(Postgres.binDir() === undefined)("fleet placement", () => {
  it.live(
    "a runner whose only session hibernated takes a new one: hibernated sessions hold no browser",
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const { pg, dir, query } = yield* fleet()
        // As root the browsers run as another user, who must get through to their profiles here.
        chmodSync(dir, 0o711)
        const runner = startService(
          {
            DATABASE_URL: Redacted.value(pg.url),
            TMPDIR: dir,
            SWITCHYARD_RUNNERS: "r1",
            SWITCHYARD_FAILOVER_MS: "2000"
          },
          ["--http", "--port", "0", "--runner", "r1", "--max-browsers", "1"]
        )
        // Stopped gracefully, so that it removes its browsers' profiles itself.
        yield* Effect.addFinalizer(() =>
          Effect.promise(async () => {
            if (runner.child.exitCode === null) runner.child.kill("SIGTERM")
            await runner.exited
          })
        )
        const url = yield* Effect.promise(() => runner.stderrLine(/MCP over HTTP at (\S+)/))
        const browsers = () => processesMatching(`--user-data-dir=${dir}`).filter((p) => !/--type=/.test(p.cmdline))

        const first = yield* httpClient(url)
        const opened = yield* Effect.promise(() =>
          first.client.callTool({ name: "browser_navigate", arguments: { url: site.url("/plain.html") } })
        )
        assert.isNotTrue(opened.isError, JSON.stringify(opened))
        // The client goes away: its session hibernates, its browser closes.
        yield* Effect.promise(() => first.transport.terminateSession())
        yield* Effect.promise(() => first.client.close())
        assert.isTrue(yield* Effect.promise(() => waitFor(() => browsers().length === 0, 30_000)), "browser kept")
        // The runner's next heartbeat (within half a second) tells the fleet; its session stays assigned to it.
        const reported = yield* Effect.promise(() =>
          waitFor(async () => {
            const [open] = await Effect.runPromise(query("SELECT open_sessions FROM fleet_runners WHERE name = 'r1'"))
            return open === "0"
          }, 30_000)
        )
        assert.isTrue(reported)
        assert.lengthOf(yield* query("SELECT session FROM fleet_sessions WHERE runner = 'r1'"), 1)

        // A new client on the one-browser fleet gets that browser.
        const second = yield* httpClient(url)
        const answer = yield* Effect.promise(() =>
          second.client.callTool({ name: "browser_navigate", arguments: { url: site.url("/forms.html") } })
        )
        assert.isNotTrue(answer.isError, JSON.stringify(answer))
        assert.strictEqual((answer.structuredContent as { state: { url: string } }).state.url, site.url("/forms.html"))
        yield* Effect.promise(() => second.client.close())
      }),
    180_000
  )
})
