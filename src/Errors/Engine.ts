/**
 * Failures of an automation engine itself: not set up, unable to serve a kind of call, too slow, disconnected, let
 * down by its model, or resting after such failures. `Cascade/Breaker.ts` says which of them its breakers count.
 */
import { Schema } from "effect"
import { context, SideEffect } from "./Fields.ts"

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

/**
 * The engine's CDP connection to the browser is gone (socket closed, target crashed). `lost` says the session's page
 * or browser itself went (its tab crashed, hung or was closed; the browser process died): the call ends at once, and
 * the next call gets the page back.
 */
export class CdpClosed extends Schema.TaggedError<CdpClosed>()("CdpClosed", {
  ...context,
  sideEffect: Schema.optional(SideEffect),
  lost: Schema.optional(Schema.Literals(["crashed", "closed", "hung", "browser"]))
}) {
  readonly type = "cdp_closed"
  readonly retryable = true
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

/**
 * The engine's breaker is open after consecutive health failures (crashes, time limits, model errors): the cascade
 * skips it until `retryAfterMs` has passed. Asking again after that can help.
 */
export class EngineCoolingDown extends Schema.TaggedError<EngineCoolingDown>()("EngineCoolingDown", {
  ...context,
  /** The engine's label (`stagehand:dom`), as the breaker is keyed. */
  label: Schema.String,
  /** Consecutive health failures that opened the breaker. */
  failures: Schema.Number,
  /** Time left until the engine is tried again. */
  retryAfterMs: Schema.Number
}) {
  readonly type = "engine_cooling_down"
  readonly retryable = true
}

export const EngineFailure = Schema.Union([
  Unsupported,
  NotConfigured,
  Timeout,
  CdpClosed,
  NotInitialized,
  LlmError,
  LlmBadResponse,
  EngineCoolingDown
])
export type EngineFailure = typeof EngineFailure.Type
