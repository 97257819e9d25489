/**
 * Job applications on a fleet, as a person operates them: a job whose site refuses connections fails at once with
 * the cause and `apply.start {retry: true}` tries it again once the site answers; a résumé outside the runners' upload
 * folders fails the run naming the setting instead of waiting for a person who could not fix it; and
 * `switchyard apply` reconnecting to a run (its process was killed) prints what happens from then on and what the run
 * waits for, not the whole history again, `switchyard resume` against the fleet's database ends the wait, and
 * `apply --cancel` ends another.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import * as AtsServer from "../fixtures/AtsServer.ts"
import * as JobSite from "../fixtures/JobSite.ts"
import { profileFileIn, profileIn } from "../support/Applicant.ts"
import { cli, resumeCli, startApply } from "../support/Apply.ts"
import { fleet, stopFleets } from "../support/Fleet.ts"
import type { Service } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopFleets)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

interface Status {
  readonly events: ReadonlyArray<{ eventType: string; data: Record<string, unknown> }>
  readonly attempts: ReadonlyArray<{ attempt: number; run: string; outcome: { state: string; error?: string } }>
}

/** `apply.status` until the run ended (succeeded, failed or cancelled). */
const ended = (runner: Service, run: string) =>
  Effect.promise(async () => {
    let status: Status | undefined
    await waitFor(async () => {
      status = (await runner.call("apply.status", { run })).result as Status
      const mine = status.attempts.find((a) => a.run === run)
      return mine !== undefined && mine.outcome.state !== "running"
    }, 150_000)
    return status!
  })

