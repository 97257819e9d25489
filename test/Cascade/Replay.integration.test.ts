/**
 * The replay level on a real Chromium, with Stagehand (DOM mode) answered by the scripted model and the Playwright
 * level behind it: a second session on the same form replays what the model resolved without asking it, a changed
 * form misses and is repaired by the cascade without a wrong field written (the page's own record), two sites never
 * share what is kept, and a secret is never kept.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { chromium } from "playwright-core"
import { defaultCascade, type Policy } from "../../src/Cascade/Policy.ts"
import { Router, type ToolAnswer } from "../../src/Cascade/Router.ts"
import * as Events from "../../src/Logging/Events.ts"
import * as Secrets from "../../src/Logging/Secrets.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { Sandbox } from "../../src/Sandbox/Sandbox.ts"
import * as ScriptedModel from "../../src/Scenario/ScriptedModel.ts"
import * as Sites from "../../src/Scenario/Sites.ts"
import * as SessionStack from "../../src/Server/SessionStack.ts"
import * as Resolutions from "../../src/Store/Resolutions.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"

const modelFirst: Policy = {
  default: {
    ...defaultCascade,
    levels: [
      { engine: "stagehand", mode: "dom", retryCount: 0, timeoutPerAttemptMs: 20_000 },
      { engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 15_000 }
    ]
  }
}

const modelFree: Policy = {
  default: { ...defaultCascade, levels: [{ engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 15_000 }] }
}

/** What each test starts with: the bundled sites, the scripted model, and a store in a file of the test's own. */
const setup = Effect.gen(function* () {
  const file = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-replay-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map((dir) => join(dir, "store.db")))
  return {
    sites: yield* Sites.start(),
    model: yield* ScriptedModel.start,
    file,
    store: yield* Resolutions.make({ location: { kind: "embedded", file } })
  }
})

/**
 * The application form the replay bench runs (`scenarios/sites/changing-form.html`): `?v=2` is the same form changed;
 * its "Continue" link leaves for a page titled "Done".
 */
const form = (sites: Sites.Sites, query = "") => `${sites.origin}/changing-form.html${query}`

interface Session {
  /** An act or a navigation, answered ok (the test fails otherwise). */
  readonly act: (instruction: string) => Effect.Effect<ToolAnswer>
  readonly navigate: (url: string) => Effect.Effect<ToolAnswer>
  readonly observe: (instruction: string) => Effect.Effect<ToolAnswer>
  readonly page: <A>(read: () => A) => Effect.Effect<A>
  readonly events: ReadonlyArray<Events.Stamped>
  readonly close: Effect.Effect<void>
}

const ok = (answer: ToolAnswer) => {
  assert.isTrue(answer.ok, JSON.stringify(answer.error))
  return answer
}

/** A fresh session (its own browser) on the shared store: what a second worker, or a later day, would be. */
const session = (options: {
  readonly model: ScriptedModel.ScriptedModel
  readonly store: Resolutions.Resolutions["Service"]
  readonly policy?: Policy
  readonly enabled?: boolean
}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const built = yield* Layer.buildWithScope(
      SessionStack.layer({
        router: { policy: options.policy ?? modelFirst },
        sandbox: { idleTimeoutMs: null },
        engines: { model: options.model.modelConfig(7), stagehand: { domSettleTimeoutMs: 100 } },
        browser: LocalChromium.layer(),
        replay: { enabled: options.enabled ?? true, store: options.store }
      }),
      scope
    )
    const router = Context.get(built, Router)
    const sandbox = Context.get(built, Sandbox)
    const { events, sink } = Events.memory()
    const page = <A>(read: () => A) =>
      Effect.gen(function* () {
        const { wsEndpoint } = yield* sandbox.status
        return yield* Effect.promise(async () => {
          const browser = await chromium.connectOverCDP(wsEndpoint!)
          try {
            return await browser.contexts()[0]!.pages()[0]!.evaluate(read)
          } finally {
            await browser.close()
          }
        })
      })
    const call = (tool: string, args: unknown) =>
      router.call(tool, args).pipe(Effect.provideService(Events.Events, sink), Effect.map(ok))
    return {
      act: (instruction: string) => call("browser.act", { instruction }),
      navigate: (url: string) => call("browser.navigate", { url }),
      observe: (instruction: string) => call("browser.observe", { instruction }),
      page,
      events,
      close: Scope.close(scope, Exit.void)
    } satisfies Session
  })

