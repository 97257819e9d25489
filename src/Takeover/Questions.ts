/**
 * A question a person answers when they hand a session back — a job application's "was it submitted?" — held by a
 * workflow running on this service: the HTTP resume route passes the person's answer to it. A plain service has none.
 */
import { Context, type Effect, type Option } from "effect"
import type { SwitchyardError } from "../Errors.ts"

export class Questions extends Context.Service<
  Questions,
  {
    /**
     * Ends the person's wait a workflow holds on `session`, with `answer` (required when the wait asks a question):
     * what was resumed, or none when no workflow waits on that session.
     */
    readonly answer: (
      session: string,
      answer: string | undefined
    ) => Effect.Effect<Option.Option<Record<string, unknown>>, SwitchyardError>
  }
>()("switchyard/Questions") {}
