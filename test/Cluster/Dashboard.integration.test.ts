/**
 * The fleet's dashboard (`switchyard status` with `DATABASE_URL`) counts what happened, read as a person reads it:
 * agents' calls over JSON-RPC on a runner with a scripted model (Stagehand answers nothing, the cascade falls back
 * and switches engines) and on a model-free runner (a miss fails, a person takes the browser over and gives it
 * back), then a runner killed under its session. Seed 001 §10's three queries answer with those numbers — switches
 * per run, their latency, success per platform and engine with the failed attempts counted — beside who called and
 * the sessions moved and restored. On a model-free fleet an agent on MCP over HTTP is counted as well (its attempts,
 * failed ones too), and a person's takeover is the switch the seed's queries answer with.
 */
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Dashboard from "../../src/Cluster/Dashboard.ts"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import { missingTools } from "../../src/Sandbox/Provider/Vnc/Tools.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { fleet, stopFleets } from "../support/Fleet.ts"
import { httpClient } from "../support/McpClient.ts"
import { startService } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopFleets)

const main = join(import.meta.dirname, "..", "..", "src", "Main.ts")

/** A dashboard table as `switchyard status` prints it: a header line, then rows, columns two spaces apart. */
const table = (text: string) => {
  const [header, ...rows] = text.split("\n").map((line) => line.trim().split(/\s{2,}/))
  return rows.map((cells) => Object.fromEntries((header ?? []).map((key, i) => [key, cells[i] ?? ""])))
}
const vnc = missingTools().length === 0

/** A model that finds nothing: every Stagehand act comes back empty, so the cascade goes on to the next level. */
const blindModel: LlmServer.Script = (request) => {
  const properties = Object.keys(LlmServer.requestedSchema(request)?.properties ?? {})
  const value = properties.includes("action") ? { action: null, twoStep: false } : { elements: [] }
  return { json: LlmServer.chatCompletion(JSON.stringify(value)) }
}

