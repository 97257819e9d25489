/**
 * The single entry point for `browser.*` tool calls: validates arguments against the tool schemas and runs the call
 * on the session's Sandbox with the Playwright engine.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { EngineError } from "../Engine/EngineError.ts"
import { InvalidInput } from "../Engine/EngineError.ts"
import * as PlaywrightEngine from "../Engine/PlaywrightEngine.ts"
import { type EngineSpec, Sandbox } from "../Sandbox/Sandbox.ts"
import { isToolName, type ToolName, tools } from "./Tools.ts"

const playwright: EngineSpec = { kind: "playwright", layer: PlaywrightEngine.layer }

export class Router extends Context.Service<
  Router,
  { readonly call: (tool: string, args: unknown) => Effect.Effect<unknown, EngineError> }
>()("switchyard/Router") {
  static readonly layer = Layer.effect(
    Router,
    Effect.gen(function* () {
      const sandbox = yield* Sandbox

      const handlers: {
        readonly [K in ToolName]: (args: (typeof tools)[K]["Type"]) => Effect.Effect<unknown, EngineError>
      } = {
        "browser.navigate": (a) => sandbox.use(playwright, (e) => e.navigate(a.url)),
        "browser.act": (a) => sandbox.use(playwright, (e) => e.act("action" in a ? a.action : a.instruction)),
        "browser.extract": (a) => sandbox.use(playwright, (e) => e.extract(a.instruction, a.schema)),
        "browser.observe": (a) => sandbox.use(playwright, (e) => e.observe(a.instruction)),
        "browser.screenshot": (a) =>
          sandbox.use(playwright, (e) =>
            e
              .screenshot({ fullPage: a.fullPage ?? false })
              .pipe(Effect.map((png) => ({ mimeType: "image/png", data: Buffer.from(png).toString("base64") })))
          ),
        "browser.status": () => sandbox.status,
        "browser.close": () => sandbox.close.pipe(Effect.as({ status: "ok" }))
      }

      return Router.of({
        call: (tool, args) =>
          Effect.gen(function* () {
            if (!isToolName(tool)) {
              return yield* new InvalidInput({
                field: "tool",
                message: `unknown tool "${tool}"; tools: ${Object.keys(tools).join(", ")}`
              })
            }
            const decoded = yield* Schema.decodeUnknownEffect(tools[tool] as Schema.Codec<unknown>)(args).pipe(
              Effect.mapError(
                (e) =>
                  new InvalidInput({
                    field: "arguments",
                    action: tool,
                    message: `bad arguments for ${tool}: ${e.message}`
                  })
              )
            )
            return yield* handlers[tool](decoded as never)
          })
      })
    })
  )
}