type Written = ReadonlyArray<{ readonly field: string; readonly value: string | boolean }>
const record = () => (window as unknown as { record: Written }).record
const replays = (s: Session) => s.events.filter((e) => e.event === "replay")

/** The form filled as an applicant would. */
const apply = (s: Session, url: string, who: { name: string; email: string; phone: string }) =>
  Effect.gen(function* () {
    yield* s.navigate(url)
    return [
      yield* s.act(`fill "Full name" with "${who.name}"`),
      yield* s.act(`fill "Email" with "${who.email}"`),
      yield* s.act(`fill "Phone" with "${who.phone}"`),
      yield* s.act('select "Data" in "Team"'),
      yield* s.act('check "Willing to relocate"')
    ]
  })

describe("the replay level", () => {
  it.live(
    "a second session replays what the model resolved, with the next applicant's values and no model request",
    () =>
      Effect.gen(function* () {
        const { sites, model, store } = yield* setup
        const url = form(sites, "?v=1")

        const first = yield* session({ model, store })
        const answered = yield* apply(first, url, { name: "Ada Lovelace", email: "ada@example.com", phone: "555 0100" })
        yield* first.close
        assert.deepStrictEqual(
          answered.map((a) => a.state.level),
          [0, 0, 0, 0, 0],
          "the model's level served the first application"
        )
        const asked = model.counts().act
        assert.strictEqual(asked, 5)
        assert.deepStrictEqual(
          replays(first).map((e) => e.event === "replay" && e.outcome),
          ["miss", "recorded", "miss", "recorded", "miss", "recorded", "miss", "recorded", "miss", "recorded"],
          JSON.stringify(replays(first))
        )

        const second = yield* session({ model, store })
        const again = yield* apply(second, url, { name: "Grace Hopper", email: "grace@example.com", phone: "555 0199" })
        assert.deepStrictEqual(
          again.map((a) => a.state.level),
          ["replay", "replay", "replay", "replay", "replay"]
        )
        assert.strictEqual(model.counts().act, asked, "no model request for a replayed act")
        const written = yield* second.page(record)
        assert.deepStrictEqual(
          written
            .filter((w) => w.field !== "name" || w.value === "Grace Hopper")
            .map((w) => w.field)
            .at(-1),
          "relocate"
        )
        const values = yield* second.page(() =>
          ["name", "email", "phone", "team"].map((id) => (document.getElementById(id) as HTMLInputElement).value)
        )
        assert.deepStrictEqual(values, ["Grace Hopper", "grace@example.com", "555 0199", "Data"])
        assert.isTrue(yield* second.page(() => (document.getElementById("relocate") as HTMLInputElement).checked))
        // Each field got only its own value: nothing was typed anywhere else.
        assert.deepStrictEqual([...new Set(written.map((w) => w.field))].sort(), [
          "email",
          "name",
          "phone",
          "relocate",
          "team"
        ])
        const hit = replays(second).find((e) => e.event === "replay" && e.outcome === "hit")
        assert.strictEqual(
          hit?.event === "replay" ? hit.target : "",
          'textbox "Full name" in group "Contact" in form "Apply"'
        )
        const stats = yield* store.stats()
        assert.strictEqual(stats.hits, 5)
        assert.strictEqual(stats.entries, 5)
        yield* second.close
      }),
    120_000
  )

  it.live(
    "a changed form misses where it changed, the cascade repairs it and keeps the repair, and no other field is written",
    () =>
      Effect.gen(function* () {
        const { sites, model, store } = yield* setup
        const who = { name: "Ada Lovelace", email: "ada@example.com", phone: "555 0100" }

        const first = yield* session({ model, store })
        yield* apply(first, form(sites, "?v=1"), who)
        yield* first.act('click "Send application"')
        yield* first.close

        // The form changed: "Phone" is "Mobile phone", the button sits in a review section, a required Postcode is
        // new, and a referee's "Email" field sits beside the applicant's.
        const changed = form(sites, "?v=2")
        const second = yield* session({ model, store })
        const asked = model.counts().act
        const answers = yield* apply(second, changed, who)
        answers.push(yield* second.act('fill "Postcode" with "NW1 6XE"'))
        answers.push(yield* second.act('click "Send application"'))
        assert.deepStrictEqual(
          answers.map((a) => a.state.level),
          ["replay", "replay", 0, "replay", "replay", 0, 0]
        )
        assert.strictEqual(model.counts().act - asked, 3, "the model was asked for what changed, and only that")
        const misses = replays(second).flatMap((e) => (e.event === "replay" && e.outcome === "miss" ? [e.reason] : []))
        assert.deepStrictEqual(misses, [
          'no textbox "Phone" in group "Contact" in form "Apply" on the page',
          "nothing kept for this instruction on this page",
          'no button "Send application" in form "Apply" on the page'
        ])
        const written = yield* second.page(record)
        assert.deepStrictEqual(
          [...new Set(written.map((w) => w.field))].sort(),
          ["email", "name", "phone", "postcode", "relocate", "send", "team"],
          "the referee's Email was never written"
        )
        assert.strictEqual(
          yield* second.page(() => document.getElementById("status")!.textContent),
          "Received Ada Lovelace"
        )
        yield* second.close

        // The repairs were kept: the changed form now replays whole.
        const third = yield* session({ model, store })
        const before = model.counts().act
        const again = yield* apply(third, changed, {
          name: "Grace Hopper",
          email: "grace@example.com",
          phone: "555 0199"
        })
        again.push(yield* third.act('fill "Postcode" with "SW1A 1AA"'))
        again.push(yield* third.act('click "Send application"'))
        assert.deepStrictEqual(
          again.map((a) => a.state.level),
          ["replay", "replay", "replay", "replay", "replay", "replay", "replay"]
        )
        assert.strictEqual(model.counts().act, before)
        const values = yield* third.page(() =>
          ["name", "email", "phone", "postcode", "referee-email"].map(
            (id) => (document.getElementById(id) as HTMLInputElement).value
          )
        )
        assert.deepStrictEqual(values, ["Grace Hopper", "grace@example.com", "555 0199", "SW1A 1AA", ""])
        yield* third.close
      }),
    180_000
  )

  it.live(
    "a click whose target goes with the navigation it starts is named before the act the next time, then replayed",
    () =>
      Effect.gen(function* () {
        const { sites, model, store } = yield* setup
        const url = form(sites, "?v=1")
        const levels: Array<ToolAnswer["state"]["level"]> = []
        const kept: Array<string> = []
        for (let run = 0; run < 3; run++) {
          const s = yield* session({ model, store })
          yield* s.navigate(url)
          const answer = yield* s.act('click "Continue"')
          levels.push(answer.state.level)
          assert.strictEqual(answer.state.title, "Done")
          kept.push(
            replays(s)
              .flatMap((e) => (e.event === "replay" && e.outcome !== "miss" ? [e.outcome] : []))
              .join()
          )
          yield* s.close
        }
        assert.deepStrictEqual(levels, [0, 0, "replay"])
        assert.deepStrictEqual(kept, ["not_recorded", "recorded", "hit"])
        assert.strictEqual(model.counts().act, 2)
        const [entry] = yield* store.list()
        assert.deepStrictEqual(
          entry?.resolution.steps.map((step) => step.target.name),
          ["Continue"]
        )
        assert.isTrue(entry?.resolution.destructive, "a click that navigated is kept as one that costs to repeat")
      }),
    120_000
  )

  it.live(
    "two sites never share what is kept",
    () =>
      Effect.gen(function* () {
        const { sites: one, model, store } = yield* setup
        const other = yield* Sites.start()
        const first = yield* session({ model, store })
        yield* first.navigate(form(one))
        yield* first.act('fill "Email" with "ada@example.com"')
        yield* first.navigate(form(other))
        const elsewhere = yield* first.act('fill "Email" with "ada@example.com"')
        assert.strictEqual(elsewhere.state.level, 0, "the same page on another site is resolved by the cascade")
        assert.strictEqual(model.counts().act, 2)
        assert.deepStrictEqual((yield* store.list()).map((e) => e.key.site).sort(), [one.origin, other.origin].sort())
        assert.lengthOf(yield* store.list(other.origin), 1)
        assert.strictEqual(yield* store.clear(one.origin), 1)
        assert.deepStrictEqual(
          (yield* store.list()).map((e) => e.key.site),
          [other.origin]
        )
        yield* first.close
      }),
    120_000
  )

  it.live(
    "a field in an open shadow root that the model found is kept and replayed without it",
    () =>
      Effect.gen(function* () {
        const { model, store } = yield* setup
        const site = yield* SiteServer.start
        const url = site.url("/replay/shadow.html")
        for (const [run, name] of ["Ada", "Grace"].entries()) {
          const s = yield* session({ model, store })
          yield* s.navigate(url)
          const answer = yield* s.act(`fill "Last Name" with "${name}"`)
          assert.strictEqual(answer.state.level, run === 0 ? 0 : "replay", JSON.stringify(replays(s)))
          const values = yield* s.page(() =>
            ["first", "last"].map((id) => (document.getElementById(id) as unknown as { value: string }).value)
          )
          assert.deepStrictEqual(values, ["", name], "only the Last Name field holds the value")
          yield* s.close
        }
        assert.strictEqual(model.counts().act, 1, "the second session asked no model")
      }),
    120_000
  )

  it.live(
    "an observe the model-free level answered is not kept: the next session's lists what its page shows then",
    () =>
      Effect.gen(function* () {
        const { model, store } = yield* setup
        const site = yield* SiteServer.start
        const url = site.url("/replay/documents.html")
        const seen: Array<ReadonlyArray<{ method: string; description: string }>> = []
        for (const run of [0, 1]) {
          const s = yield* session({ model, store, policy: modelFree })
          yield* Effect.gen(function* () {
            yield* s.navigate(url)
            // The next day the form asks for a second document under the same name, as a site's form changes.
            if (run === 1)
              yield* s.page(() => {
                const label = document.createElement("label")
                label.htmlFor = "resume-2"
                label.textContent = "Resume"
                const input = document.createElement("input")
                input.type = "file"
                input.id = "resume-2"
                document.querySelector("form")!.append(label, input)
                return true
              })
            for (const instruction of ["Resume", "the email field"]) {
              const answer = yield* s.observe(instruction)
              assert.strictEqual(answer.state.level, 0, JSON.stringify(replays(s)))
              seen.push(answer.result as ReadonlyArray<{ method: string; description: string }>)
            }
          }).pipe(Effect.ensuring(s.close))
        }
        const [resume, email, resumeAgain, emailAgain] = seen
        assert.include(resume![0]!.description, 'file upload "Resume"')
        assert.strictEqual(resume![0]!.method, "setInputFiles")
        assert.strictEqual(email![0]!.description, 'textbox "Email" in iframe "Contact details"')
        const plain = (actions: ReadonlyArray<{ method: string; description: string }>) =>
          actions.map((a) => ({ method: a.method, description: a.description }))
        assert.strictEqual(
          resumeAgain!.filter((a) => a.method === "setInputFiles").length,
          2,
          `both file inputs the page shows now: ${JSON.stringify(plain(resumeAgain!))}`
        )
        assert.deepStrictEqual(plain(emailAgain!), plain(email!))
        assert.strictEqual((yield* store.stats()).entries, 0, "nothing kept")
      }),
    120_000
  )

  it.live(
    "an observe the model answered is kept and replayed as the model-free level lists it: a file input as an upload",
    () =>
      Effect.gen(function* () {
        const { model, store } = yield* setup
        const site = yield* SiteServer.start
        const url = site.url("/replay/documents.html")
        const seen: Array<ToolAnswer> = []
        const asked: Array<number> = []
        for (const _ of [0, 1]) {
          const s = yield* session({ model, store })
          yield* Effect.gen(function* () {
            yield* s.navigate(url)
            const before = model.counts().observe
            seen.push(yield* s.observe('the "Resume" upload'))
            asked.push(model.counts().observe - before)
            // Every control is read from the page as it is, whoever answers it: never kept.
            yield* s.observe("all controls")
          }).pipe(Effect.ensuring(s.close))
        }
        const [first, again] = seen
        assert.strictEqual(first!.state.level, 0)
        assert.strictEqual(again!.state.level, "replay")
        assert.deepStrictEqual(asked, [1, 0], "the replayed observe asked no model")
        assert.strictEqual(model.counts().observe, 3, "each observe of every control asked the model again")
        const actions = again!.result as ReadonlyArray<{ method: string; description: string }>
        assert.lengthOf(actions, (first!.result as ReadonlyArray<unknown>).length, JSON.stringify(actions))
        const upload = actions.find((a) => a.method === "setInputFiles")
        assert.include(upload?.description, 'file upload "Resume"', JSON.stringify(actions))
        assert.strictEqual((yield* store.stats()).entries, 1, "only the model's observe of the upload is kept")
      }),
    120_000
  )

  it.live(
    "an observe of every control lists the controls the page has now, not the ones it had when first asked",
    () =>
      Effect.gen(function* () {
        const { model, store } = yield* setup
        const site = yield* SiteServer.start
        const s = yield* session({ model, store, policy: modelFree })
        return yield* Effect.gen(function* () {
          yield* s.navigate(site.url("/replay/documents.html"))
          const described = (answer: ToolAnswer) =>
            (answer.result as ReadonlyArray<{ description: string }>).map((a) => a.description)
          const before = described(yield* s.observe("all controls"))
          assert.isFalse(
            before.some((d) => d.startsWith('button "Add a cover letter"')),
            JSON.stringify(before)
          )
          // The page shows one more control, as a form does after a choice.
          yield* s.page(() => {
            const more = document.createElement("button")
            more.type = "button"
            more.textContent = "Add a cover letter"
            document.querySelector("form")!.append(more)
            return true
          })
          const after = described(yield* s.observe("all controls"))
          assert.isTrue(
            after.some((d) => d.startsWith('button "Add a cover letter"')),
            `the button the page shows now is listed: ${JSON.stringify(after)}`
          )
          assert.strictEqual(after.length, before.length + 1)
        }).pipe(Effect.ensuring(s.close))
      }),
    120_000
  )

  it.live(
    "a secret is replayed as its reference and never kept",
    () =>
      Effect.gen(function* () {
        const { sites, model, file, store } = yield* setup
        Secrets.register({ REPLAY_TEST_EMAIL: "hidden-4711@example.com" })
        const instruction = 'fill "Email" with "{{secret:REPLAY_TEST_EMAIL}}"'
        for (let run = 0; run < 2; run++) {
          const s = yield* session({ model, store, policy: modelFree })
          yield* s.navigate(form(sites))
          const answer = yield* s.act(instruction)
          assert.strictEqual(answer.state.level, run === 0 ? 0 : "replay")
          assert.strictEqual(
            yield* s.page(() => (document.getElementById("email") as HTMLInputElement).value),
            "hidden-4711@example.com"
          )
          yield* s.close
        }
        const [entry] = yield* store.list()
        assert.deepStrictEqual(entry?.resolution.steps[0]?.arguments, ["{{value:1}}"])
        assert.notInclude(JSON.stringify(yield* store.list()), "hidden-4711")
        for (const suffix of ["", "-wal"]) {
          const bytes = (() => {
            try {
              return readFileSync(`${file}${suffix}`, "latin1")
            } catch {
              return ""
            }
          })()
          assert.notInclude(bytes, "hidden-4711", `the store file${suffix} holds no secret`)
        }
      }),
    120_000
  )

  it.live(
    "turned off, nothing is replayed or kept",
    () =>
      Effect.gen(function* () {
        const { sites, model, store } = yield* setup
        for (let run = 0; run < 2; run++) {
          const s = yield* session({ model, store, policy: modelFree, enabled: false })
          yield* s.navigate(form(sites))
          const answer = yield* s.act('fill "Email" with "ada@example.com"')
          assert.strictEqual(answer.state.level, 0)
          assert.lengthOf(replays(s), 0)
          yield* s.close
        }
        assert.strictEqual((yield* store.stats()).entries, 0)
      }),
    120_000
  )
})
