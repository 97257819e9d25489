/**
 * How a workflow step drives its browser session: through the service's `Sessions` and tools (the same Router,
 * cascade and engines an agent gets; in a fleet, routed to the runner holding the browser), starting the session at
 * the job's page the first time. Every engine attempt of its calls, the résumé's `browser.upload` included, is an
 * `engine_operation` event under the run, with the step and the platform.
 */
import { Effect, Option } from "effect"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { SavedStates } from "../Cluster/SavedState.ts"
import { StepFailed } from "../Errors/Service.ts"
import { Sessions } from "../Server/Sessions.ts"

export interface Field {
  readonly label: string
  readonly name: string
  readonly id?: string
  readonly type: string
  readonly value: string
}

export interface Facts {
  readonly url: string
  readonly title: string
  readonly text: string
  readonly headings: ReadonlyArray<string>
  readonly links: ReadonlyArray<{ readonly text: string; readonly href: string }>
  readonly fields: ReadonlyArray<Field>
}

export interface Driver {
  readonly session: string
  /** Runs a tool on the session; a failed answer fails the step (retryable as the error says). */
  readonly call: (tool: string, args: Record<string, unknown>) => Effect.Effect<ToolAnswer, StepFailed>
  /** Runs a tool on the session and answers whatever it answered, a failure too (the step decides). */
  readonly answer: (tool: string, args: Record<string, unknown>) => Effect.Effect<ToolAnswer, StepFailed>
  /** Opens `url` in the session (a new one, or one another process had, is started there directly). */
  readonly navigate: (url: string) => Effect.Effect<ToolAnswer, StepFailed>
  /** The page's facts (URL, title, text, form fields), read model-free. */
  readonly facts: Effect.Effect<Facts, StepFailed>
  /** Puts a file into the file upload named `target` (its label). */
  readonly upload: (target: string, file: string) => Effect.Effect<void, StepFailed>
  /** Closes the session's browser and forgets its saved state. */
  readonly close: Effect.Effect<void>
}

export interface DriverOptions {
  readonly run: string
  readonly session: string
  readonly step: string
  /** Where a session nobody has opened yet starts (none: such a session is left to open on its own). */
  readonly startUrl?: string
  readonly platform?: string | undefined
}

export const make = Effect.fnUntraced(function* (options: DriverOptions) {
  const sessions = yield* Sessions
  const saved = yield* SavedStates
  const { run, session, step } = options

  const fail = (message: string, retryable = false) => new StepFailed({ step, retryable, message })

  const attempt = (tool: string, args: Record<string, unknown>) =>
    Effect.gen(function* () {
      // The run's id as the trace and the step's platform: its engine events are stored under the run, each engine
      // attempt an `engine_operation` with its platform.
      return yield* sessions.call(session, tool, args, {
        traceId: run,
        stepId: step,
        ...(options.platform === undefined ? {} : { platform: options.platform })
      })
    })

  const raw = (tool: string, args: Record<string, unknown>) =>
    Effect.gen(function* () {
      const answer = yield* attempt(tool, args)
      if (!answer.ok) {
        // A page the network did not deliver fails the step at once, with the cause: retrying it here would only
        // wait; the run is retried on purpose (`apply --retry`) once the site answers.
        const unreached = answer.error?.type === "navigation_failed" && answer.error.reason !== undefined
        return yield* fail(
          `${tool} failed: ${answer.error?.type ?? "error"}: ${answer.error?.message ?? ""}`,
          unreached ? false : (answer.error?.retryable ?? false)
        )
      }
      return answer
    })

  const hasSaved = saved.load(session).pipe(Effect.map(Option.isSome))

  // A session nobody opened yet starts at the job; one another process had is restored by the host.
  const opened = Effect.gen(function* () {
    if (!sessions.isOpen(session) && options.startUrl !== undefined && !(yield* hasSaved)) {
      yield* raw("browser.navigate", { url: options.startUrl })
    }
  })

  const call = (tool: string, args: Record<string, unknown>) => opened.pipe(Effect.andThen(raw(tool, args)))
  const answer = (tool: string, args: Record<string, unknown>) => opened.pipe(Effect.andThen(attempt(tool, args)))

  const facts = call("browser.extract", {}).pipe(Effect.map((answer) => answer.result as Facts))

  // The résumé through the service's own upload tool: confined to its upload folders like any agent's upload. A file
  // outside them, or missing, is no page a person could fix: the step fails naming what must change.
  const upload = (target: string, file: string) =>
    answer("browser.upload", { files: [file], target }).pipe(
      Effect.flatMap((answered) => {
        if (answered.ok) return Effect.void
        const message = answered.error?.message ?? ""
        if (/outside the folders uploads may come from/.test(message)) {
          return Effect.fail(
            new StepFailed({
              step,
              retryable: false,
              setting: "SWITCHYARD_UPLOAD_ROOTS",
              message: `the résumé ${file} is outside the folders this runner may upload from: add its folder to SWITCHYARD_UPLOAD_ROOTS (uploads.roots; \`cluster dev --upload-root\`) where the browser runs, then \`switchyard apply --retry\` (${message})`
            })
          )
        }
        if (/no such file/.test(message)) {
          return Effect.fail(
            new StepFailed({
              step,
              retryable: false,
              setting: "resume",
              message: `the résumé ${file} is not there where the browser runs: the profile's "resume" must name a file the runners can read (${message})`
            })
          )
        }
        return Effect.fail(
          fail(
            `browser.upload failed: ${answered.error?.type ?? "error"}: ${message}`,
            answered.error?.retryable ?? false
          )
        )
      })
    )

  const close = sessions.close(session)

  const navigate = (url: string) => raw("browser.navigate", { url })

  return { session, call, answer, navigate, facts, upload, close } satisfies Driver
})
