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

/** A store file of the test's own. */
const storeFile = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-replay-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => join(dir, "store.db")))

interface Session {
  readonly call: (tool: string, args: unknown) => Effect.Effect<ToolAnswer>
  readonly page: <A>(read: () => A) => Effect.Effect<A>
  readonly events: ReadonlyArray<Events.Stamped>
  readonly close: Effect.Effect<void>
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
    return {
      call: (tool: string, args: unknown) =>
        router.call(tool, args).pipe(Effect.provideService(Events.Events, sink)),
      page,
      events,
      close: Scope.close(scope, Exit.void)
    } satisfies Session
  })

const ok = (answer: ToolAnswer) => {
  assert.isTrue(answer.ok, JSON.stringify(answer.error))
  return answer
}

type Written = ReadonlyArray<{ readonly field: string; readonly value: string | boolean }>
const record = () => (window as unknown as { record: Written }).record
const replays = (s: Session) => s.events.filter((e) => e.event === "replay")

/** The form filled as an applicant would. */
const apply = (s: Session, url: string, who: { name: string; email: string; phone: string }) =>
  Effect.gen(function* () {
    ok(yield* s.call("browser.navigate", { url }))
    return [
      ok(yield* s.call("browser.act", { instruction: `fill "Full name" with "${who.name}"` })),
      ok(yield* s.call("browser.act", { instruction: `fill "Email" with "${who.email}"` })),
      ok(yield* s.call("browser.act", { instruction: `fill "Phone" with "${who.phone}"` })),
      ok(yield* s.call("browser.act", { instruction: 'select "Data" in "Team"' })),
      ok(yield* s.call("browser.act", { instruction: 'check "Willing to relocate"' }))
    ]
  })

describe("the replay level", () => {
  it.live(
    "a second session replays what the model resolved, with the next applicant's values and no model request",
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const model = yield* ScriptedModel.start
        const store = yield* Resolutions.make({ location: { kind: "embedded", file: yield* storeFile } })
        const url = site.url("/replay/apply.html?v=1")

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
          ["miss", "recorded", "miss", "recorded", "miss", "recorded", "miss", "recorded", "miss", "recorded"]
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
          written.filter((w) => w.field !== "name" || w.value === "Grace Hopper").map((w) => w.field).at(-1),
          "relocate"
        )
        const values = yield* second.page(() =>
          ["name", "email", "phone", "team"].map((id) => (document.getElementById(id) as HTMLInputElement).value)
        )
        assert.deepStrictEqual(values, ["Grace Hopper", "grace@example.com", "555 0199", "Data"])
        assert.isTrue(yield* second.page(() => (document.getElementById("relocate") as HTMLInputElement).checked))
        // Each field got only its own value: nothing was typed anywhere else.
        assert.deepStrictEqual(
          [...new Set(written.map((w) => w.field))].sort(),
          ["email", "name", "phone", "relocate", "team"]
        )
        const hit = replays(second).find((e) => e.event === "replay" && e.outcome === "hit")
        assert.strictEqual(hit?.event === "replay" ? hit.target : "", 'textbox "Full name" in group "Contact" in form "Apply"')
        const stats = yield* store.stats()
        assert.strictEqual(stats.hits, 5)
        assert.strictEqual(stats.entries, 5)
        yield* second.close
      }),
    120_000
  )
})
