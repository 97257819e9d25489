/**
 * Failures that say something about the page or the agent's instruction, not about an engine's health: a missing
 * or ambiguous target, a malformed call, an action the page refused, a page that did not load.
 */
import { Schema } from "effect"
import { context, SideEffect } from "./Fields.ts"

/** An element a page-level error points the caller to: its reference (for `browser.act`), role and name. */
export const ElementRef = Schema.Struct({
  ref: Schema.String,
  role: Schema.String,
  name: Schema.String,
  frame: Schema.optional(Schema.String),
  /** What it sits in, as a person reads it: `group "Are you 18 or older?" in form "Apply"`. */
  context: Schema.optional(Schema.String)
})
export type ElementRef = typeof ElementRef.Type

/** No element matched what the call looked for. The page may still be rendering, so a retry can help. */
export class ElementNotFound extends Schema.TaggedError<ElementNotFound>()("ElementNotFound", {
  ...context,
  target: Schema.String,
  /** The closest elements on the page, with references the caller can act on. */
  elements: Schema.optional(Schema.Array(ElementRef))
}) {
  readonly type = "element_not_found"
  readonly retryable = true
  readonly sideEffect: SideEffect = "none"
}

/** Several elements matched equally well; the caller has to say which one. */
export class AmbiguousTarget extends Schema.TaggedError<AmbiguousTarget>()("AmbiguousTarget", {
  ...context,
  target: Schema.String,
  candidates: Schema.Array(Schema.String),
  /** The tied elements, with references the caller can act on. */
  elements: Schema.optional(Schema.Array(ElementRef))
}) {
  readonly type = "ambiguous_target"
  readonly retryable = false
  readonly sideEffect: SideEffect = "none"
}

/** The call itself is malformed: an instruction outside the grammar, an unknown method, a bad URL or setting. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  ...context,
  field: Schema.optional(Schema.String)
}) {
  readonly type = "invalid_input"
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

/**
 * The act ran but the page does not show what was asked: a field holds another value, a choice is not selected, a
 * box is not ticked. When the input went somewhere else (a focus trap, a re-render), `landed` names that element.
 */
export class VerificationFailed extends Schema.TaggedError<VerificationFailed>()("VerificationFailed", {
  ...context,
  /** What the act asked the page to show. */
  expected: Schema.String,
  /** What the target shows now. */
  actual: Schema.String,
  /** The element the input reached instead of the target. */
  landed: Schema.optional(ElementRef)
}) {
  readonly type = "verification_failed"
  readonly retryable = false
  readonly sideEffect: SideEffect = "possible"
}

/** Navigation did not reach the page (DNS, refused connection, aborted load). */
export class NavigationFailed extends Schema.TaggedError<NavigationFailed>()("NavigationFailed", {
  ...context,
  url: Schema.String,
  /** What the network said when the page was not reached: `ECONNREFUSED 127.0.0.1:4100`, `ENOTFOUND jobs.example`,
   * `ERR_CERT_AUTHORITY_INVALID`. Every engine level would meet it again. */
  reason: Schema.optional(Schema.String)
}) {
  readonly type = "navigation_failed"
  readonly retryable = true
}

/** A JavaScript dialog open on a page, as agents see it. */
export const Dialog = Schema.Struct({
  /** The tab it is open on. */
  tab: Schema.String,
  type: Schema.Literals(["alert", "confirm", "prompt", "beforeunload"]),
  message: Schema.String,
  /** The text a prompt offers; absent for other dialogs. */
  defaultPrompt: Schema.optional(Schema.String),
  /** The page that opened it. */
  url: Schema.String
})

/** The page ran past a per-session limit (reloading without end, opening page after page, exhausting its memory):
 * the call is stopped and what the page did is undone where it can be (extra pages closed, the loop left). */
export class LimitExceeded extends Schema.TaggedError<LimitExceeded>()("LimitExceeded", {
  ...context,
  limit: Schema.Literals(["navigations", "pages", "memory"])
}) {
  readonly type = "limit_exceeded"
  readonly retryable = false
}

/** A JavaScript dialog is open on the page: nothing else runs there until the agent answers it. */
export class DialogOpen extends Schema.TaggedError<DialogOpen>()("DialogOpen", {
  ...context,
  dialog: Dialog,
  /** The call itself opened it (an act's click), rather than finding it open. */
  openedByCall: Schema.Boolean,
  sideEffect: SideEffect
}) {
  readonly type = "dialog_open"
  readonly retryable = false
}

/** A download grew past the session's size cap and was cancelled. */
export class DownloadTooLarge extends Schema.TaggedError<DownloadTooLarge>()("DownloadTooLarge", {
  ...context,
  maxBytes: Schema.Number
}) {
  readonly type = "download_too_large"
  readonly retryable = false
}

export const PageError = Schema.Union([
  ElementNotFound,
  AmbiguousTarget,
  InvalidInput,
  ActionFailed,
  VerificationFailed,
  NavigationFailed,
  LimitExceeded,
  DialogOpen,
  DownloadTooLarge
])
export type PageError = typeof PageError.Type
