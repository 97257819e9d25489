/**
 * `switchyard apply` through the replay level, as a person runs it: real processes on one embedded store, a real
 * Chromium, the Greenhouse-like board on 127.0.0.1 and the scripted model behind Stagehand. The first application
 * fills its fields through the model; the next one, another applicant on another job of the same board, has them
 * replayed with its own values and asks the model nothing for them; a field renamed since is resolved again, and the
 * site receives each applicant's values in the right fields — also when the model picks the wrong field.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ScriptedModel from "../../src/Scenario/ScriptedModel.ts"
import * as AtsServer from "../fixtures/AtsServer.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import { type Changes, profileFileIn } from "../support/Applicant.ts"
import { cleanedAfterEach, startApply } from "../support/Apply.ts"

const { started, dirs } = cleanedAfterEach()

interface ReplayLine {
  readonly event: "replay"
  readonly outcome: "hit" | "miss" | "recorded" | "not_recorded"
  readonly target?: string
  readonly reason?: string
  readonly resolvedBy?: string
  readonly route: string
}

/** The replay level's lines in a run's attempt log (`<logs>/browser-automation/<day>/<run>/attempt.jsonl`). */
const replaysOf = (logs: string, run: string): ReadonlyArray<ReplayLine> => {
  const root = join(logs, "browser-automation")
  if (!existsSync(root)) return []
  return readdirSync(root).flatMap((day) => {
    const file = join(root, day, run, "attempt.jsonl")
    if (!existsSync(file)) return []
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as { readonly event: string })
      .filter((e): e is ReplayLine => e.event === "replay")
  })
}

/** One store, one log root and one model for every application; each applicant has a profile of their own. */
const workspace = (model: { readonly origin: string }) => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-apply-replay-"))
  dirs.push(dir)
  const logs = join(dir, "logs")
  const store = join(dir, "store.db")
  const apply = (job: string, who: Changes, name: string) => {
    const profile = profileFileIn(dir, who, `${name}.json`)
    const p = startApply(["--job", job, "--profile", profile, "--store", store], {
      TMPDIR: dir,
      SWITCHYARD_LOG_DIR: logs,
      // The suite turns the replay level off for services that are not testing it.
      SWITCHYARD_REPLAY: "on",
      SWITCHYARD_MODEL: "openai/scripted-seed-7",
      OPENAI_API_KEY: "scripted-model",
      OPENAI_BASE_URL: `${model.origin}/v1`
    })
    started.push(p)
    // The attempt log is complete once the process has exited: its writes run in the background.
    return Effect.promise(() => Promise.all([p.done, p.exited])).pipe(
      Effect.map(([done]) => {
        assert.isTrue(done.ok, JSON.stringify(done))
        return { run: String(done.run), replays: replaysOf(logs, String(done.run)) }
      })
    )
  }
  return { apply }
}

