/**
 * A job application is sent once, whatever moment its process dies at: `switchyard apply` on the embedded store is
 * killed (SIGKILL) before the Submit click, while the site holds the POST, once the site's answer arrived, and with
 * the confirmation on screen; run again, it decides from the site (its "already applied" page, its list of
 * applications) or a person's answer, and the site — which counts every POST and deduplicates nothing — ends up
 * with exactly one application each time.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as JobSite from "../fixtures/JobSite.ts"
import { profileFileIn } from "../support/Applicant.ts"
import { type ApplyProcess, cleanedAfterEach, eventsIn, resumeCli, startApply } from "../support/Apply.ts"
import { waitFor } from "../support/Wait.ts"

const { started, dirs } = cleanedAfterEach()

const workspace = (site: JobSite.JobSite) => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-once-"))
  dirs.push(dir)
  const profile = profileFileIn(dir)
  const store = join(dir, "store.db")
  const env = { TMPDIR: dir, SWITCHYARD_LOG_DIR: join(dir, "logs"), SWITCHYARD_SUBMIT_WAIT_MS: "20000" }
  const apply = (extra: ReadonlyArray<string> = []) => {
    const p = startApply(
      ["--job", site.job, "--profile", profile, "--applications", site.applications, "--store", store, ...extra],
      env
    )
    started.push(p)
    return p
  }
  const has = (type: string) => eventsIn(store).some((e) => e.type === type)
  return { dir, store, apply, has }
}

const until = (condition: () => boolean, what: string, p: ApplyProcess, ms = 120_000) =>
  Effect.promise(() => waitFor(condition, ms)).pipe(
    Effect.flatMap((ok) => (ok ? Effect.void : Effect.die(new Error(`${what} never happened: ${p.stderr()}`))))
  )

const kill = (p: ApplyProcess) =>
  Effect.promise(async () => {
    p.child.kill("SIGKILL")
    await p.exited
  })

/** Runs the command again and waits for its end: it must succeed. */
const finish = (p: ApplyProcess) =>
  Effect.gen(function* () {
    const done = yield* Effect.promise(() => p.done)
    assert.isTrue(done.ok, `${JSON.stringify(done)}\n${p.stderr()}`)
    assert.strictEqual(yield* Effect.promise(() => p.exited), 0)
  })

describe("switchyard apply sends an application once, wherever it is killed", () => {
  it.live(
    "killed after the mark, before the click: run again, a person says it was not received, it is sent once",
    () =>
      Effect.gen(function* () {
        const site = yield* JobSite.start
        const { store, apply, has } = workspace(site)
        // The Submit button stays disabled while the site checks the résumé: the click waits.
        site.ready.hold()
        const first = apply()
        yield* until(() => has("submit_attempted"), "the submit's mark", first)
        yield* kill(first)
        assert.strictEqual(site.posts(), 0)
        site.ready.release()

        const second = apply()
        // The site shows no application and no confirmation: the run asks a person instead of clicking again.
        yield* until(() => /submit needs a person/.test(second.stderr()), "the question to a person", second)
        assert.match(second.stderr(), /when done: switchyard resume apply-\w+ --submitted/)
        assert.strictEqual(site.posts(), 0)
        const session = /switchyard resume (apply-\w+)/.exec(second.stderr())![1]!
        // The person looks at the site's list of applications (nothing there) and says so.
        const refused = yield* Effect.promise(() => resumeCli([session, "--store", store]))
        assert.strictEqual(refused.code, 2, refused.stderr)
        assert.match(refused.stderr, /waits for an answer/)
        const answered = yield* Effect.promise(() => resumeCli([session, "--not-submitted", "--store", store]))
        assert.strictEqual(answered.code, 0, answered.stderr)
        assert.match(answered.stderr, /resumed submit/)
        yield* finish(second)
        assert.strictEqual(site.posts(), 1)
        assert.strictEqual(site.recorded().length, 1)
      }),
    300_000
  )

  it.live(
    "killed while the site still holds the POST: run again, the site shows nothing yet, a person finds it received, nothing is sent again",
    () =>
      Effect.gen(function* () {
        const site = yield* JobSite.start
        const { store, apply } = workspace(site)
        site.submit.hold()
        const first = apply()
        yield* until(() => site.submit.waiting() === 1, "the POST", first)
        yield* kill(first)

        // The site is still working on that POST when the command runs again: its pages show no application yet.
        const second = apply()
        yield* until(() => /submit needs a person/.test(second.stderr()), "the question to a person", second)
        assert.strictEqual(site.posts(), 1)
        // The site finishes what it received, as servers do when the client is gone; the person sees it listed.
        site.submit.release()
        yield* until(() => site.recorded().length === 1, "the site's record", second)
        const session = /switchyard resume (apply-\w+)/.exec(second.stderr())![1]!
        const answered = yield* Effect.promise(() => resumeCli([session, "--submitted", "--store", store]))
        assert.strictEqual(answered.code, 0, answered.stderr)
        yield* finish(second)
        assert.strictEqual(site.posts(), 1)
        assert.strictEqual(site.recorded().length, 1)
        const decided = eventsIn(store).filter((e) => e.type === "submit_decided")
        assert.deepInclude(decided.at(-1)?.data, { how: "person" })
      }),
    300_000
  )

  it.live(
    "killed once the site's answer arrived, before its confirmation page loaded: run again, nothing is sent",
    () =>
      Effect.gen(function* () {
        const site = yield* JobSite.start
        const { apply } = workspace(site)
        site.confirmation.hold()
        const first = apply()
        yield* until(() => site.answered() === 1 && site.confirmation.waiting() === 1, "the site's answer", first)
        yield* kill(first)
        site.confirmation.release()

        const second = apply()
        yield* finish(second)
        assert.strictEqual(site.posts(), 1)
        assert.strictEqual(site.recorded().length, 1)
      }),
    300_000
  )

  it.live(
    "killed with the confirmation on screen: run again, it reads the confirmation, nothing is sent",
    () =>
      Effect.gen(function* () {
        const site = yield* JobSite.start
        const { apply } = workspace(site)
        const first = apply()
        yield* until(() => site.confirmations() === 1, "the confirmation page", first)
        yield* kill(first)

        const second = apply()
        yield* finish(second)
        assert.strictEqual(site.posts(), 1)
        assert.strictEqual(site.recorded().length, 1)
      }),
    300_000
  )

  it.live(
    "a site slower to answer than a click may wait: one application, no person needed",
    () =>
      Effect.gen(function* () {
        const site = yield* JobSite.start
        const { store, apply } = workspace(site)
        site.submit.hold()
        const only = apply()
        yield* until(() => site.submit.waiting() === 1, "the POST", only)
        // Longer than a click's time limit (and the page is replaced meanwhile): the run waits for the site's word.
        yield* Effect.sleep("25 seconds")
        site.submit.release()
        yield* finish(only)
        assert.strictEqual(site.posts(), 1)
        assert.strictEqual(site.recorded().length, 1)
        assert.isFalse(eventsIn(store).some((e) => e.type === "human_needed"))
      }),
    300_000
  )
})
