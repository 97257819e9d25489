/**
 * The fleet as people run it: Debian's PostgreSQL started on 127.0.0.1 in a temp dir, real `switchyard serve`
 * runner processes sharing it, real Chromiums. Calls cross runners; a full fleet answers `busy`; a runner that joins
 * takes new sessions; a runner killed with SIGKILL loses no work: its session answers on another runner with its
 * page, cookies and storage, and a job application it was running finishes elsewhere without re-running a step.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import * as AtsServer from "../fixtures/AtsServer.ts"
import { profileFileIn, profileIn } from "../support/Applicant.ts"
import { startApply, startsPerStep } from "../support/Apply.ts"
import { fleet, stopFleets, tempDir } from "../support/Fleet.ts"
import { processesMatching } from "../support/Processes.ts"
import type { Service } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopFleets)

const main = join(import.meta.dirname, "..", "..", "src", "Main.ts")

/** `switchyard status` as a person runs it against the fleet's database. */
const statusOf = (url: string) =>
  Effect.promise(async () => {
    const { execFileSync } = await import("node:child_process")
    return execFileSync(process.execPath, [main, "status"], {
      env: { ...process.env, DATABASE_URL: url },
      encoding: "utf8"
    })
  })

const call = (service: Service, method: string, params: Record<string, unknown>) =>
  Effect.promise(() => service.call(method, params))

const textOf = (answer: Record<string, unknown>) =>
  ((answer.result as { result?: { text?: string } } | undefined)?.result?.text ?? "") as string

