/**
 * Every playwright-core failure as a Switchyard error, in one place: timeouts, a closed connection, a bad selector, a
 * failed navigation or action. The library's own failure is kept as the error's `cause` (never sent to clients).
 */
import { Effect } from "effect"
import { EndpointUnreachable } from "../../Errors/Browser.ts"
import { CdpClosed, Timeout } from "../../Errors/Engine.ts"
import type { SideEffect } from "../../Errors/Fields.ts"
import { ActionFailed, InvalidInput } from "../../Errors/Page.ts"
import { isSwitchyardError, type SwitchyardError } from "../../Errors.ts"
import { pageFailure } from "../Navigation.ts"
import { Covered, Detached, Disabled } from "./Pointer.ts"

export const engine = "playwright" as const

/** What was being done when a call failed: names the error's `action` and decides its `sideEffect`. */
export interface Attempt {
  /** What was being done, for the error's `action` and message. */
  readonly action: string
  readonly timeoutMs: number
  readonly sideEffect: SideEffect
  /** Set for navigations: network failures become NavigationFailed. */
  readonly url?: string
}

const closed =
  /target page, context or browser has been closed|target closed|target crashed|page crashed|browser has been closed|browser has disconnected|session closed|connection closed|websocket is not open|cdpsession.*detached/i
const badSelector =
  /unexpected token|is not a valid (selector|xpath)|failed to parse|unknown engine|malformed selector/i

const firstLine = (cause: unknown) =>
  (cause instanceof Error ? cause.message : String(cause)).split("\n")[0]!.replace(/^[\w.]+: /, "")

export const toEngineError = (cause: unknown, at: Attempt): SwitchyardError => {
  if (isSwitchyardError(cause)) return cause
  const message = firstLine(cause)
  const base = { engine, action: at.action, cause }
  if (cause instanceof Detached) {
    return new ActionFailed({
      ...base,
      sideEffect: "none",
      message: `${at.action} did nothing: ${cause.message} and no single element like it took its place; look again (browser.observe)`
    })
  }
  if (cause instanceof Covered) {
    return new ActionFailed({
      ...base,
      sideEffect: "none",
      message: `${at.action} did nothing: ${cause.message}; dismiss or close that first (e.g. click its accept or close button)`
    })
  }
  if (cause instanceof Disabled) {
    return new ActionFailed({
      ...base,
      sideEffect: "none",
      message: `${at.action} did nothing: ${cause.message}; it can be used once the page enables it (a form often enables its button once its required fields are filled)`
    })
  }
  // By name: playwright-core is loaded with the first connection, not with this module.
  if (cause instanceof Error && cause.name === "TimeoutError") {
    return new Timeout({
      ...base,
      timeoutMs: at.timeoutMs,
      sideEffect: at.sideEffect,
      message: `${at.action} timed out after ${at.timeoutMs} ms: ${message}`
    })
  }
  if (closed.test(message)) {
    return new CdpClosed({
      ...base,
      sideEffect: at.sideEffect,
      message: `the browser connection closed during ${at.action}: ${message}`
    })
  }
  if (badSelector.test(message)) {
    return new InvalidInput({ ...base, field: "selector", message: `${at.action}: invalid selector: ${message}` })
  }
  return pageFailure(base, at, message)
}

/** One playwright-core call, its failure mapped by `toEngineError`. */
export const attempt = <A>(at: Attempt, f: () => Promise<A>): Effect.Effect<A, SwitchyardError> =>
  Effect.tryPromise({ try: f, catch: (cause) => toEngineError(cause, at) })

/** `connectOverCDP` failed: the browser closed the socket, or the endpoint did not answer. */
export const connectError = (endpoint: string, cause: unknown): SwitchyardError => {
  const message = firstLine(cause)
  return closed.test(message)
    ? new CdpClosed({ engine, action: "connect", cause, message: `the browser closed the CDP connection: ${message}` })
    : new EndpointUnreachable({
        engine,
        action: "connect",
        endpoint,
        cause,
        message: `cannot connect to ${endpoint}: ${message}`
      })
}
