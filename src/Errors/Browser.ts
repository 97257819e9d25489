/**
 * Failures of the browser a session runs on and of the providers that start or lend it: launch, endpoints,
 * provider APIs, a browser gone for good, an engine switch that could not complete.
 */
import { Schema } from "effect"
import { context } from "./Fields.ts"

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

/** An engine switch could not complete; `step` names the protocol step that failed. */
export class SwitchFailed extends Schema.TaggedError<SwitchFailed>()("SwitchFailed", {
  ...context,
  step: Schema.String,
  retryable: Schema.Boolean
}) {
  readonly type = "switch_failed"
}

export const BrowserError = Schema.Union([
  BrowserUnavailable,
  BrowserLaunchFailed,
  InvalidEndpoint,
  EndpointUnreachable,
  ProviderError,
  SwitchFailed
])
export type BrowserError = typeof BrowserError.Type