describe.skipIf(Postgres.binDir() === undefined)("the fleet's dashboard", () => {
  it.live(
    "switches, their latency and success per engine from every attempt; agents' calls; sessions moved and restored",
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const llm = yield* LlmServer.start(blindModel)
        const { pg, runner, query } = yield* fleet()
        const modelled = yield* runner("r1", 2, {
          SWITCHYARD_MODEL: "openai/gpt-4.1-mini",
          OPENAI_API_KEY: "sk-test",
          OPENAI_BASE_URL: `${llm.origin}/v1`
        })
        const modelFree = yield* runner(
          "r2",
          2,
          vnc ? { SWITCHYARD_HUMAN: "on", SWITCHYARD_HUMAN_TIMEOUT_MS: "5000" } : {}
        )
        const call = (at: typeof modelled, method: string, params: Record<string, unknown>) =>
          Effect.promise(() => at.call(method, params))
        const page = site.url("/forms.html")

        // On the model's runner: Stagehand finds nothing; asked again as its answer advises, the router disables it
        // for the request and a later level clicks.
        yield* call(modelled, "browser.navigate", { session: "m", url: page })
        let clicked: Record<string, unknown> = {}
        for (let tries = 0; tries < 4; tries++) {
          clicked = yield* call(modelled, "browser.act", {
            session: "m",
            traceId: "agent-request-1",
            instruction: 'click "Double me"'
          })
          if (clicked.error === undefined) break
        }
        assert.isUndefined(clicked.error, JSON.stringify(clicked.error))
        // On the model-free runner: a miss, and a person's takeover and its end.
        yield* call(modelFree, "browser.navigate", { session: "f", url: page })
        const missed = yield* call(modelFree, "browser.act", { session: "f", instruction: 'click "No such button"' })
        assert.isDefined(missed.error)
        if (vnc) {
          const handed = yield* call(modelFree, "browser.handoff", { session: "f", reason: "a person checks it" })
          assert.isUndefined(handed.error, JSON.stringify(handed.error))
          yield* call(modelFree, "browser.resume", { session: "f" })
          const after = yield* call(modelFree, "browser.act", { session: "f", instruction: 'click "Double me"' })
          assert.isUndefined(after.error, JSON.stringify(after.error))
        }
        // The model-free runner dies under its session: the next call moves it and restores it.
        modelFree.child.kill("SIGKILL")
        const moved = yield* Effect.promise(() =>
          waitFor(async () => (await modelled.call("browser.extract", { session: "f" })).error === undefined, 60_000)
        )
        assert.isTrue(moved)

        const status = execFileSync(process.execPath, [main, "status"], {
          env: { ...process.env, DATABASE_URL: Redacted.value(pg.url) },
          encoding: "utf8"
        })
        const section = (title: string) => {
          const start = status.indexOf(`${title}`)
          assert.isAtLeast(start, 0, `${title} missing:\n${status}`)
          return status
            .slice(start)
            .split("\n")
            .slice(1)
            .filter((l) => l.startsWith("  "))
            .join("\n")
        }
        // Switches per run and their latency: the fallback's switch on the model's runner, a person's on the other.
        assert.match(section("engine switches per run:"), /\w+\s+[1-9]\d*\s/)
        assert.match(section("average switch latency:"), /stagehand:dom\s+\S+\s+\d+\s+\d+/)
        if (vnc) assert.match(section("average switch latency:"), /playwright\s+human\s+\d+\s+1\b/)
        // Success per platform and engine counts the failed attempts too: Stagehand's misses, the Playwright miss.
        const success = table(section("success rate per platform and engine"))
        const rate = (engine: string) => success.find((r) => r.engine === engine)
        for (const engine of ["stagehand:dom", "playwright"]) {
          const row = rate(engine)
          assert.isDefined(row, `${engine} missing:\n${status}`)
          assert.isBelow(Number(row!.successes), Number(row!.total), `${engine}: its failures are not counted`)
          assert.isBelow(Number(row!.success_rate), 1)
        }
        assert.match(section("engine attempts by caller:"), /agent calls \(MCP, JSON-RPC\)\s+\d+\s+\d+\s+\d+/)
        const moves = section("sessions moved off a dead runner, and restored:")
        assert.match(moves, /session_failover\s+1\b/)
        assert.match(moves, /session_restored\s+[1-9]/)

        // The seed's three queries, as written, answer the same numbers.
        const rows = (sql: string) => query(sql.replace(/\s+/g, " "))
        assert.isAtLeast((yield* rows(Dashboard.seedQueries.switchesPerRun)).length, 1)
        assert.isAtLeast((yield* rows(Dashboard.seedQueries.switchLatency)).length, 1)
        assert.isAtLeast((yield* rows(Dashboard.seedQueries.successByPlatform)).length, 2)
        process.stderr.write(`dashboard after the run:\n${status.slice(status.indexOf("engine switches"))}\n`)
      }),
    300_000
  )

  it.live(
    `on a model-free fleet, an agent's calls over MCP are counted, a miss as a failure; a person's takeover is a switch the seed's queries answer${vnc ? "" : " [takeover skipped: needs VNC tools]"}`,
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const { pg, dir, query } = yield* fleet()
        // A model-free runner serving MCP over HTTP, as `cluster dev` starts them.
        const runner = startService(
          {
            DATABASE_URL: Redacted.value(pg.url),
            TMPDIR: dir,
            SWITCHYARD_RUNNERS: "r1",
            SWITCHYARD_UPLOAD_ROOTS: dir,
            ...(vnc ? { SWITCHYARD_HUMAN: "on", SWITCHYARD_HUMAN_TIMEOUT_MS: "5000" } : {})
          },
          ["--http", "--port", "0", "--runner", "r1"]
        )
        yield* Effect.addFinalizer(() =>
          Effect.promise(async () => {
            if (runner.child.exitCode === null) runner.child.kill("SIGTERM")
            await runner.exited
          })
        )
        const url = yield* Effect.promise(() => runner.stderrLine(/MCP over HTTP at (\S+)/))
        const { client } = yield* httpClient(url)
        const tool = (name: string, args: Record<string, unknown>) =>
          Effect.promise(() => client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 }))
        const navigated = yield* tool("browser_navigate", { url: site.url("/forms.html") })
        assert.isNotTrue(navigated.isError, JSON.stringify(navigated))
        const missed = yield* tool("browser_act", { instruction: 'click "No such button"' })
        assert.isTrue(missed.isError, JSON.stringify(missed))
        const clicked = yield* tool("browser_act", { instruction: 'click "Double me"' })
        assert.isNotTrue(clicked.isError, JSON.stringify(clicked))
        if (vnc) {
          const handed = yield* tool("browser_handoff", { reason: "a person checks it" })
          assert.isNotTrue(handed.isError, JSON.stringify(handed))
          const resumed = yield* tool("browser_resume", {})
          assert.isNotTrue(resumed.isError, JSON.stringify(resumed))
        }
        yield* Effect.promise(() => client.close())

        // The store has each attempt, the miss as a failure, under the agent's calls, not a workflow's.
        const stored = yield* query(
          "SELECT data->>'success' FROM task_events WHERE event_type = 'engine_operation' ORDER BY id"
        )
        assert.isAtLeast(stored.length, 3, stored.join(", "))
        assert.include(stored, "false")
        const status = execFileSync(process.execPath, [main, "status"], {
          env: { ...process.env, DATABASE_URL: Redacted.value(pg.url) },
          encoding: "utf8"
        })
        const callers = status.slice(status.indexOf("engine attempts by caller:")).split("\n").slice(0, 4).join("\n")
        const agents = /agent calls \(MCP, JSON-RPC\)\s+(\d+)\s+(\d+)/.exec(callers)
        assert.isNotNull(agents, status)
        assert.isAtLeast(Number(agents![2]), 3, callers)
        const success = table(
          status
            .slice(status.indexOf("success rate per platform and engine"))
            .split("\n")
            .slice(1)
            .filter((l) => l.startsWith("  "))
            .join("\n")
        )
        const playwright = success.find((r) => r.engine === "playwright")
        assert.isDefined(playwright, status)
        assert.isBelow(Number(playwright!.success_rate), 1, status)
        if (vnc) {
          // No model anywhere, and still a switch: the seed's queries as written answer it with its numbers.
          const switches = yield* query(Dashboard.seedQueries.switchesPerRun.replace(/\s+/g, " "))
          assert.match(switches[0] ?? "", /^[\w-]+\|[1-9]\d*\|/, switches.join("\n"))
          const latency = yield* query(Dashboard.seedQueries.switchLatency.replace(/\s+/g, " "))
          assert.isTrue(
            latency.some((row) => /^playwright\|human\|\d+\|1$/.test(row)),
            latency.join("\n")
          )
        }
      }).pipe(Effect.scoped),
    240_000
  )
})
