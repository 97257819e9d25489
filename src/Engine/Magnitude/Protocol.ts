/**
 * What crosses the thread boundary between MagnitudeEngine and its worker: the start data, the typed outcome of each
 * call, and the raw facts about a failure that the engine's one error mapping turns into an SwitchyardError.
 */
import type { SideEffect } from "../../Errors/Fields.ts"
import type { ActTarget } from "../Engine.ts"

/** The model client Magnitude talks to, in its own `LLMClient` terms (`openai-generic` for any compatible server). */
export interface LlmClient {
  readonly provider: "openai-generic" | "openai" | "anthropic" | "google-ai"
  readonly model: string
  /** The plain key: it has to be plain to reach the SDK in the worker. */
  readonly apiKey: string
  readonly baseUrl?: string
  readonly temperature: number
}

export interface Limits {
  /** Model turns (planning calls) one `act` may make. */
  readonly maxSteps: number
  /** Browser actions one `act` may run. */
  readonly maxActions: number
  readonly actionTimeoutMs: number
  readonly navigationTimeoutMs: number
  readonly elementWaitMs: number
}

export interface Init {
  readonly wsEndpoint: string
  readonly targetId: string
  readonly connectTimeoutMs: number
  readonly llm: LlmClient
  readonly limits: Limits
}

/** Where a failure came from; only the worker knows, so it says. */
export type Source =
  /** A model call: HTTP status, network, or an answer that did not parse. */
  | "llm"
  /** The model answered in a usable form but proposed nothing, or a schema mismatch. */
  | "llm_response"
  /** A Playwright call on the page or the CDP connection. */
  | "browser"
  /** The step or action limit stopped an `act`. */
  | "limit"
  /** The model declared the task impossible (`task:fail`). */
  | "gave_up"
  | "not_found"
  | "ambiguous"
  | "invalid"
  | "unsupported"
  /** The action ran but the page does not show what it asked. */
  | "verification"

export interface Problem {
  readonly source: Source
  /** The original error's class name (`BamlClientHttpError`, `TimeoutError`, …). */
  readonly name: string
  readonly message: string
  readonly sideEffect: SideEffect
  /** HTTP status the model provider answered with. */
  readonly status?: number
  readonly target?: string
  readonly candidates?: ReadonlyArray<string>
  readonly field?: string
  /** Set for navigations, so network failures become NavigationFailed. */
  readonly url?: string
  /** The original error's stack frames, for the mapped error's `cause` (Isolated.causeOf). */
  readonly frames?: string
  /** For a verification: what was asked, what the target shows, where typed text went instead. */
  readonly expected?: string
  readonly actual?: string
  readonly landed?: { readonly ref: string; readonly role: string; readonly name: string }
}

export type Outcome<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly problem: Problem }

export interface WireAction {
  readonly selector: string
  readonly method: string
  readonly arguments: ReadonlyArray<string>
  readonly description: string
}

/** A concrete Action done: what was done, and what the page now shows for its target. */
export interface ActionDone {
  readonly description: string
  readonly target?: ActTarget
}

export interface Started {
  /** How the session's page was found: by its target id, or a fallback when that page is gone. */
  readonly found: "target" | "first" | "new"
}

export interface ActDone {
  readonly turns: number
  readonly actions: number
  readonly reasoning: string
}
