/**
 * The process that holds a session's browser: it opens the session when it has none for it — restored from the
 * state saved in the store when another process had it (that process or its machine died) — and saves that state
 * after every call that may have changed it. Wrapped around the local `Sessions`, so every surface, the workflow's
 * steps and the fleet's entity get the same behaviour.
 */

import { Clock, Context, Effect, Layer, Option } from "effect"
import type { CallMeta, ToolAnswer } from "../Cascade/Router.ts"
import * as Tools from "../Cascade/Tools.ts"
import { SessionClosed, StepFailed } from "../Errors/Service.ts"
import { defaultSession, refuse, Sessions } from "../Server/Sessions.ts"
import { TaskEvents } from "./Events.ts"
import * as SavedState from "./SavedState.ts"
import { SavedStates } from "./SavedState.ts"

export interface Host {
  readonly call: (session: string, tool: string, args: unknown, meta?: CallMeta) => Effect.Effect<ToolAnswer>
}

/** The host's behaviour over `local`, the sessions whose browsers run in this process. */
export const make = Effect.fnUntraced(function* (local: Sessions["Service"]) {
  const saved = yield* SavedStates
  const events = yield* TaskEvents

  const wsEndpoint = (session: string) =>
    local
      .status(session)
      .pipe(
        Effect.flatMap((status) =>
          status.wsEndpoint === null
            ? Effect.fail(
                new StepFailed({ step: "session", retryable: true, message: `session ${session} has no browser` })
              )
            : Effect.succeed(status.wsEndpoint)
        )
      )

  /**
   * This process has no browser for the session: when another had, a new one at its page, cookies and storage. A
   * restore that fails closes the new browser (its state must not be saved over the good one) and says why.
   */
  const restore = (session: string) =>
    Effect.gen(function* () {
      const before = yield* saved.load(session)
      if (Option.isNone(before)) return
      const page = before.value
      const started = yield* Clock.currentTimeMillis
      // Cookies and storage are in place before the page's first request.
      yield* local.restore(session, page)
      yield* events.record(session, "session_restored", {
        session,
        url: page.url,
        cookies: page.cookies.length,
        durationMs: (yield* Clock.currentTimeMillis) - started
      })
      yield* Effect.logInfo(`restored ${session} at ${page.url}: ${SavedState.summary(page)}`)
    }).pipe(
      Effect.tapError((error) =>
        Effect.logWarning(`session ${session} could not be restored: ${error.message}`).pipe(
          Effect.andThen(local.close(session))
        )
      ),
      Effect.mapError(
        (error) =>
          new SessionClosed({
            message: `session "${session}" could not be restored from its saved state (${error.message}); call again`
          })
      )
    )

  const save = (session: string, url: string | null) =>
    Effect.gen(function* () {
      if (url === null || !/^https?:/.test(url)) return
      const page = yield* SavedState.capture(yield* wsEndpoint(session), url)
      yield* saved.save(session, page)
      yield* Effect.logDebug(`saved the state of ${session}: ${SavedState.summary(page)}`)
    }).pipe(Effect.catch((error) => Effect.logWarning(`the state of ${session} was not saved: ${error.message}`)))

  const call = Effect.fn("SessionHost.call")(function* (
    session: unknown,
    tool: string,
    args: unknown,
    meta?: CallMeta
  ) {
    const name = typeof session === "string" ? session : defaultSession
    const found = Tools.find(tool)
    const opens = Option.isNone(found) || found.value.whenNotOpen === undefined
    if (opens && !local.isOpen(name)) {
      const restored = yield* Effect.result(restore(name))
      if (restored._tag === "Failure") return refuse(restored.failure, meta ?? {})
    }
    const answer = yield* local.call(session, tool, args, meta)
    if (answer.ok && Option.exists(found, (t) => t.changesPage)) yield* save(name, answer.state.url)
    if (answer.ok && Option.exists(found, (t) => t.closesSession)) yield* saved.drop(name)
    return answer
  })

  const close = Effect.fn("SessionHost.close")(function* (session?: string) {
    yield* local.close(session)
    yield* saved.drop(session ?? defaultSession)
  })

  return { call, close }
})

/** The local `Sessions` with the host's restore and save: one process, one store. */
export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const local = yield* Sessions
    const host = yield* make(local)
    return Context.make(Sessions, Sessions.of({ ...local, call: host.call, close: host.close }))
  })
)
