/**
 * `switchyard apply` as a person runs it: real processes on an embedded store, a real Chromium, and job sites shaped
 * like Greenhouse, Lever and Workday on 127.0.0.1. A process killed mid-application and started again finishes it
 * without running a completed step again; a human check waits for a person across a restart.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as AtsServer from "../fixtures/AtsServer.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import { profileFileIn } from "../support/Applicant.ts"
import { type ApplyProcess, cleanedAfterEach, eventsIn, startApply, startsPerStep } from "../support/Apply.ts"
import { waitFor } from "../support/Wait.ts"

const { started, dirs } = cleanedAfterEach()

/** A temp dir with the applicant's profile and résumé, the store file, and a TMPDIR for the browsers. */
const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-apply-"))
  dirs.push(dir)
  const profile = profileFileIn(dir)
  const store = join(dir, "store.db")
  const apply = (job: string, env: Record<string, string> = {}) => {
    const p = startApply(["--job", job, "--profile", profile, "--store", store], {
      TMPDIR: dir,
      SWITCHYARD_LOG_DIR: join(dir, "logs"),
      ...env
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

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A model that answers Stagehand's act requests of the form `click the "Label" …` and `fill "Label" with "value"`
 * with the tree line named so, and anything else with nothing to do. */
const clickingModel: LlmServer.Script = (request) => {
  const properties = Object.keys(LlmServer.requestedSchema(request)?.properties ?? {})
  const prompt = LlmServer.promptText(request)
  const reply = (value: unknown) => ({ json: LlmServer.chatCompletion(JSON.stringify(value)) })
  if (!(properties.includes("action") && properties.includes("twoStep"))) return reply({ elements: [] })
  const click = /given the following action: click the "([^"]+)"/s.exec(prompt)
  const fill = /given the following action: fill "([^"]+)" with "([^"]*)"/s.exec(prompt)
  const name = click?.[1] ?? fill?.[1]
  const id =
    name === undefined
      ? undefined
      : // A field's own line, not its label's: a label is no place to type.
        new RegExp(`\\[(\\d+-\\d+)\\] ${fill === null ? "[\\w ]+" : "textbox"}: ${escapeRegExp(name)}`, "m").exec(
          prompt
        )?.[1]
  const [method, args] = fill === null ? ["click", []] : ["fill", [fill[2]]]
  return reply({
    action: id === undefined ? null : { elementId: id, description: name, method, arguments: args },
    twoStep: false
  })
}

describe("switchyard apply", () => {
  it.live(
    "with a model configured, the steps still read the form's facts and the model's engine uploads the résumé",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const llm = yield* LlmServer.start(clickingModel)
        const { store, apply } = workspace()
        const run = apply(ats.jobs.greenhouse, {
          SWITCHYARD_MODEL: "openai/gpt-4.1-mini",
          OPENAI_API_KEY: "sk-test",
          OPENAI_BASE_URL: `${llm.origin}/v1`
        })
        const done = yield* Effect.promise(() => run.done)
        assert.isTrue(done.ok, JSON.stringify(done))
        assert.deepInclude(done.result as object, { platform: "greenhouse" })
        const submissions = ats.submissions()
        assert.strictEqual(submissions.length, 1)
        assert.deepInclude(submissions[0]!.fields, { first_name: "Ada", email: "ada@example.com" })
        assert.strictEqual(submissions[0]!.resume?.name, "resume.pdf")
        // The cascade's first level is the model's: it clicked the upload, whose file chooser got the résumé.
        const operations = eventsIn(store).filter((e) => e.type === "engine_operation")
        const served = JSON.stringify(operations.map((e) => [e.data.operation, e.data.engine]))
        assert.isTrue(
          operations.some((e) => e.data.operation === "browser.upload" && e.data.engine === "stagehand:dom"),
          served
        )
        // The fields were filled by their sentences on the model's level too.
        const fills = operations.filter((e) => e.data.step === "fill-fields" && e.data.operation === "browser.act")
        assert.isNotEmpty(fills)
        assert.isTrue(
          fills.every((e) => e.data.engine === "stagehand:dom"),
          served
        )
        // The page's facts are read without a model whatever the cascade: the model was only asked to act.
        const acts = llm.requests.filter((r) => "action" in (LlmServer.requestedSchema(r)?.properties ?? {}))
        assert.isAbove(acts.length, 0)
        assert.strictEqual(acts.length, llm.requests.length, served)
      }),
    240_000
  )

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
        // The restored page's first request already carried the site's HttpOnly session cookie: no new draft.
        assert.strictEqual(ats.drafts(), 1, "a request without the session cookie started a second draft")
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
        // Restarted, it says at once what it waits for and how to end it.
        const told = yield* Effect.promise(() =>
          waitFor(() => /when done: switchyard resume apply-\w+/.test(second.stderr()), 60_000)
        )
        assert.isTrue(told, second.stderr())
        assert.match(
          second.stderr(),
          /continuing it; it waits for a person:\n\s*check-captcha needs a person: a human check/
        )
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
