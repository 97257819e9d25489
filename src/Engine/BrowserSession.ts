/**
 * What an engine is given when the Sandbox connects it: the running browser's endpoints and the page the session
 * works on. Engines depend on this, never on how the browser was started.
 */
import { Context } from "effect"

export class BrowserSession extends Context.Service<
  BrowserSession,
  {
    readonly wsEndpoint: string
    readonly httpEndpoint: string
    readonly pid: number | null
    /** CDP target id of the session's page: every engine drives this page, so a switch keeps the agent's place. */
    readonly targetId: string
  }
>()("switchyard/BrowserSession") {}