describe.skipIf(Postgres.binDir() === undefined)("job applications on a fleet", () => {
  it.live(
    "an unreachable site fails at once and apply.start {retry: true} applies once it answers; a résumé outside the upload folders names the setting",
    () =>
      Effect.gen(function* () {
        const { dir, runner } = yield* fleet()
        const r1 = yield* runner("r1", 2)
        const profile = profileIn(dir)
        const port = yield* Effect.promise(freePort)
        const job = `http://127.0.0.1:${port}/careers/jobs/404`

        const first = (yield* Effect.promise(() => r1.call("apply.start", { job, profile }))).result as { run: string }
        const failed = yield* ended(r1, first.run)
        const attempt1 = failed.attempts.find((a) => a.run === first.run)
        assert.strictEqual(attempt1?.outcome.state, "failed")
        assert.include(attempt1?.outcome.error, `ECONNREFUSED 127.0.0.1:${port}`)
        assert.deepStrictEqual(
          failed.events.filter((e) => e.eventType === "step_started").map((e) => e.data.step),
          ["start-browser"]
        )
        // Asked again as it was, it answers the ended run and starts nothing.
        const again = (yield* Effect.promise(() => r1.call("apply.start", { job, profile }))).result as {
          run: string
          outcome?: { state: string }
        }
        assert.strictEqual(again.run, first.run)
        assert.strictEqual(again.outcome?.state, "failed")

        const site = yield* JobSite.startOn(port)
        const retry = (yield* Effect.promise(() => r1.call("apply.start", { job, profile, retry: true }))).result as {
          run: string
          attempt: number
        }
        assert.strictEqual(retry.attempt, 2)
        assert.notStrictEqual(retry.run, first.run)
        const applied = yield* ended(r1, retry.run)
        assert.strictEqual(
          applied.attempts.find((a) => a.run === retry.run)?.outcome.state,
          "succeeded",
          JSON.stringify(applied.attempts)
        )
        assert.strictEqual(site.posts(), 1)

        // A résumé the runners may not upload from: a failure that names the setting, not a wait for a person.
        const elsewhere = mkdtempSync(join(tmpdir(), "switchyard-elsewhere-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(elsewhere, { recursive: true, force: true })))
        const outside = profileIn(elsewhere, { email: "grace@example.com" }, "cv.pdf")
        const started = (yield* Effect.promise(() => r1.call("apply.start", { job, profile: outside }))).result as {
          run: string
        }
        const refused = yield* ended(r1, started.run)
        const state = refused.attempts.find((a) => a.run === started.run)?.outcome
        assert.strictEqual(state?.state, "failed")
        assert.include(state?.error, "SWITCHYARD_UPLOAD_ROOTS")
        assert.isFalse(refused.events.some((e) => e.eventType === "human_needed"))
        assert.strictEqual(site.posts(), 1)
      }),
    400_000
  )

  it.live(
    "switchyard apply reconnecting to a run prints what comes next, not the history; switchyard resume on the fleet ends its wait; --cancel ends another",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const { pg, dir, runner } = yield* fleet()
        const r1 = yield* runner("r1", 2)
        const profile = profileFileIn(dir)
        const env = { DATABASE_URL: Redacted.value(pg.url), SWITCHYARD_RUNNERS: "r1,r2,r3", TMPDIR: dir }
        const args = ["--job", ats.jobs.lever, "--profile", profile]
        const first = startApply(args, env)
        yield* Effect.addFinalizer(() => Effect.sync(() => first.child.kill("SIGKILL")))
        const asked = yield* Effect.promise(() =>
          waitFor(() => /check-captcha needs a person/.test(first.stderr()), 150_000)
        )
        assert.isTrue(asked, first.stderr())
        assert.match(first.stderr(), /fill-fields done in \d+\.\d s/)
        first.child.kill("SIGKILL")

        const second = startApply(args, env)
        yield* Effect.addFinalizer(() => Effect.sync(() => second.child.kill("SIGKILL")))
        const told = yield* Effect.promise(() =>
          waitFor(() => /when done: switchyard resume apply-\w+/.test(second.stderr()), 60_000)
        )
        assert.isTrue(told, second.stderr())
        assert.match(second.stderr(), /continuing it; it waits for a person/)
        assert.notMatch(second.stderr(), /start-browser started|fill-fields done/)

        const session = /switchyard resume (apply-\w+)/.exec(second.stderr())![1]!
        const typed = yield* Effect.promise(() =>
          r1.call("browser.act", {
            session,
            action: { selector: '[name="captcha"]', method: "fill", arguments: [ats.captchaCode], description: "code" }
          })
        )
        assert.isUndefined(typed.error, JSON.stringify(typed.error))
        yield* Effect.promise(() =>
          r1.call("browser.act", {
            session,
            action: { selector: "button", method: "click", arguments: [], description: "Verify" }
          })
        )
        const resumed = yield* Effect.promise(() => resumeCli([session], env))
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        const done = yield* Effect.promise(() => second.done)
        assert.isTrue(done.ok, `${JSON.stringify(done)}\n${second.stderr()}`)
        assert.match(second.stderr(), /check-captcha:after-person done in/)
        assert.strictEqual(ats.submissions().length, 1)

        // Another applicant's run waits for a person too; it is cancelled from a terminal instead.
        const grace = profileFileIn(dir, { email: "grace@example.com" }, "grace.json")
        const third = startApply(["--job", ats.jobs.lever, "--profile", grace], env)
        yield* Effect.addFinalizer(() => Effect.sync(() => third.child.kill("SIGKILL")))
        const waiting = yield* Effect.promise(() =>
          waitFor(() => /check-captcha needs a person/.test(third.stderr()), 150_000)
        )
        assert.isTrue(waiting, third.stderr())
        const run = /run (\w+)/.exec(third.stderr())![1]!
        const cancelled = yield* Effect.promise(() => cli("apply", ["--cancel", run], env))
        assert.strictEqual(cancelled.code, 0, cancelled.stderr)
        assert.match(cancelled.stderr, /cancelled/)
        const stopped = yield* Effect.promise(() => third.done)
        assert.deepInclude((stopped as { error?: object }).error ?? {}, { type: "cancelled" })
        const status = yield* Effect.promise(() => cli("apply", ["--status", run], env))
        assert.match(status.stdout, new RegExp(`attempt 1 +run ${run} +cancelled`))
        assert.strictEqual(ats.submissions().length, 1)
      }),
    400_000
  )
})
