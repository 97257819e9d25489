/**
 * An application's own service built on Switchyard: `JobPage` reads a job page's title and form fields, each call typed
 * by its tool's record. Switchyard comes in as Layers — one browser session with the model-free Playwright engine.
 */
import { Context, Data, Effect, Layer, Schema } from "effect"
import { Cascade } from "switchyard/Cascade"
import { Engines } from "switchyard/Engines"
import * as LocalChromium from "switchyard/LocalChromium"
import { Router } from "switchyard/Router"
import { Sandbox } from "switchyard/Sandbox"
import { type ToolName, tools } from "switchyard/Tools"

/** A Switchyard tool's record, by name: its argument and result Schemas. */
type ToolOf<N extends ToolName> = Extract<(typeof tools)[number], { readonly name: N }>
const toolOf = <N extends ToolName>(name: N) => tools.find((tool) => tool.name === name) as ToolOf<N>

/** What this application reads from a page: the labels of its form fields (`browser.extract`'s page facts). */
const FormFields = Schema.Struct({ fields: Schema.Array(Schema.Struct({ label: Schema.String })) })

export class JobPageError extends Data.TaggedError("JobPageError")<{
  readonly type: string
  readonly message: string
}> {}

/** A job page as the application sees it: its title and the labels of its form's fields. */
export interface JobForm {
  readonly title: string
  readonly fields: ReadonlyArray<string>
}

export class JobPage extends Context.Service<
  JobPage,
  { readonly read: (url: string) => Effect.Effect<JobForm, JobPageError> }
>()("example/JobPage") {
  static readonly layer = Layer.effect(
    JobPage,
    Effect.gen(function* () {
      const router = yield* Router
      /** Every Switchyard answer is ok with a result, or carries a typed error (`type`, `message`, `retryable`). */
      const answer = (tool: ToolName, args: unknown) =>
        router
          .call(tool, args)
          .pipe(
            Effect.flatMap((answer) =>
              answer.ok
                ? Effect.succeed(answer.result)
                : Effect.fail(
                    new JobPageError({ type: answer.error?.type ?? "unknown", message: answer.error?.message ?? "" })
                  )
            )
          )
      /** A result read through a Schema: the tool's own, or the application's where the tool's is open-ended. */
      const decoded =
        <S extends Schema.Constraint>(schema: S) =>
        (result: unknown) =>
          Schema.decodeUnknownEffect(schema)(result).pipe(
            Effect.mapError((error) => new JobPageError({ type: "unexpected_result", message: error.message }))
          )
      /** A call typed by its tool's record: the arguments it takes, the result it returns. */
      const call = <T extends (typeof tools)[number]>(tool: T, args: T["args"]["Type"]) => {
        // Named as T's own, not the union of every tool's result a plain `tool.result` would be read as.
        const result: T["result"] = tool.result
        return answer(tool.name, args).pipe(Effect.flatMap(decoded(result)))
      }
      return JobPage.of({
        read: (url) =>
          Effect.gen(function* () {
            const opened = yield* call(toolOf("browser.navigate"), { url })
            // An extract's result has no one shape (it is what was asked for): read it with this application's own.
            const facts = yield* call(toolOf("browser.extract"), {}).pipe(Effect.flatMap(decoded(FormFields)))
            return { title: opened.title, fields: facts.fields.map((f) => f.label) }
          })
      })
    })
  )
}

/** One Switchyard session that needs no model: a headless local Chromium and the Playwright engine only. */
export const session = (options: { readonly executablePath?: string } = {}) =>
  Router.layer({
    policy: {
      default: {
        totalTimeoutMs: 30_000,
        levels: [{ engine: "playwright", retryCount: 1, timeoutPerAttemptMs: 15_000 }]
      }
    }
  }).pipe(
    Layer.provideMerge(Cascade.layer),
    Layer.provideMerge(Sandbox.layer({ idleTimeoutMs: null })),
    Layer.provide(Engines.layer()),
    Layer.provide(LocalChromium.layer({ headless: true, ...options }))
  )

/** The application: its own service over Switchyard's. */
export const layer = (options: { readonly executablePath?: string } = {}) =>
  JobPage.layer.pipe(Layer.provide(session(options)))
