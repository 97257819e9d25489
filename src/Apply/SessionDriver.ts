/**
 * How a workflow step drives its browser session: through the service's own `Sessions` and tools (the same Router,
 * cascade and engines an agent gets), opening the session when this process has none — restored from the state
 * saved in the store when an earlier process had it — and saving that state after every call that may change it.
 * Every tool call is an `engine_operation` event. The résumé upload is the one thing done beside the tools, over a
 * connection of its own (`setInputFiles`), because no tool sets a file input.
 */

import { Effect, Option } from "effect"
import { chromium } from "playwright-core"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { TaskEvents } from "../Cluster/Events.ts"
import * as SavedState from "../Cluster/SavedState.ts"
import { SavedStates } from "../Cluster/SavedState.ts"
import { StepFailed } from "../Errors/Service.ts"
import { Sessions } from "../Server/Sessions.ts"

/** Tools after which the page's state may differ. */
const changing = new Set(["browser.navigate", "browser.act"])

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
  readonly fields: ReadonlyArray<Field>
}

export interface Driver {
  readonly session: string
  /** Runs a tool on the session; a failed answer fails the step (retryable as the error says). */
  readonly call: (tool: string, args: Record<string, unknown>) => Effect.Effect<ToolAnswer, StepFailed>
  /** The page's facts (URL, title, text, form fields), read model-free. */
  readonly facts: Effect.Effect<Facts, StepFailed>
  /** Sets a file input's file. */
  readonly upload: (selector: string, file: string) => Effect.Effect<void, StepFailed>
  /** Opens the session if this process has none for it, restored from its saved state when there is one. */
  readonly open: Effect.Effect<void, StepFailed>
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
  const events = yield* TaskEvents
  const saved = yield* SavedStates
  const { run, session, step } = options

  const fail = (message: string, retryable = false) => new StepFailed({ step, retryable, message })

  const raw = (tool: string, args: Record<string, unknown>) =>
    Effect.gen(function* () {
      const started = Date.now()
      const answer = yield* sessions.call(session, tool, args, { stepId: step })
      yield* events.record(run, "engine_operation", {
        step,
        operation: tool,
        engine: answer.state.engine,
        level: answer.state.level,
        platform: options.platform ?? null,
        durationMs: Date.now() - started,
        success: answer.ok,
        ...(answer.ok ? {} : { error: answer.error?.type })
      })
      if (!answer.ok) {
        return yield* fail(
          `${tool} failed: ${answer.error?.type ?? "error"}: ${answer.error?.message ?? ""}`,
          answer.error?.retryable ?? false
        )
      }
      return answer
    })

  const wsEndpoint = Effect.gen(function* () {
    const status = yield* sessions.status(session)
    if (status.wsEndpoint === null) return yield* fail(`session ${session} has no browser`, true)
    return status.wsEndpoint
  })

  const save = (url: string | null) =>
    Effect.gen(function* () {
      if (url === null || !/^https?:/.test(url)) return
      const page = yield* SavedState.capture(yield* wsEndpoint, url)
      yield* saved.save(session, page)
      yield* Effect.logDebug(`saved the state of ${session}: ${SavedState.summary(page)}`)
    })

  /** This process has no browser for the session: a new one, at the saved page with its cookies and storage. */
  const open = Effect.gen(function* () {
    if (sessions.isOpen(session)) return
    const before = yield* saved.load(session)
    if (Option.isNone(before)) {
      if (options.startUrl !== undefined) yield* raw("browser.navigate", { url: options.startUrl })
      return
    }
    const page = before.value
    const started = Date.now()
    // The origin first, so cookies and storage land where the page expects them; then the page itself, with them.
    yield* raw("browser.navigate", { url: page.url })
    yield* SavedState.restore(yield* wsEndpoint, page)
    yield* raw("browser.navigate", { url: page.url })
    yield* events.record(run, "session_restored", {
      step,
      session,
      url: page.url,
      cookies: page.cookies.length,
      durationMs: Date.now() - started
    })
    yield* Effect.logInfo(`restored ${session} at ${page.url}: ${SavedState.summary(page)}`)
  })

  const call = (tool: string, args: Record<string, unknown>) =>
    Effect.gen(function* () {
      yield* open
      const answer = yield* raw(tool, args)
      if (changing.has(tool)) yield* save(answer.state.url)
      return answer
    })

  const facts = call("browser.extract", { instruction: "the page's form" }).pipe(
    Effect.map((answer) => answer.result as Facts)
  )

  const upload = (selector: string, file: string) =>
    Effect.gen(function* () {
      yield* open
      const started = Date.now()
      const ws = yield* wsEndpoint
      const status = yield* sessions.status(session)
      yield* Effect.tryPromise({
        try: async () => {
          const browser = await chromium.connectOverCDP(ws, { timeout: 10_000 })
          try {
            const page = browser
              .contexts()[0]
              ?.pages()
              .find((p) => p.url() !== "about:blank")
            if (page === undefined) throw new Error("the session has no page")
            await page.locator(selector).setInputFiles(file, { timeout: 10_000 })
          } finally {
            await browser.close()
          }
        },
        catch: (cause) => fail(`upload to ${selector} failed: ${String(cause).split("\n")[0]}`, true)
      })
      yield* events.record(run, "engine_operation", {
        step,
        operation: "upload",
        engine: status.engine,
        platform: options.platform ?? null,
        durationMs: Date.now() - started,
        success: true
      })
    })

  const close = sessions.close(session).pipe(Effect.andThen(saved.drop(session)))

  return { session, call, facts, upload, open, close } satisfies Driver
})
