/**
 * A job application that failed or was cancelled is tried again on purpose, and a page that cannot be reached fails
 * at once with the network's word: `switchyard apply` on a job whose site refuses connections fails its first step
 * naming `ECONNREFUSED`; run again it says so and sends nothing; with `--retry` after the site came back it applies,
 * as a new attempt beside the failed one (`--status` shows both). A run waiting for a person is cancelled with
 * `--cancel`; its retry keeps the submit's mark, so the new attempt still never clicks Submit a second time on its own.
 */
import { mkdtempSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as JobSite from "../fixtures/JobSite.ts"
import { profileFileIn } from "../support/Applicant.ts"
import { type ApplyProcess, cleanedAfterEach, cli, eventsIn, resumeCli, startApply } from "../support/Apply.ts"
import { waitFor } from "../support/Wait.ts"

const { started, dirs } = cleanedAfterEach()

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-retry-"))
  dirs.push(dir)
  const profile = profileFileIn(dir)
  const store = join(dir, "store.db")
  const env = { TMPDIR: dir, SWITCHYARD_LOG_DIR: join(dir, "logs"), SWITCHYARD_SUBMIT_WAIT_MS: "20000" }
  const args = (job: string, extra: ReadonlyArray<string> = []) => [
    "--job",
    job,
    "--profile",
    profile,
    "--store",
    store,
    ...extra
  ]
  const apply = (job: string, extra: ReadonlyArray<string> = []) => {
    const p = startApply(args(job, extra), env)
    started.push(p)
    return p
  }
  const run = (extra: ReadonlyArray<string>) => cli("apply", ["--store", store, ...extra], env)
  return { dir, store, profile, env, apply, run }
}

const ended = (p: ApplyProcess) => Effect.promise(() => Promise.all([p.done, p.exited]))

describe("trying an application again", () => {
  it.live(
    "a job whose site refuses connections fails its first step with ECONNREFUSED; once the site answers, --retry applies",
    () =>
      Effect.gen(function* () {
        const port = yield* Effect.promise(freePort)
        const job = `http://127.0.0.1:${port}/careers/jobs/404`
        const { store, profile, env, apply, run } = workspace()

        const first = apply(job)
        const [done, code] = yield* ended(first)
        assert.strictEqual(code, 1)
        assert.isFalse(done.ok)
        const cause = `ECONNREFUSED 127.0.0.1:${port}`
        assert.include(JSON.stringify(done), cause)
        assert.include(first.stderr(), cause)
        assert.match(first.stderr(), /start-browser failed after/)
        const events = eventsIn(store)
        // At once: one navigation, no step after the first, no retries of it.
        assert.deepStrictEqual(
          events.filter((e) => e.type === "step_started").map((e) => e.data.step),
          ["start-browser"]
        )
        assert.lengthOf(
          events.filter((e) => e.type === "engine_operation"),
          1
        )
        const runId = String((done as { run?: string }).run)

        // Run again as it was: the stored failure, the way out, and nothing sent.
        const again = apply(job)
        const [againDone, againCode] = yield* ended(again)
        assert.strictEqual(againCode, 1)
        assert.include(JSON.stringify(againDone), cause)
        // The way out as printed, naming this run's store: typed elsewhere it must retry this run, not start anew.
        const printed = /to try again as a new attempt: (switchyard apply .*)$/m.exec(again.stderr())?.[1]
        assert.strictEqual(printed, `switchyard apply --job ${job} --profile ${profile} --store ${store} --retry`)
        assert.lengthOf(
          eventsIn(store).filter((e) => e.type === "step_started"),
          1
        )

        // The site comes back; the retry is a new attempt that applies.
        const site = yield* JobSite.startOn(port)
        const retried = startApply(printed!.split(" ").slice(2), env)
        started.push(retried)
        const [retriedDone, retriedCode] = yield* ended(retried)
        assert.strictEqual(retriedCode, 0, retried.stderr())
        assert.isTrue(retriedDone.ok)
        assert.match(retried.stderr(), /attempt 2, a retry of run/)
        assert.strictEqual(site.posts(), 1)

        // Both attempts, as the store has them.
        const status = yield* Effect.promise(() => run(["--status", runId]))
        assert.strictEqual(status.code, 0, status.stderr)
        assert.match(status.stdout, new RegExp(`attempt 1 +run ${runId} +failed: .*${cause}`))
        assert.match(status.stdout, /attempt 2 +run \w+ +applied: Application received/)
        assert.match(status.stdout, /verify +done in/)
      }),
    300_000
  )

  it.live(
    "--cancel ends a run that waits for a person; --retry starts a new attempt that still never clicks Submit again on its own",
    () =>
      Effect.gen(function* () {
        const site = yield* JobSite.start
        const { apply, run, store, env } = workspace()
        const job = site.job
        const withList = ["--applications", site.applications]
        // Killed between the mark and the click: the next run asks a person.
        site.ready.hold()
        const first = apply(job, withList)
        yield* Effect.promise(() => waitFor(() => eventsIn(store).some((e) => e.type === "submit_attempted"), 120_000))
        first.child.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)
        site.ready.release()
        const second = apply(job, withList)
        yield* Effect.promise(() => waitFor(() => /submit needs a person/.test(second.stderr()), 120_000))
        const runId = /run (\w+)/.exec(second.stderr())![1]!

        // Restarted, it said what it waits for; now the person cancels it instead.
        const cancelled = yield* Effect.promise(() => run(["--cancel", runId]))
        assert.strictEqual(cancelled.code, 0, cancelled.stderr)
        const [done, code] = yield* ended(second)
        assert.strictEqual(code, 1)
        assert.deepInclude((done as { error?: object }).error ?? {}, { type: "cancelled" })
        const again = apply(job, withList)
        const [againDone] = yield* ended(again)
        assert.isFalse(againDone.ok)
        assert.match(again.stderr(), /was cancelled; nothing was sent again/)

        // The retry knows the earlier mark: it asks again rather than click.
        const retry = apply(job, [...withList, "--retry"])
        yield* Effect.promise(() => waitFor(() => /submit needs a person/.test(retry.stderr()), 120_000))
        assert.strictEqual(site.posts(), 0)
        const session = /switchyard resume (apply-\w+)/.exec(retry.stderr())![1]!
        const answered = yield* Effect.promise(() => resumeCli([session, "--not-submitted", "--store", store], env))
        assert.strictEqual(answered.code, 0, answered.stderr)
        const [retried, retriedCode] = yield* ended(retry)
        assert.strictEqual(retriedCode, 0, retry.stderr())
        assert.isTrue(retried.ok)
        assert.strictEqual(site.posts(), 1)
        const status = yield* Effect.promise(() => run(["--status", runId]))
        assert.match(status.stdout, /attempt 1 +run \w+ +cancelled/)
        assert.match(status.stdout, /attempt 2 +run \w+ +applied/)
      }),
    300_000
  )
})
