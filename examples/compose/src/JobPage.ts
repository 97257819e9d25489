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
import type { ArgsOf } from "switchyard/Tools"

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
      /**
       * Every Switchyard answer is ok with a result, or carries a typed error (`type`, `message`, `retryable`). A tool
       * named by a literal takes its own argument type, and its result comes with the tool's result type.
       */
      const call = <Name extends string>(tool: Name, args: ArgsOf<Name>) =>
        router
          .call(tool, args)
          .pipe(
            Effect.flatMap((answer) =>
              answer.ok && answer.result !== undefined
                ? Effect.succeed(answer.result)
                : Effect.fail(
                    new JobPageError({ type: answer.error?.type ?? "unknown", message: answer.error?.message ?? "" })
                  )
            )
          )
      /** An extract's result has no one shape (it is what was asked for): read through the application's Schema. */
      const decoded =
        <S extends Schema.Constraint>(schema: S) =>
        (result: unknown) =>
          Schema.decodeUnknownEffect(schema)(result).pipe(
            Effect.mapError((error) => new JobPageError({ type: "unexpected_result", message: error.message }))
          )
      return JobPage.of({
        read: (url) =>
          Effect.gen(function* () {
            // `opened` is typed `{url, title, status}`: the navigate tool's result.
            const opened = yield* call("browser.navigate", { url })
            if (opened.status !== null && opened.status >= 400) {
              return yield* new JobPageError({ type: "http_error", message: `${opened.url} answered ${opened.status}` })
            }
            const facts = yield* call("browser.extract", {}).pipe(Effect.flatMap(decoded(FormFields)))
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
