/**
 * On a fleet too, a job application is sent once wherever the runner holding its browser dies: `switchyard apply`
 * hands it to two runner processes on PostgreSQL; the runner with the application's browser is killed (SIGKILL)
 * before the Submit click, with the POST held by the site, once the site's answer arrived, and with the
 * confirmation on screen. The other runner takes the application over, decides from the site or a person's answer
 * (`switchyard resume` against the fleet's database), and the site — which counts every POST — has one application.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Postgres from "../../src/Cluster/Postgres.ts"
import * as JobSite from "../fixtures/JobSite.ts"
import { profileFileIn } from "../support/Applicant.ts"
import { type ApplyProcess, resumeCli, startApply } from "../support/Apply.ts"
import { fleet, stopFleets } from "../support/Fleet.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopFleets)

type Moment = "before the click" | "POST held" | "answer arrived" | "confirmation shown"

/** Applies on a fresh fleet, kills the runner holding the browser at `moment`, and checks the site's count. */
const applyAndKill = (moment: Moment) =>
  Effect.gen(function* () {
    const site = yield* JobSite.start
    const { pg, dir, runner, query } = yield* fleet({ SWITCHYARD_SUBMIT_WAIT_MS: "20000" })
    const runners = { r1: yield* runner("r1", 2), r2: yield* runner("r2", 2) }
    const profile = profileFileIn(dir)
    const env = { DATABASE_URL: Redacted.value(pg.url), SWITCHYARD_RUNNERS: "r1,r2,r3", TMPDIR: dir }
    const apply: ApplyProcess = startApply(
      ["--job", site.job, "--profile", profile, "--applications", site.applications],
      env
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => apply.child.kill("SIGKILL")))
    const until = (condition: () => boolean | Promise<boolean>, what: string) =>
      Effect.promise(() => waitFor(condition, 150_000)).pipe(
        Effect.flatMap((ok) =>
          ok
            ? Effect.void
            : Effect.die(
                new Error(
                  `${what} never happened:\n${apply.stderr()}\n--- r1\n${runners.r1.stderr().slice(-3000)}\n--- r2\n${runners.r2.stderr().slice(-3000)}`
                )
              )
        )
      )
    const marked = async () =>
      (await Effect.runPromise(query("SELECT count(*) FROM task_events WHERE event_type = 'submit_attempted'")))[0] ===
      "1"

    if (moment === "before the click") site.ready.hold()
    if (moment === "POST held") site.submit.hold()
    if (moment === "answer arrived") site.confirmation.hold()
    if (moment === "before the click") yield* until(marked, "the submit's mark")
    if (moment === "POST held") yield* until(() => site.submit.waiting() === 1, "the POST")
    if (moment === "answer arrived")
      yield* until(() => site.answered() === 1 && site.confirmation.waiting() === 1, "the site's answer")
    if (moment === "confirmation shown") yield* until(() => site.confirmations() === 1, "the confirmation page")

    const session = /session (apply-\w+)/.exec(apply.stderr())?.[1] ?? ""
    const victim = (yield* query(`SELECT runner FROM fleet_sessions WHERE session = '${session}'`))[0] as "r1" | "r2"
    runners[victim].child.kill("SIGKILL")
    const killedAt = Date.now()
    site.ready.release()
    site.confirmation.release()

    if (moment === "before the click" || moment === "POST held") {
      // The survivor finds the mark and a site that shows no application: it asks instead of clicking again.
      yield* until(() => /submit needs a person/.test(apply.stderr()), "the question to a person")
      assert.strictEqual(site.posts(), moment === "POST held" ? 1 : 0)
      site.submit.release()
      if (moment === "POST held") yield* until(() => site.recorded().length === 1, "the site's record")
      // The person looks at the site's list of applications and answers, against the fleet's database.
      const answer = moment === "POST held" ? "--submitted" : "--not-submitted"
      const resumed = yield* Effect.promise(() => resumeCli([session, answer], env))
      assert.strictEqual(resumed.code, 0, resumed.stderr)
    }
    const done = yield* Effect.promise(() => apply.done)
    assert.isTrue(done.ok, `${JSON.stringify(done)}\n${apply.stderr()}`)
    assert.strictEqual(site.posts(), 1, `${moment}: ${apply.stderr()}`)
    assert.strictEqual(site.recorded().length, 1)
    const survivor = victim === "r1" ? "r2" : "r1"
    const steps = yield* query(
      "SELECT data->>'step' || ' ' || coalesce(data->>'runner', '') FROM task_events WHERE event_type = 'step_started' ORDER BY id"
    )
    assert.isTrue(
      steps.some((s) => s.endsWith(` ${survivor}`)),
      `${survivor} took nothing over: ${steps.join(", ")}`
    )
    process.stderr.write(`fleet submit, runner killed ${moment}: finished ${Date.now() - killedAt} ms after the kill\n`)
  }).pipe(Effect.scoped)

describe.skipIf(Postgres.binDir() === undefined)("a fleet sends an application once", () => {
  for (const moment of ["before the click", "POST held", "answer arrived", "confirmation shown"] as const) {
    it.live(`the runner with the browser killed ${moment}: one application`, () => applyAndKill(moment), 400_000)
  }
})
