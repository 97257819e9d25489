/**
 * `switchyard apply` as a person runs it: real processes on an embedded store, a real Chromium, and job sites shaped
 * like Greenhouse, Lever and Workday on 127.0.0.1. A process killed mid-application and started again finishes it
 * without running a completed step again; a human check waits for a person across a restart.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import * as AtsServer from "../fixtures/AtsServer.ts"
import { type ApplyProcess, eventsIn, startApply, startsPerStep } from "../support/Apply.ts"
import { processesMatching } from "../support/Processes.ts"
import { waitFor } from "../support/Wait.ts"

const started: Array<ApplyProcess> = []
const dirs: Array<string> = []

afterEach(async () => {
  for (const p of started.splice(0))
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL")
  for (const dir of dirs.splice(0)) {
    // Every browser the runs started is gone with them (their profiles live under the run's own TMPDIR).
    assert.isTrue(await waitFor(() => processesMatching(dir).length === 0, 10_000), `processes left under ${dir}`)
    await Effect.runPromise(LocalChromium.reapStaleProfiles(dir))
    rmSync(dir, { recursive: true, force: true })
  }
})

/** A temp dir with the applicant's profile and résumé, the store file, and a TMPDIR for the browsers. */
const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-apply-"))
  dirs.push(dir)
  writeFileSync(join(dir, "resume.pdf"), "%PDF-1.4\n% Ada Lovelace, analyst\n")
  writeFileSync(join(dir, "profile.json"), JSON.stringify(AtsServer.applicant("resume.pdf")))
  const store = join(dir, "store.db")
  const apply = (job: string) => {
    const p = startApply(["--job", job, "--profile", join(dir, "profile.json"), "--store", store], {
      TMPDIR: dir,
      SWITCHYARD_LOG_DIR: join(dir, "logs")
    })
    started.push(p)
    return p
  }
  return { dir, store, apply }
}

const kill = async (p: ApplyProcess) => {
  p.child.kill("SIGKILL")
  await p.exited
}

describe("switchyard apply", () => {
  it.live(
    "killed after a step, run again: it finishes there, no completed step re-ran, the form's pages were kept",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const { store, apply } = workspace()
        const first = apply(ats.jobs.workday)
        // The next step starts only once the engine stored fill-fields' result: from then on it is done for good.
        const filled = yield* Effect.promise(() =>
          waitFor(
            () => eventsIn(store).some((e) => e.type === "step_started" && e.data.step === "upload-resume"),
            120_000
          )
        )
        assert.isTrue(filled, `upload-resume never started: ${first.stderr()}`)
        yield* Effect.promise(() => kill(first))
        const before = startsPerStep(eventsIn(store))
        const completed = ["start-browser", "analyze-form", "fill-fields"]

        const second = apply(ats.jobs.workday)
        const done = yield* Effect.promise(() => second.done)
        assert.isTrue(done.ok, JSON.stringify(done))
        assert.deepInclude(done.result as object, { platform: "workday", confirmation: "Application received" })
        assert.strictEqual(yield* Effect.promise(() => second.exited), 0)

        const events = eventsIn(store)
        const starts = startsPerStep(events)
        for (const step of completed)
          assert.strictEqual(starts[step], 1, `${step} ran again: ${JSON.stringify(starts)}`)
        assert.isAtLeast(starts.verify ?? 0, 1)
        // The new browser was put back on the wizard's page with the site's session cookie: page 1 was not redone.
        assert.isTrue(
          events.some((e) => e.type === "session_restored"),
          "the session was not restored"
        )
        assert.isAtLeast(before["fill-fields"] ?? 0, 1)
        const submissions = ats.submissions()
        assert.strictEqual(submissions.length, 1)
        assert.deepInclude(submissions[0]!.fields, { "legalName--firstName": "Ada", emailAddress: "ada@example.com" })
        assert.strictEqual(submissions[0]!.resume?.name, "resume.pdf")
      }),
    240_000
  )

  it.live(
    "a human check waits for a person across a restart; their browser.resume lets the application finish",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const { store, apply } = workspace()
        const first = apply(ats.jobs.lever)
        const asked = yield* Effect.promise(() =>
          waitFor(() => eventsIn(store).some((e) => e.type === "human_needed"), 120_000)
        )
        assert.isTrue(asked, `no person was asked: ${first.stderr()}`)
        yield* Effect.promise(() => kill(first))

        const second = apply(ats.jobs.lever)
        const session = String(eventsIn(store).find((e) => e.type === "human_needed")!.data.session)
        // The person works on the page the run left, in the new process's browser.
        const typed = yield* Effect.promise(() =>
          second.call("browser.act", {
            session,
            action: { selector: '[name="captcha"]', method: "fill", arguments: [ats.captchaCode], description: "code" }
          })
        )
        assert.isUndefined(typed.error, JSON.stringify(typed.error))
        yield* Effect.promise(() =>
          second.call("browser.act", {
            session,
            action: { selector: "button", method: "click", arguments: [], description: "Verify" }
          })
        )
        const resumed = yield* Effect.promise(() => second.call("browser.resume", { session }))
        assert.deepInclude(resumed.result as object, { resumed: true, step: "check-captcha" })

        const done = yield* Effect.promise(() => second.done)
        assert.isTrue(done.ok, JSON.stringify(done))
        assert.deepInclude(done.result as object, { platform: "lever" })
        const events = eventsIn(store)
        const starts = startsPerStep(events)
        assert.strictEqual(starts["check-captcha"], 1)
        assert.strictEqual(starts["check-captcha:after-person"], 1)
        // One person asked once (the request may be written twice if the process died while writing it).
        assert.strictEqual(new Set(events.filter((e) => e.type === "human_needed").map((e) => e.data.token)).size, 1)
        assert.strictEqual(ats.submissions().length, 1)
        assert.deepInclude(ats.submissions()[0]!, { job: "/lever/acme/202" })
      }),
    240_000
  )
})
