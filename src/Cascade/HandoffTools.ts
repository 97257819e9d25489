/**
 * What `browser.handoff` and `browser.resume` do on a session: start a person's takeover (`Takeover/Handoff.ts`) and
 * hand them the page, or end it. Without a VNC display (no `Handoff` service) both answer `not_configured`.
 */
import { Effect, Option, Redacted } from "effect"
import { NotConfigured } from "../Errors/Engine.ts"
import { PolicyRejected } from "../Errors/Service.ts"
import type { SwitchyardError } from "../Errors.ts"
import { Sandbox } from "../Sandbox/Sandbox.ts"
import { Handoff, type Takeover } from "../Takeover/Handoff.ts"
import type { Resume } from "../Takeover/Takeovers.ts"
import { Engines } from "./Engines.ts"

/** A takeover as the agent is told of it: where the person goes, and how the browser comes back. */
export interface HandedOff {
  readonly session: string
  /** For the person: opens the session's browser at once; it stops working when the takeover ends. */
  readonly link: string
  /** The same page without the password (noVNC asks for it): what the operator sees in the service's log. */
  readonly url: string
  readonly since: string
  readonly reason: string
  readonly resume: Resume
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

/** The takeover as the agent sees it (the handoff answer, and `browser.status` while it lasts). */
export const handedOff = (takeover: Takeover): HandedOff => {
  const { resume } = takeover
  const ways = [resume.tool, resume.http, resume.cli === undefined ? undefined : `\`${resume.cli}\``].filter(
    (way): way is string => way !== undefined
  )
  return {
    session: takeover.session,
    link: Redacted.value(takeover.link),
    url: takeover.url,
    since: takeover.since,
    reason: takeover.reason,
    resume,
    next: `Give the person the link: it opens this session's browser at once and stops working when the takeover ends. Until then automation calls answer human_in_control. When the person is done, hand the browser back with ${ways.join(", or ")}.`
  }
}

export interface HandoffToolsOptions {
  /** Whether the cascade policy for the page lets the agent ask for a person (`handToPerson: agent_request`). */
  readonly allowed: Effect.Effect<boolean>
}

/** The session's handoff tools; an open takeover's wait runs in the scope this is made in (the Router's layer). */
export const make = (options: HandoffToolsOptions) =>
  Effect.gen(function* () {
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
        if (!(yield* options.allowed))
          return yield* new PolicyRejected({
            engine: "human",
            action: "browser.handoff",
            message:
              "the cascade policy for this page does not hand it to a person when asked (handToPerson lacks agent_request)"
          })
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
        return handedOff(started)
      })
    return {
      active: h.active,
      handoff,
      resume: h.resume().pipe(Effect.map((resumed) => ({ resumed })))
    } satisfies HandoffTools
  })