/** The model's act requests that asked it to fill a field, by their instruction. */
const fillsAsked = (model: ScriptedModel.ScriptedModel) =>
  model
    .recent()
    .filter((r) => r.kind === "act")
    .flatMap((r) => /given the following action: (fill "[^"]*")/.exec(r.prompt)?.[1] ?? [])

const grace = { firstName: "Grace", lastName: "Hopper", email: "grace@example.com", phone: "+1 202 555 0143" }
const alan = { firstName: "Alan", lastName: "Turing", email: "alan@example.com", phone: "+44 161 496 0000" }

describe("switchyard apply through the replay level", () => {
  it.live(
    "a second application to the board replays its field steps with its own values, and a renamed field is resolved again",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const model = yield* ScriptedModel.start
        const { apply } = workspace(model)

        // Ada on job 101: the model resolves each field, and what it resolved is kept.
        const first = yield* apply(ats.greenhouseJob(101), {}, "ada")
        assert.deepStrictEqual(fillsAsked(model), [
          'fill "First Name"',
          'fill "Last Name"',
          'fill "Email"',
          'fill "Phone"'
        ])
        const recorded = first.replays.filter((e) => e.outcome === "recorded")
        assert.deepStrictEqual(
          recorded.map((e) => [e.target, e.resolvedBy, e.route]),
          ["First Name", "Last Name", "Email", "Phone"].map((name) => [
            `textbox "${name}"`,
            "stagehand:dom",
            "/greenhouse/acme/jobs/:id"
          ]),
          JSON.stringify(first.replays)
        )

        // Grace on job 102: every field from replay, none asked of the model, each with Grace's value.
        const asked = fillsAsked(model).length
        const second = yield* apply(ats.greenhouseJob(102), grace, "grace")
        assert.strictEqual(fillsAsked(model).length, asked, "the model was asked to fill a field again")
        assert.deepStrictEqual(
          second.replays.map((e) => [e.outcome, e.target]),
          ["First Name", "Last Name", "Email", "Phone"].map((name) => ["hit", `textbox "${name}"`]),
          JSON.stringify(second.replays)
        )

        // The board renames a field: Alan's application misses on it, the model resolves it, the rest replays.
        ats.relabel("last_name", "Surname")
        const third = yield* apply(ats.greenhouseJob(103), alan, "alan")
        assert.deepStrictEqual(fillsAsked(model).slice(asked), ['fill "Surname"'])
        assert.deepStrictEqual(
          third.replays.map((e) => [e.outcome, e.target ?? e.reason]),
          [
            ["hit", 'textbox "First Name"'],
            ["miss", "nothing kept for this instruction on this page"],
            ["recorded", 'textbox "Surname"'],
            ["hit", 'textbox "Email"'],
            ["hit", 'textbox "Phone"']
          ],
          JSON.stringify(third.replays)
        )

        // What the site received: each applicant's own values, each in its own field, one application per job.
        const received = ats.submissions().map((s) => ({
          job: s.job,
          first: s.fields.first_name,
          last: s.fields.last_name,
          email: s.fields.email,
          phone: s.fields.phone,
          resume: s.resume?.name
        }))
        assert.deepStrictEqual(received, [
          {
            job: "/greenhouse/acme/jobs/101",
            first: "Ada",
            last: "Lovelace",
            email: "ada@example.com",
            phone: "+44 20 7946 0000",
            resume: "resume.pdf"
          },
          { job: "/greenhouse/acme/jobs/102", first: "Grace", last: "Hopper", ...rest(grace) },
          { job: "/greenhouse/acme/jobs/103", first: "Alan", last: "Turing", ...rest(alan) }
        ])
      }),
    420_000
  )
})

const rest = (who: { readonly email: string; readonly phone: string }) => ({
  email: who.email,
  phone: who.phone,
  resume: "resume.pdf"
})

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A model that fills "Last Name"'s value into the "First Name" box, and every other field where it is asked to. */
const confusedModel: LlmServer.Script = (request) => {
  const prompt = LlmServer.promptText(request)
  const reply = (value: unknown) => ({ json: LlmServer.chatCompletion(JSON.stringify(value)) })
  if (!("twoStep" in (LlmServer.requestedSchema(request)?.properties ?? {}))) return reply({ elements: [] })
  const fill = /given the following action: fill "([^"]+)" with "([^"]*)"/s.exec(prompt)
  const name = fill?.[1] === "Last Name" ? "First Name" : fill?.[1]
  const id =
    name === undefined
      ? undefined
      : new RegExp(`\\[(\\d+-\\d+)\\] textbox: ${escapeRegExp(name)}`, "m").exec(prompt)?.[1]
  return reply({
    action: id === undefined ? null : { elementId: id, description: name, method: "fill", arguments: [fill![2]] },
    twoStep: false
  })
}

describe("switchyard apply with a model that picks the wrong field", () => {
  it.live(
    "the page is read again after the sentences, and each field that holds another's value is set through its id",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const llm = yield* LlmServer.start(confusedModel)
        const { apply } = workspace(llm)
        yield* apply(ats.greenhouseJob(101), {}, "ada")
        // The model was asked, and answered "First Name" for "Last Name".
        const asked = llm.requests.map(
          (r) => /given the following action: (fill "[^"]*")/.exec(LlmServer.promptText(r))?.[1]
        )
        assert.include(asked, 'fill "Last Name"')
        const [received] = ats.submissions()
        assert.deepInclude(received!.fields, {
          first_name: "Ada",
          last_name: "Lovelace",
          email: "ada@example.com",
          phone: "+44 20 7946 0000"
        })
      }),
    240_000
  )
})
