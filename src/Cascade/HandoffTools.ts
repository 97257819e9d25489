/**
 * What `browser.handoff` and `browser.resume` do on a session: start a person's takeover (`Takeover/Handoff.ts`) and
 * hand them the page, or end it. Without a VNC display (no `Handoff` service) both answer `not_configured`.
 */
import { Effect, Option } from "effect"
import { NotConfigured } from "../Errors/Engine.ts"
import type { SwitchyardError } from "../Errors.ts"
import { Sandbox } from "../Sandbox/Sandbox.ts"
import { Handoff, type Takeover } from "../Takeover/Handoff.ts"
import { Engines } from "./Engines.ts"

export interface HandedOff {
  readonly url: string
  readonly since: string
  readonly reason: string
  /** What the agent should tell the person, or do next. */
  readonly next: string
}

export interface HandoffTools {
  /** The takeover in progress; none when nobody has the browser or no person can take over here. */
  readonly active: Effect.Effect<Option.Option<Takeover>>
  /** Asks a person to take over and hands them the page; the takeover ends with their resume or the timeout. */
  readonly handoff: (reason: string) => Effect.Effect<HandedOff, SwitchyardError>
  /** The person is done: automation gets the browser back. */
  readonly resume: Effect.Effect<{ readonly resumed: boolean }, SwitchyardError>
}

const notConfigured = (tool: string) =>
  Effect.fail(
    new NotConfigured({
      engine: "human",
      action: tool,
      message: `${tool} is not available: no person can take over on this service (start it with SWITCHYARD_HUMAN=on)`
    })
  )

/** The session's handoff tools; an open takeover's wait runs in the scope this is made in (the Router's layer). */
export const make = Effect.gen(function* () {
  const sandbox = yield* Sandbox
  const engines = yield* Engines
  const scope = yield* Effect.scope
  const found = yield* Effect.serviceOption(Handoff)
  if (Option.isNone(found)) {
    return {
      active: Effect.succeed(Option.none()),
      handoff: () => notConfigured("browser.handoff"),
      resume: notConfigured("browser.resume")
    } satisfies HandoffTools
  }
  const h = found.value
  const handoff = (reason: string) =>
    Effect.gen(function* () {
      const human = yield* engines.specFor({ engine: "human", retryCount: 0, timeoutPerAttemptMs: 1 })
      // The takeover starts first, so automation calls waiting for the browser are refused, not let in.
      const before = yield* h.active
      const started = yield* h.start(reason)
      // Hand the page over: the automation client disconnects and the switch is recorded.
      yield* sandbox
        .switchTo(human, `handoff: ${reason}`)
        .pipe(
          Effect.tapError(() =>
            Option.isNone(before) || before.value.id !== started.id ? h.resume(started.id) : Effect.void
          )
        )
      // An open takeover ends with the person's resume or the human timeout, never stays forever.
      yield* Effect.forkIn(h.await().pipe(Effect.ignore), scope)
      return {
        url: started.url,
        since: started.since,
        reason: started.reason,
        next: "Open the URL to take over (the VNC password comes from the operator); browser.resume hands the browser back."
      }
    })
  return {
    active: h.active,
    handoff,
    resume: h.resume().pipe(Effect.map((resumed) => ({ resumed })))
  } satisfies HandoffTools
})
