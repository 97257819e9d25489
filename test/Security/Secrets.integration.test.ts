/**
 * Secrets by reference on a real session stack (real Chromium, a scripted model provider on loopback, the attempt
 * log on disk): the agent names `{{secret:CODE}}`, the model-free level types the value, and the value appears
 * nowhere — not in answers (even from a page that echoes it), the attempt log, snapshots, screenshots (a field that
 * received a secret shows dots), or the requests the model provider received.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { Router, type ToolAnswer } from "../../src/Cascade/Router.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import * as Config from "../../src/Server/Config.ts"
import { loadSecrets } from "../../src/Server/Service.ts"
import * as SessionStack from "../../src/Server/SessionStack.ts"
import * as LlmServer from "../fixtures/LlmServer.ts"
import { everyFile, pngPixels, startSites } from "./Support.ts"

/** Two secrets of one length and one plain value of that length: masked, the first two look the same. */
const token = () => `Zq${randomBytes(8).toString("hex")}`
const code = token()
const other = token()
const plain = token()

/** A sign-in form (its field lets go of the focus once typed into: no caret or focus ring, so two screenshots
 * compare), and a form that echoes what is typed. */
const form = (value = "") => `<title>sign in</title><style>input { caret-color: transparent }</style><h1>Sign in</h1>
    <form method=post action="/form"><label>Code <input name=code value="${value}" oninput="this.blur()"></label><button>Send</button></form>`
const pages = () => ({
  "/form": form(),
  /** The same form with a plain value of the secrets' length already in its field. */
  "/prefilled": form(plain),
  "/echo": `<title>preview</title><label>Code <input name=code
      oninput="out.textContent = 'Your code is ' + this.value; fetch('/typed', { method: 'POST', body: this.value })"></label>
    <p id=out></p>`,
  "/typed": (body: string) => {
    typed.push(body)
    return ""
  }
})
/** What the page saw typed, as it reported it to its server. */
const typed: Array<string> = []

/** The model answers extractions with the page text it was sent, so whatever it saw comes back in the answer. */
const script: LlmServer.Script = (request) => {
  const schema = LlmServer.requestedSchema(request)
  const properties = Object.keys(schema?.properties ?? {})
  if (properties.includes("progress"))
    return { json: LlmServer.chatCompletion(JSON.stringify({ progress: "done", completed: true })) }
  if (properties.length > 0) {
    const seen = LlmServer.promptText(request).slice(-4_000)
    return {
      json: LlmServer.chatCompletion(JSON.stringify(Object.fromEntries(properties.map((p) => [p, seen]))))
    }
  }
  return undefined
}

describe("secrets by reference", () => {
  it.live(
    "a secret typed by reference appears in no answer, log, snapshot, screenshot or model request",
    () =>
      Effect.gen(function* () {
        const config = yield* Config.resolve({ env: {} })
        const loaded = yield* loadSecrets(config, { SWITCHYARD_SECRET_CODE: code, SWITCHYARD_SECRET_Other: other })
        assert.deepStrictEqual([...loaded].sort(), ["CODE", "OTHER"])

        const sites = yield* Effect.acquireRelease(
          Effect.promise(() => startSites(pages)),
          (s) => Effect.promise(s.close)
        )
        const llm = yield* LlmServer.start(script)
        const root = mkdtempSync(join(tmpdir(), "switchyard-secret-logs-"))
        const answers: Array<ToolAnswer> = []

        yield* Effect.gen(function* () {
          // The attempt log's sinks are read by each call from its context, as the service provides them.
          const context = yield* Layer.build(
            SessionStack.layer({
              browser: LocalChromium.layer(),
              sandbox: { idleTimeoutMs: null },
              engines: {
                model: {
                  model: "openai/gpt-4.1-mini",
                  apiKeys: { openai: Redacted.make("sk-test") },
                  baseURLs: { openai: `${llm.origin}/v1` }
                },
                stagehand: { domSettleTimeoutMs: 100 }
              }
            }).pipe(Layer.provideMerge(SessionStack.attemptLog(root)))
          )
          const router = Context.get(context, Router)
          const call = (tool: string, args: Record<string, unknown>) =>
            router.call(tool, args).pipe(
              Effect.provideContext(context),
              Effect.tap((answer) => Effect.sync(() => answers.push(answer)))
            )
          const ok = (tool: string, args: Record<string, unknown>) =>
            call(tool, args).pipe(
              Effect.tap((answer) => Effect.sync(() => assert.isTrue(answer.ok, JSON.stringify(answer.error))))
            )
          const screenshot = ok("browser.screenshot", {}).pipe(
            Effect.map((shot) => (shot.result as { data: string }).data)
          )
          /** The form page with `value` typed into its field, as a PNG. */
          const filled = (value: string) =>
            Effect.gen(function* () {
              yield* ok("browser.navigate", { url: sites.allowedUrl("/form") })
              yield* ok("browser.act", { instruction: `fill "Code" with "${value}"` })
              return yield* screenshot
            })

          const first = yield* filled("{{secret:CODE}}")
          const second = yield* filled("{{secret:OTHER}}")
          yield* ok("browser.navigate", { url: sites.allowedUrl("/prefilled") })
          const visible = yield* screenshot
          // Two different secrets of one length look the same (dots); a plain value of that length does not.
          const pixels = (png: string) => pngPixels(png).data
          assert.isTrue(pixels(first).equals(pixels(second)), "two masked secrets of one length differ on screen")
          assert.isFalse(pixels(first).equals(pixels(visible)), "a plain value looks like a masked one")

          // The page echoes the value; the agent reads the page through the model and gets the reference back.
          yield* ok("browser.navigate", { url: sites.allowedUrl("/echo") })
          yield* ok("browser.act", { instruction: 'fill "Code" with "{{secret:CODE}}"' })
          const echoed = yield* ok("browser.extract", { instruction: "the whole page text" })
          // The page got the value itself, typed by the engine.
          assert.include(typed, code)
          assert.include(JSON.stringify(echoed.result), "Your code is {{secret:CODE}}")

          // A reference to a secret nobody configured is refused before anything is typed.
          const unknown = yield* call("browser.act", { instruction: 'fill "Code" with "{{secret:NOPE}}"' })
          assert.strictEqual(unknown.error?.type, "invalid_input")
          assert.include(unknown.error?.message, "SWITCHYARD_SECRET_NOPE")
        }).pipe(Effect.scoped)

        const leaks = (where: string, text: string) => {
          for (const value of [code, other]) assert.notInclude(text, value, `${where} carries a secret`)
        }
        leaks("an answer", JSON.stringify(answers))
        // The model was asked (the extraction), and never saw the value.
        assert.isAbove(llm.requests.length, 0)
        leaks("a model request", JSON.stringify(llm.requests.map((r) => r.rawBody)))
        const files = everyFile(root)
        assert.isTrue(files.some((f) => f.path.endsWith("attempt.jsonl")))
        for (const file of files) leaks(file.path, file.data.toString("latin1"))
      }).pipe(Effect.scoped),
    120_000
  )
})
