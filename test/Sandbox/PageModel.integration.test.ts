/**
 * The session's page model across engines, on one real Chromium: a tab the page opens is where the next call works,
 * whichever engine serves it (playwright, then Stagehand through a scripted model), after a switch of tab and of
 * engine; a dialog a Stagehand act opens ends the act at once instead of hanging it; the dialogs mode answers them;
 * a file chooser a Stagehand click opens gets the files the call named.
 */
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { Engine } from "../../src/Engine/Engine.ts"
import type { EngineSpec } from "../../src/Engine/EngineSpec.ts"
import { said } from "../../src/Engine/Instruction.ts"
import * as PlaywrightEngine from "../../src/Engine/PlaywrightEngine.ts"
import * as StagehandEngine from "../../src/Engine/StagehandEngine.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { Sandbox, type SandboxOptions } from "../../src/Sandbox/Sandbox.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import { pattern, recordScript } from "../Web/Pattern.ts"
import * as PatternServer from "../Web/Server.ts"

const playwright: EngineSpec = {
  id: { kind: "playwright" },
  capabilities: PlaywrightEngine.capabilities,
  layer: PlaywrightEngine.layer()
}

const stagehand = (llm: LlmServer.LlmServer): EngineSpec => ({
  id: { kind: "stagehand", mode: "dom" },
  capabilities: StagehandEngine.capabilities.dom,
  layer: StagehandEngine.layer({
    mode: "dom",
    domSettleTimeoutMs: 100,
    model: {
      model: "openai/gpt-4.1-mini",
      apiKeys: { openai: Redacted.make("sk-test") },
      baseURLs: { openai: `${llm.origin}/v1` }
    }
  })
})

const site = pattern({
  name: "site",
  class: "tabs",
  pages: {
    "/job.html": `<!doctype html><title>Backend engineer — JobBoard</title>
<h1>Backend engineer</h1><a href="apply.html" target="_blank">Apply on company site</a>`,
    "/apply.html": `<!doctype html><title>Acme — Apply</title>${recordScript}
<button onclick="record({ submitted: 'apply' })">Submit application</button>`,
    "/confirm.html": `<!doctype html><title>Confirm</title>${recordScript}
<button onclick="record({ confirmed: confirm('Submit your application?') })">Send application</button>`,
    "/profile.html": `<!doctype html><title>Edit profile</title>
<label>Headline <input oninput="window.dirty = true"></label>
<script>addEventListener("beforeunload", (e) => { if (window.dirty) { e.preventDefault(); e.returnValue = "" } })</script>`,
    "/upload.html": `<!doctype html><title>Upload</title>${recordScript}
<input type="file" id="cv" hidden onchange="record({ files: [...this.files].map((f) => f.name) })">
<button onclick="document.getElementById('cv').click()">Upload your CV</button>`
  },
  run: async () => undefined
})

const serve = Effect.acquireRelease(
  Effect.promise(() => PatternServer.start([site])),
  (server) => Effect.promise(() => server.close())
)

/** Answers a Stagehand act request by clicking the button the instruction names, from the prompt's tree. */
const clickButtons: LlmServer.Script = (request) => {
  const text = LlmServer.promptText(request)
  const wanted = /given the following action: .*?"(.+?)"/s.exec(text)?.[1]
  if (wanted === undefined) return undefined
  const id = new RegExp(`\\[(\\d+-\\d+)\\] button: ${wanted}`, "m").exec(text)?.[1]
  const action = id === undefined ? null : { elementId: id, description: wanted, method: "click", arguments: [] }
  return { json: LlmServer.chatCompletion(JSON.stringify({ action, twoStep: false })) }
}

const sandbox = (options: SandboxOptions = {}) =>
  Layer.build(Sandbox.layer(options).pipe(Layer.provide(LocalChromium.layer()))).pipe(
    Effect.map((context) => Context.get(context, Sandbox))
  )

const on = <A>(sb: Sandbox["Service"], spec: EngineSpec, f: (engine: Engine["Service"]) => Effect.Effect<A, unknown>) =>
  sb.use(spec, f)

