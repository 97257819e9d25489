/**
 * Every failure Switchyard reports: one tagged union whose members carry a stable snake_case `type` (used in logs
 * and regression analysis), a `message` and whether retrying the same call can help (`retryable`).
 */
import { Schema } from "effect"

export const EngineKind = Schema.Literals(["playwright", "stagehand", "magnitude", "human"])
export type EngineKind = typeof EngineKind.Type

/** Whether a failed call may already have changed the page (an `act` that may have clicked). */
export const SideEffect = Schema.Literals(["none", "possible"])
export type SideEffect = typeof SideEffect.Type

const context = {
  message: Schema.String,
  engine: Schema.optional(EngineKind),
  action: Schema.optional(Schema.String)
}

/** No element matched what the call looked for. The page may still be rendering, so a retry can help. */
export class ElementNotFound extends Schema.TaggedError<ElementNotFound>()("ElementNotFound", {
  ...context,
  target: Schema.String
}) {
  readonly type = "element_not_found"
  readonly retryable = true
  readonly sideEffect: SideEffect = "none"
}

/** Several elements matched equally well; the caller has to say which one. */
export class AmbiguousTarget extends Schema.TaggedError<AmbiguousTarget>()("AmbiguousTarget", {
  ...context,
  target: Schema.String,
  candidates: Schema.Array(Schema.String)
}) {
  readonly type = "ambiguous_target"
  readonly retryable = false
  readonly sideEffect: SideEffect = "none"
}

/** The call itself is malformed: an instruction outside the grammar, an unknown method, a bad URL. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  ...context,
  field: Schema.optional(Schema.String)
}) {
  readonly type = "invalid_input"
  readonly retryable = false
}

/** The engine cannot do this kind of call (e.g. fill an arbitrary JSON schema without a model). */
export class Unsupported extends Schema.TaggedError<Unsupported>()("Unsupported", context) {
  readonly type = "unsupported"
  readonly retryable = false
}

/** The engine lacks what it needs to start (no model credentials, no binary); the cascade skips it. */
export class NotConfigured extends Schema.TaggedError<NotConfigured>()("NotConfigured", context) {
  readonly type = "not_configured"
  readonly retryable = false
}

/** A page action ran and failed; it may have had an effect before failing. */
export class ActionFailed extends Schema.TaggedError<ActionFailed>()("ActionFailed", {
  ...context,
  sideEffect: SideEffect
}) {
  readonly type = "action_failed"
  readonly retryable = true
}

/** Navigation did not reach the page (DNS, refused connection, aborted load). */
export class NavigationFailed extends Schema.TaggedError<NavigationFailed>()("NavigationFailed", {
  ...context,
  url: Schema.String
}) {
  readonly type = "navigation_failed"
  readonly retryable = true
}

/** An operation ran past its time limit and was stopped. */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", {
  ...context,
  timeoutMs: Schema.Number,
  level: Schema.optional(Schema.Number),
  attempt: Schema.optional(Schema.Number),
  sideEffect: Schema.optional(SideEffect)
}) {
  readonly type = "timeout"
  readonly retryable = true
}

/** The engine's CDP connection to the browser is gone (socket closed, target crashed). */
export class CdpClosed extends Schema.TaggedError<CdpClosed>()("CdpClosed", {
  ...context,
  sideEffect: Schema.optional(SideEffect)
}) {
  readonly type = "cdp_closed"
  readonly retryable = true
}

/** The browser is dead and could not be brought back (relaunch disabled or failed, attached browser gone). */
export class BrowserUnavailable extends Schema.TaggedError<BrowserUnavailable>()("BrowserUnavailable", context) {
  readonly type = "browser_unavailable"
  readonly retryable = false
}

/** A browser could not be started: missing binary, launch crash, no DevTools endpoint in time. */
export class BrowserLaunchFailed extends Schema.TaggedError<BrowserLaunchFailed>()("BrowserLaunchFailed", {
  ...context,
  executable: Schema.optional(Schema.String),
  retryable: Schema.Boolean
}) {
  readonly type = "browser_launch_failed"
}

/** A CDP endpoint that is not a usable URL. */
export class InvalidEndpoint extends Schema.TaggedError<InvalidEndpoint>()("InvalidEndpoint", {
  ...context,
  endpoint: Schema.String
}) {
  readonly type = "invalid_endpoint"
  readonly retryable = false
}

/** A well-formed endpoint that did not answer. */
export class EndpointUnreachable extends Schema.TaggedError<EndpointUnreachable>()("EndpointUnreachable", {
  ...context,
  endpoint: Schema.String
}) {
  readonly type = "endpoint_unreachable"
  readonly retryable = true
}

/** A browser provider's API refused or failed (AdsPower's non-zero `code`, with its `msg`). */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  ...context,
  provider: Schema.String,
  code: Schema.optional(Schema.Number),
  retryable: Schema.Boolean
}) {
  readonly type = "provider_error"
}

/** The session's one-client lease was not free within its acquire timeout. */
export class LeaseTimeout extends Schema.TaggedError<LeaseTimeout>()("LeaseTimeout", {
  ...context,
  timeoutMs: Schema.Number
}) {
  readonly type = "lease_timeout"
  readonly retryable = true
}

