/**
 * Every failure Switchyard reports: one Schema union of tagged errors, each with a stable snake_case `type` (used
 * in logs and regression analysis), a `message` and whether retrying the same call can help (`retryable`). The
 * members are declared by level in `Errors/`: the page, an engine, the browser, the service.
 */
import { Schema } from "effect"
import type { EngineKind } from "./EngineId.ts"
import { BrowserError } from "./Errors/Browser.ts"
import { EngineFailure } from "./Errors/Engine.ts"
import type { SideEffect } from "./Errors/Fields.ts"
import { type ElementRef, PageError } from "./Errors/Page.ts"
import { type Cause, ServiceError } from "./Errors/Service.ts"

export const SwitchyardError = Schema.Union([PageError, EngineFailure, BrowserError, ServiceError])
export type SwitchyardError = typeof SwitchyardError.Type

/** Whether a value is one of Switchyard's errors (derived from the union). */
export const isSwitchyardError: (u: unknown) => u is SwitchyardError = Schema.is(SwitchyardError)

/** A page-level failure: about the page or the instruction, never about an engine's health. */
export const isPageError: (u: unknown) => u is PageError = Schema.is(PageError)

/** The wire form of an error: what tools, logs and JSON-RPC `data` carry (never its `cause`). */
export interface ErrorInfo {
  readonly type: SwitchyardError["type"]
  readonly message: string
  readonly retryable: boolean
  readonly engine?: EngineKind
  readonly action?: string
  readonly sideEffect?: SideEffect
  /** For an engine whose breaker is open: when asking again can help. */
  readonly retryAfterMs?: number
  /** For a missing or ambiguous target: the closest elements, with references `browser.act` accepts. */
  readonly elements?: ReadonlyArray<ElementRef>
  /** For a person who did not finish in time: the failure that made the cascade ask them. */
  readonly causedBy?: typeof Cause.Type
  /** For an act the page did not show: what was asked, what the target shows, and where the input went instead. */
  readonly expected?: string
  readonly actual?: string
  readonly landed?: ElementRef
  /** For `cdp_closed`: the session's page or browser itself went (`crashed`, `closed`, `hung`, `browser`). */
  readonly lost?: "crashed" | "closed" | "hung" | "browser"
  /** For a page not reached: the URL and what the network said (`ECONNREFUSED 127.0.0.1:4100`). */
  readonly url?: string
  readonly reason?: string
}

export const toErrorInfo = (error: SwitchyardError): ErrorInfo => {
  const sideEffect = "sideEffect" in error ? error.sideEffect : undefined
  return {
    type: error.type,
    message: error.message,
    retryable: error.retryable,
    ...(error.engine === undefined ? {} : { engine: error.engine }),
    ...(error.action === undefined ? {} : { action: error.action }),
    ...(sideEffect === undefined ? {} : { sideEffect }),
    ...("retryAfterMs" in error && error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    ...("elements" in error && error.elements !== undefined ? { elements: error.elements } : {}),
    ...("causedBy" in error && error.causedBy !== undefined ? { causedBy: error.causedBy } : {}),
    ...(error._tag === "VerificationFailed"
      ? {
          expected: error.expected,
          actual: error.actual,
          ...(error.landed === undefined ? {} : { landed: error.landed })
        }
      : {}),
    ...("lost" in error && error.lost !== undefined ? { lost: error.lost } : {}),
    ...(error._tag === "NavigationFailed" && error.reason !== undefined ? { url: error.url, reason: error.reason } : {})
  }
}