describe("the session's page model across engines", () => {
  it.live(
    "a tab the page opened is driven by playwright and by Stagehand, after a tab switch and an engine switch",
    () =>
      Effect.gen(function* () {
        const server = yield* serve
        const llm = yield* LlmServer.start(clickButtons)
        const sb = yield* sandbox()
        yield* on(sb, playwright, (e) => e.navigate(server.url("site", "/job.html")))
        yield* on(sb, playwright, (e) => e.act(said('click "Apply on company site"')))
        const events = yield* sb.events
        assert.isTrue(events.some((e) => e.event === "tab_opened"))
        const opened = yield* sb.page
        assert.deepStrictEqual(
          opened.tabs.map((t) => [t.title, t.active]),
          [
            ["Backend engineer — JobBoard", false],
            ["Acme — Apply", true]
          ]
        )
        // Stagehand connects to the active tab: its model sees the apply page's button and clicks it.
        yield* on(sb, stagehand(llm), (e) => e.act(said('click the "Submit application" button')))
        assert.deepStrictEqual(server.recorded("site"), [{ submitted: "apply" }])
        // Back to the job board by switching tabs: Stagehand, then playwright, read that page.
        yield* sb.switchTab(0)
        const onStagehand = yield* on(sb, stagehand(llm), (e) => e.pageState())
        assert.strictEqual(onStagehand.url, server.url("site", "/job.html"))
        const onPlaywright = yield* on(sb, playwright, (e) => e.pageState())
        assert.strictEqual(onPlaywright.title, "Backend engineer — JobBoard")
        // Closing the active tab falls back to the one active before it.
        const left = yield* sb.closeTab()
        assert.deepStrictEqual(
          left.map((t) => [t.title, t.active]),
          [["Acme — Apply", true]]
        )
        const last = yield* on(sb, stagehand(llm), (e) => e.pageState())
        assert.strictEqual(last.url, server.url("site", "/apply.html"))
      }),
    60_000
  )

  it.live(
    "a confirm opened by a Stagehand click ends the act with the dialog, and the agent's answer goes to the page",
    () =>
      Effect.gen(function* () {
        const server = yield* serve
        const llm = yield* LlmServer.start(clickButtons)
        const sb = yield* sandbox()
        yield* on(sb, stagehand(llm), (e) => e.navigate(server.url("site", "/confirm.html")))
        // Stagehand waits behind a dialog forever: the call must end on its own, with the dialog.
        const cut = yield* on(sb, stagehand(llm), (e) => e.act(said('click the "Send application" button'))).pipe(
          Effect.flip,
          Effect.timeout(20_000)
        )
        assert.strictEqual((cut as { type?: string }).type, "dialog_open")
        const open = yield* sb.openDialog
        assert.strictEqual(Option.getOrThrow(open).message, "Submit your application?")
        // Any other call is refused at once while it is open.
        const refused = yield* on(sb, playwright, (e) => e.pageState()).pipe(Effect.flip)
        assert.strictEqual((refused as { type?: string }).type, "dialog_open")
        yield* sb.answerDialog({ accept: true })
        assert.deepStrictEqual(server.recorded("site"), [{ confirmed: true }])
        assert.isTrue(Option.isNone(yield* sb.openDialog))
        const after = yield* on(sb, stagehand(llm), (e) => e.pageState())
        assert.strictEqual(after.title, "Confirm")
      }),
    60_000
  )

  it.live("with dialogs set to dismiss, a confirm is answered at once and the answer reports it", () =>
    Effect.gen(function* () {
      const server = yield* serve
      const sb = yield* sandbox({ dialogs: { mode: "dismiss", beforeunload: "accept" } })
      yield* on(sb, playwright, (e) => e.navigate(server.url("site", "/confirm.html")))
      const clicked = yield* on(sb, playwright, (e) => e.act(said('click "Send application"')))
      assert.isTrue(clicked.success)
      assert.deepStrictEqual(server.recorded("site"), [{ confirmed: false }])
      const events = yield* sb.events
      assert.isTrue(events.some((e) => e.event === "dialog_answered" && !e.accepted && e.by === "policy"))
    })
  )

  it.live("a file chooser a Stagehand click opens is answered with the files the call named", () =>
    Effect.gen(function* () {
      const server = yield* serve
      const llm = yield* LlmServer.start(clickButtons)
      const sb = yield* sandbox()
      yield* on(sb, stagehand(llm), (e) => e.navigate(server.url("site", "/upload.html")))
      const resume = join(import.meta.dirname, "..", "fixtures", "uploads", "resume.pdf")
      const [, chosen] = yield* sb.chooseFiles(
        [resume],
        on(sb, stagehand(llm), (e) => e.act(said('click the "Upload your CV" button')))
      )
      assert.strictEqual(chosen, 1)
      yield* Effect.sleep(200)
      assert.deepStrictEqual(server.recorded("site"), [{ files: ["resume.pdf"] }])
    })
  )

  it.live("with beforeunload left to the agent, leaving a dirty form waits for the agent's answer", () =>
    Effect.gen(function* () {
      const server = yield* serve
      const sb = yield* sandbox({ dialogs: { mode: "agent", beforeunload: "agent" } })
      yield* on(sb, playwright, (e) => e.navigate(server.url("site", "/profile.html")))
      yield* on(sb, playwright, (e) => e.act(said('fill "Headline" with "Engineer"')))
      const left = yield* on(sb, playwright, (e) => e.navigate(server.url("site", "/job.html"))).pipe(
        Effect.flip,
        Effect.timeout(20_000)
      )
      assert.strictEqual((left as { type?: string }).type, "dialog_open")
      assert.strictEqual(Option.getOrThrow(yield* sb.openDialog).type, "beforeunload")
      yield* sb.answerDialog({ accept: false })
      const stayed = yield* on(sb, playwright, (e) => e.pageState())
      assert.strictEqual(stayed.url, server.url("site", "/profile.html"))
    })
  )
})
