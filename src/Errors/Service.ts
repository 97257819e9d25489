/**
 * Failures of the service around the browser: the one-client lease, capacity, shutdown, a closed session, policy,
 * and a person holding the browser. None says anything about the page or an engine's health.
 */
import { Schema } from "effect"
import { EngineKind } from "../EngineId.ts"
import { context, SideEffect } from "./Fields.ts"
import { ElementRef } from "./Page.ts"

/** The session's one-client lease was not free within its acquire timeout. */
export class LeaseTimeout extends Schema.TaggedError<LeaseTimeout>()("LeaseTimeout", {
  ...context,
  timeoutMs: Schema.Number
}) {
  readonly type = "lease_timeout"
  readonly retryable = true
}

/** Too many sessions or queued calls: the caller should back off and retry (after `retryAfterMs` when given). */
export class Busy extends Schema.TaggedError<Busy>()("Busy", {
  ...context,
  retryAfterMs: Schema.optional(Schema.Number)
}) {
  readonly type = "busy"
  readonly retryable = true
}

/** The service is shutting down: the call was stopped and will not be retried by it. */
export class ShuttingDown extends Schema.TaggedError<ShuttingDown>()("ShuttingDown", context) {
  readonly type = "shutting_down"
  readonly retryable = true
}

/** The session was closed (or is closing) while the call waited or ran. */
export class SessionClosed extends Schema.TaggedError<SessionClosed>()("SessionClosed", context) {
  readonly type = "session_closed"
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

/** A person has the browser: automation waits until they hand it back. */
export class HumanInControl extends Schema.TaggedError<HumanInControl>()("HumanInControl", {
  ...context,
  url: Schema.optional(Schema.String)
}) {
  readonly type = "human_in_control"
  readonly retryable = true
}

/** What made the cascade ask a person, in the wire form of an error. */
export const Cause = Schema.Struct({
  type: Schema.String,
  message: Schema.String,
  retryable: Schema.Boolean,
  engine: Schema.optional(EngineKind),
  elements: Schema.optional(Schema.Array(ElementRef))
})

/** A person was asked to take over and did not finish in time; `causedBy`: why they were asked, when a call failed. */
export class HumanTimeout extends Schema.TaggedError<HumanTimeout>()("HumanTimeout", {
  ...context,
  timeoutMs: Schema.Number,
  causedBy: Schema.optional(Cause)
}) {
  readonly type = "human_timeout"
  readonly retryable = false
}

/** A step of a durable workflow (a job application) could not finish: what the page showed, or the call that failed. */
export class StepFailed extends Schema.TaggedError<StepFailed>()("StepFailed", {
  ...context,
  step: Schema.String,
  retryable: Schema.Boolean,
  /** The configuration that must change before the step can succeed: no person at the browser can fix it. */
  setting: Schema.optional(Schema.String),
  /** What a person must answer before the step can go on (it then waits for them). */
  question: Schema.optional(Schema.String)
}) {
  readonly type = "step_failed"
}

/**
 * The service itself failed on this call (a defect: a bug, not the page or an engine's answer). The call ends at once
 * with this answer and the session goes on; the defect is in the log under the call's trace id. Not retried by the
 * service: an act may already have acted (`sideEffect`), so whether to ask again is the caller's to decide.
 */
export class Internal extends Schema.TaggedError<Internal>()("Internal", {
  ...context,
  sideEffect: Schema.optional(SideEffect)
}) {
  readonly type = "internal"
  readonly retryable = false
}

export const ServiceError = Schema.Union([
  LeaseTimeout,
  Busy,
  ShuttingDown,
  SessionClosed,
  PolicyRejected,
  HumanInControl,
  HumanTimeout,
  StepFailed,
  Internal
])
export type ServiceError = typeof ServiceError.Type