/** An engine switch could not complete; `step` names the protocol step that failed. */
export class SwitchFailed extends Schema.TaggedError<SwitchFailed>()("SwitchFailed", {
  ...context,
  step: Schema.String,
  retryable: Schema.Boolean
}) {
  readonly type = "switch_failed"
}

/** The engine client is not (or no longer) initialized: it must be reconnected before it can serve calls. */
export class NotInitialized extends Schema.TaggedError<NotInitialized>()("NotInitialized", context) {
  readonly type = "not_initialized"
  readonly retryable = true
}

/** The model provider answered with an error status (500/429 are retryable, 401/403/400 are not) or not at all. */
export class LlmError extends Schema.TaggedError<LlmError>()("LlmError", {
  ...context,
  provider: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number),
  retryable: Schema.Boolean,
  sideEffect: Schema.optional(SideEffect)
}) {
  readonly type = "llm_error"
}

/** The model answered, but not in the shape the engine needs (malformed JSON, schema mismatch). */
export class LlmBadResponse extends Schema.TaggedError<LlmBadResponse>()("LlmBadResponse", {
  ...context,
  sideEffect: Schema.optional(SideEffect)
}) {
  readonly type = "llm_bad_response"
  readonly retryable = true
}

/** A person was asked to take over and did not finish in time. */
export class HumanTimeout extends Schema.TaggedError<HumanTimeout>()("HumanTimeout", {
  ...context,
  timeoutMs: Schema.Number
}) {
  readonly type = "human_timeout"
  readonly retryable = false
}

/** A person has the browser: automation waits until they hand it back. */
export class HumanInControl extends Schema.TaggedError<HumanInControl>()("HumanInControl", {
  ...context,
  url: Schema.optional(Schema.String)
}) {
  readonly type = "human_in_control"
  readonly retryable = true
}

/** The service is shutting down: the call was stopped and will not be retried by it. */
export class ShuttingDown extends Schema.TaggedError<ShuttingDown>()("ShuttingDown", context) {
  readonly type = "shutting_down"
  readonly retryable = true
}

/** Too many sessions or queued calls: the caller should back off and retry. */
export class Busy extends Schema.TaggedError<Busy>()("Busy", context) {
  readonly type = "busy"
  readonly retryable = true
}

/** The call was refused by policy (a URL scheme or host that is not allowed). */
export class PolicyRejected extends Schema.TaggedError<PolicyRejected>()("PolicyRejected", {
  ...context,
  field: Schema.optional(Schema.String)
}) {
  readonly type = "rejected_by_policy"
  readonly retryable = false
}

/** The session was closed (or is closing) while the call waited or ran. */
export class SessionClosed extends Schema.TaggedError<SessionClosed>()("SessionClosed", context) {
  readonly type = "session_closed"
  readonly retryable = true
}

export type EngineError =
  | ElementNotFound
  | AmbiguousTarget
  | InvalidInput
  | Unsupported
  | NotConfigured
  | ActionFailed
  | NavigationFailed
  | Timeout
  | CdpClosed
  | BrowserUnavailable
  | BrowserLaunchFailed
  | InvalidEndpoint
  | EndpointUnreachable
  | ProviderError
  | LeaseTimeout
  | SwitchFailed
  | NotInitialized
  | LlmError
  | LlmBadResponse
  | HumanTimeout
  | HumanInControl
  | ShuttingDown
  | Busy
  | PolicyRejected
  | SessionClosed

/** The wire form of an error: what tools, logs and JSON-RPC `data` carry. */
export interface ErrorInfo {
  readonly type: EngineError["type"]
  readonly message: string
  readonly retryable: boolean
  readonly engine?: EngineKind
  readonly action?: string
  readonly sideEffect?: SideEffect
}

export const toErrorInfo = (error: EngineError): ErrorInfo => {
  const sideEffect = "sideEffect" in error ? error.sideEffect : undefined
  return {
    type: error.type,
    message: error.message,
    retryable: error.retryable,
    ...(error.engine === undefined ? {} : { engine: error.engine }),
    ...(error.action === undefined ? {} : { action: error.action }),
    ...(sideEffect === undefined ? {} : { sideEffect })
  }
}

const tags = new Set([
  "ElementNotFound",
  "AmbiguousTarget",
  "InvalidInput",
  "Unsupported",
  "NotConfigured",
  "ActionFailed",
  "NavigationFailed",
  "Timeout",
  "CdpClosed",
  "BrowserUnavailable",
  "BrowserLaunchFailed",
  "InvalidEndpoint",
  "EndpointUnreachable",
  "ProviderError",
  "LeaseTimeout",
  "SwitchFailed",
  "NotInitialized",
  "LlmError",
  "LlmBadResponse",
  "HumanTimeout",
  "HumanInControl",
  "ShuttingDown",
  "Busy",
  "PolicyRejected",
  "SessionClosed"
])

export const isEngineError = (u: unknown): u is EngineError =>
  typeof u === "object" && u !== null && "_tag" in u && tags.has((u as { _tag: string })._tag)