// bin/test installs Debian's PostgreSQL where it can; without it there is no fleet to test.
describe.skipIf(Postgres.binDir() === undefined)("fleet on PostgreSQL", () => {
  it.live(
    "routes calls to the runner holding the browser, answers busy when full, a joining runner takes new sessions, a killed runner's session answers elsewhere with its storage",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const { pg, runner, owners, query } = yield* fleet()
        const r1 = yield* runner("r1", 1)
        const r2 = yield* runner("r2", 1)

        // Each asked at its own runner: with room everywhere, a session starts where it was asked for.
        const n1 = yield* call(r1, "browser.navigate", { session: "s1", url: ats.storage })
        assert.isUndefined(n1.error, JSON.stringify(n1.error))
        yield* call(r2, "browser.navigate", { session: "s2", url: ats.storage })
        assert.deepStrictEqual(yield* owners, { s1: "r1", s2: "r2" })

        // Any front door answers for any session: s2's browser is on r2, asked at r1 (and back).
        const again = yield* call(r1, "browser.navigate", { session: "s2", url: ats.storage })
        assert.isUndefined(again.error, JSON.stringify(again.error))
        assert.include(
          textOf(yield* call(r1, "browser.extract", { session: "s2", instruction: "text" })),
          "local 2 session 2"
        )
        assert.include(
          textOf(yield* call(r2, "browser.extract", { session: "s1", instruction: "text" })),
          "local 1 session 1"
        )

        // Full: busy, with a wait hint.
        const busy = yield* call(r1, "browser.navigate", { session: "s3", url: ats.storage })
        const data = (busy.error as { data?: { type?: string; retryAfterMs?: number } }).data
        assert.strictEqual(data?.type, "busy")
        assert.isNumber(data?.retryAfterMs)

        // A runner joining takes the next session.
        const r3 = yield* runner("r3", 2)
        const joined = yield* call(r1, "browser.navigate", { session: "s3", url: ats.storage })
        assert.isUndefined(joined.error, JSON.stringify(joined.error))
        assert.strictEqual((yield* owners).s3, "r3")

        // r2 dies with s2's browser: the next call answers on a live runner, the page's storage restored.
        r2.child.kill("SIGKILL")
        const killed = Date.now()
        let answer: Record<string, unknown> = {}
        const answered = yield* Effect.promise(() =>
          waitFor(async () => {
            answer = await r1.call("browser.extract", { session: "s2", instruction: "text" })
            return answer.error === undefined
          }, 60_000)
        )
        const failoverMs = Date.now() - killed
        assert.isTrue(answered, JSON.stringify(answer))
        // Restored to 2 and 2, then the restore's own reload of the page counted one more visit.
        assert.include(textOf(answer), "local 3 session 3")
        assert.strictEqual((yield* owners).s2, "r3")
        const moved = yield* query(
          "SELECT data->>'from', data->>'to' FROM task_events WHERE event_type = 'session_failover'"
        )
        assert.deepStrictEqual(moved, ["r2|r3"])
        process.stderr.write(
          `fleet failover: SIGKILL → next call answered in ${failoverMs} ms (failover after 2000 ms)\n`
        )

        // `switchyard status` shows the fleet: who is live, who holds what.
        const status = yield* statusOf(Redacted.value(pg.url))
        assert.match(status, /fleet\s+2 live runners of 3/)
        assert.match(status, /r2\s+gone/)
        assert.match(status, /r3\s+live.*2\/2 sessions: (s2, s3|s3, s2)/)
        assert.isDefined(r3)
      }),
    240_000
  )

  it.live(
    "a runner killed mid-application: the workflow finishes on another runner, no finished step ran again",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const { dir, runner, query } = yield* fleet()
        const profile = profileIn(dir)
        const runners = { r1: yield* runner("r1", 2), r2: yield* runner("r2", 2) }
        const started = yield* call(runners.r1, "apply.start", { job: ats.jobs.workday, profile })
        const run = (started.result as { run: string }).run
        assert.isString(run, JSON.stringify(started))
        const events = (service: Service) =>
          Effect.promise(() => service.call("apply.status", { run })).pipe(
            Effect.map(
              (answer) =>
                answer.result as {
                  events: Array<{ eventType: string; data: Record<string, unknown> }>
                  result: null | { ok: boolean }
                }
            )
          )
        // Once the engine stored fill-fields' result (the next step started), the runner holding the application's
        // browser is killed (the workflow may run there too, or have been balanced to the other runner).
        const reached = yield* Effect.promise(() =>
          waitFor(async () => {
            const status = await Effect.runPromise(events(runners.r1))
            return status.events.some((e) => e.eventType === "step_started" && e.data.step === "upload-resume")
          }, 120_000)
        )
        assert.isTrue(reached, "upload-resume never started")
        const victim = (yield* query(`SELECT runner FROM fleet_sessions WHERE session = 'apply-${run}'`))[0] ?? ""
        const survivor = victim === "r1" ? runners.r2 : runners.r1
        const survivorName = victim === "r1" ? "r2" : "r1"
        runners[victim as "r1" | "r2"].child.kill("SIGKILL")

        let status = yield* events(survivor)
        const finished = yield* Effect.promise(() =>
          waitFor(async () => {
            status = await Effect.runPromise(events(survivor))
            return status.result !== null && !("suspended" in status.result)
          }, 150_000)
        )
        assert.isTrue(finished, JSON.stringify(status.events.slice(-5)))
        assert.isTrue(status.result?.ok, JSON.stringify(status.result))
        const starts = startsPerStep(status.events.map((e) => ({ type: e.eventType, data: e.data })))
        for (const step of ["start-browser", "analyze-form", "fill-fields"]) assert.strictEqual(starts[step], 1, step)
        const verify = status.events.find((e) => e.eventType === "step_started" && e.data.step === "verify")
        assert.strictEqual(verify?.data.runner, survivorName)
        assert.strictEqual(ats.submissions().length, 1)
        assert.strictEqual(ats.submissions()[0]!.resume?.name, "resume.pdf")
        assert.deepInclude(ats.submissions()[0]!.fields, { "legalName--firstName": "Ada" })
        // The restored page's first request already carried the site's HttpOnly cookie: no second draft was started.
        assert.strictEqual(ats.drafts(), 1, "a request without the session cookie started a second draft")
        const restored = yield* query("SELECT count(*) FROM task_events WHERE event_type = 'session_restored'")
        const all = yield* query(
          "SELECT workflow_run_id, event_type, data FROM task_events WHERE event_type NOT IN ('engine_operation') ORDER BY id"
        )
        assert.isAtLeast(Number(restored[0]), 1, `killed ${victim}: ${all.join("\n")}`)
      }),
    240_000
  )

  it.live(
    "switchyard cluster dev starts a database and runners a person can use, starts a runner that died again, and leaves nothing when stopped",
    () =>
      Effect.gen(function* () {
        const dir = tempDir("switchyard-dev-")
        const { spawn } = yield* Effect.promise(() => import("node:child_process"))
        const port = 20_000 + Math.floor(Math.random() * 20_000)
        const uploads = join(dir, "uploads")
        const child = spawn(
          process.execPath,
          [main, "cluster", "dev", "--runners", "2", "--port", String(port), "--upload-root", uploads],
          {
            env: { ...process.env, TMPDIR: dir, SWITCHYARD_LOG_DIR: join(dir, "logs") },
            stdio: ["ignore", "ignore", "pipe"]
          }
        )
        let stderr = ""
        child.stderr.on("data", (chunk) => {
          stderr += String(chunk)
        })
        const exited = new Promise((resolve) => child.once("exit", resolve))
        yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
        const ready = yield* Effect.promise(() =>
          waitFor(() => (stderr.match(/JSON-RPC|MCP over HTTP at/g) ?? []).length >= 2, 120_000)
        )
        assert.isTrue(ready, stderr)
        const url = /DATABASE_URL=(\S+)/.exec(stderr)?.[1]
        assert.isString(url, stderr)
        const pgDir = /data in (\S+)\)/.exec(stderr)?.[1] ?? ""
        // Both runners beat within a second of serving.
        const live = yield* Effect.promise(() =>
          waitFor(async () => /fleet\s+2 live runners of 2/.test(await Effect.runPromise(statusOf(url!))), 30_000)
        )
        assert.isTrue(live, stderr)
        assert.include(stderr, `uploads from: ${uploads}`)
        const runnerOf = (name: string, i: number) =>
          processesMatching(`--runner ${name}`).filter((p) => p.cmdline.includes(`--port ${port + i} `))
        const r2 = runnerOf("r2", 1)
        assert.lengthOf(r2, 1)
        const environ = readFileSync(`/proc/${r2[0]!.pid}/environ`, "utf8").split("\0")
        assert.include(environ, `SWITCHYARD_UPLOAD_ROOTS=${uploads}`)

        // A runner that dies is reported and started again: the fleet is back to two live runners.
        process.kill(r2[0]!.pid, "SIGKILL")
        const reported = yield* Effect.promise(() =>
          waitFor(() => /runner r2 died \(signal SIGKILL/.test(stderr), 30_000)
        )
        assert.isTrue(reported, stderr)
        const back = yield* Effect.promise(() =>
          waitFor(
            () =>
              runnerOf("r2", 1).some((p) => p.pid !== r2[0]!.pid) &&
              (stderr.match(/JSON-RPC|MCP over HTTP at/g) ?? []).length >= 3,
            120_000
          )
        )
        assert.isTrue(back, stderr)
        const liveAgain = yield* Effect.promise(() =>
          waitFor(async () => /fleet\s+2 live runners of 2/.test(await Effect.runPromise(statusOf(url!))), 30_000)
        )
        assert.isTrue(liveAgain, stderr)
        child.kill("SIGINT")
        yield* Effect.promise(() => exited)
        assert.isTrue(yield* Effect.promise(() => waitFor(() => processesMatching(pgDir).length === 0, 10_000)))
        assert.isFalse(existsSync(pgDir), "the database's directory was left")
        assert.deepStrictEqual(
          processesMatching(`--runner r1`).filter((p) => p.cmdline.includes(String(port))),
          []
        )
      }),
    240_000
  )

  it.live(
    "switchyard apply hands the application to the fleet; a person passes its human check through a runner's front door",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const { pg, dir, runner } = yield* fleet()
        const profile = profileFileIn(dir)
        const r1 = yield* runner("r1", 2)
        const r2 = yield* runner("r2", 2)
        const apply = startApply(["--job", ats.jobs.lever, "--profile", profile], {
          DATABASE_URL: Redacted.value(pg.url),
          SWITCHYARD_RUNNERS: "r1,r2,r3",
          TMPDIR: dir
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => apply.child.kill("SIGKILL")))
        const asked = yield* Effect.promise(() =>
          waitFor(() => /check-captcha needs a person/.test(apply.stderr()), 120_000)
        )
        assert.isTrue(asked, `${apply.stderr()}\n--- r1\n${r1.stderr()}\n--- r2\n${r2.stderr()}`)
        const session = /session (apply-\w+)/.exec(apply.stderr())?.[1]
        assert.isString(session)
        // The person works through r1's front door, wherever the session's browser is.
        const typed = yield* call(r1, "browser.act", {
          session,
          action: { selector: '[name="captcha"]', method: "fill", arguments: [ats.captchaCode], description: "code" }
        })
        assert.isUndefined(typed.error, JSON.stringify(typed.error))
        yield* call(r1, "browser.act", {
          session,
          action: { selector: "button", method: "click", arguments: [], description: "Verify" }
        })
        const resumed = yield* call(r1, "browser.resume", { session })
        assert.deepInclude(resumed.result as object, { resumed: true, step: "check-captcha" })
        const done = yield* Effect.promise(() => apply.done)
        assert.isTrue(done.ok, JSON.stringify(done))
        assert.strictEqual(yield* Effect.promise(() => apply.exited), 0)
        assert.strictEqual(ats.submissions().length, 1)
      }),
    240_000
  )
})
