/**
 * Every Magnitude failure as a Switchyard error, in one place: the worker's Problems (model, page, limits) and the
 * worker's own start. What crossed the thread boundary of a library's failure is kept as the error's `cause`.
 */
import { EndpointUnreachable } from "../../Errors/Browser.ts"
import { CdpClosed, LlmBadResponse, LlmError, NotInitialized, Timeout, Unsupported } from "../../Errors/Engine.ts"
import type { SideEffect } from "../../Errors/Fields.ts"
import {
  ActionFailed,
  AmbiguousTarget,
  ElementNotFound,
  InvalidInput,
  NavigationFailed,
  VerificationFailed
} from "../../Errors/Page.ts"
import type { SwitchyardError } from "../../Errors.ts"
import * as Isolated from "../Isolated.ts"
import type { Problem } from "./Protocol.ts"

export const engine = "magnitude" as const

/** What was being done when a call failed: names the error's `action` and decides its `sideEffect`. */
export interface Attempt {
  readonly action: string
  readonly timeoutMs: number
  /** Whether the call may change the page: what a timeout or a lost connection reports. */
  readonly sideEffect: SideEffect
}

const closed =
  /target page, context or browser has been closed|context or browser is closed|target closed|browser has been closed|browser has disconnected|session closed|connection closed|websocket is not open|cdpsession.*detached|page or browser has been closed/i
const badSelector =
  /unexpected token|is not a valid (selector|xpath)|failed to parse|unknown engine|malformed selector/i

/** The readable part of an SDK message: BAML's carry the whole prompt, screenshots included. */
const summarize = (message: string) => {
  const inner = /, message: "((?:[^"\\]|\\.)*)", code: /.exec(message)
  const text = inner?.[1] ?? message.replace(/^(Baml\w*Error: )+/, "").replace(/^[\w.]+Error: /, "")
  const line = text.split("\n")[0]!.trim()
  return line.length > 300 ? `${line.slice(0, 300)}…` : line
}

const llmError = (problem: Problem, at: Attempt, provider: string): SwitchyardError => {
  const base = { engine, action: at.action, sideEffect: problem.sideEffect, cause: Isolated.causeOf(problem) }
  // BAML reports transport failures with small pseudo statuses; only real HTTP statuses count.
  const status = problem.status !== undefined && problem.status >= 100 ? problem.status : undefined
  const text = summarize(problem.message)
  if (/ValidationError|FinishReasonError/.test(problem.name) || (status !== undefined && status < 300)) {
    return new LlmBadResponse({ ...base, message: `${at.action}: the model's answer was unusable: ${text}` })
  }
  const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500
  return new LlmError({
    ...base,
    provider,
    retryable,
    ...(status === undefined ? {} : { status }),
    message: `${at.action}: ${provider} ${status === undefined ? "did not answer" : `answered ${status}`}: ${text}`
  })
}

const browserError = (problem: Problem, at: Attempt): SwitchyardError => {
  const base = { engine, action: at.action, cause: Isolated.causeOf(problem) }
  const text = summarize(problem.message)
  if (problem.name === "TimeoutError") {
    return new Timeout({
      ...base,
      timeoutMs: at.timeoutMs,
      sideEffect: problem.sideEffect,
      message: `${at.action} timed out: ${text}`
    })
  }
  if (closed.test(problem.message)) {
    return new CdpClosed({
      ...base,
      sideEffect: problem.sideEffect,
      message: `the browser connection closed during ${at.action}: ${text}`
    })
  }
  if (badSelector.test(problem.message)) {
    return new InvalidInput({ ...base, field: "selector", message: `${at.action}: invalid selector: ${text}` })
  }
  if (problem.url !== undefined) {
    return /invalid url/i.test(problem.message)
      ? new InvalidInput({
          ...base,
          field: "url",
          message: `${problem.url} is not a URL the browser can open: ${text}`
        })
      : new NavigationFailed({ ...base, url: problem.url, message: `navigation to ${problem.url} failed: ${text}` })
  }
  return new ActionFailed({ ...base, sideEffect: problem.sideEffect, message: `${at.action} failed: ${text}` })
}

/** A Problem the worker answered with; `provider` names the model provider in LlmError. */
export const toEngineError = (problem: Problem, at: Attempt, provider: string): SwitchyardError => {
  const base = { engine, action: at.action }
  switch (problem.source) {
    case "llm":
      return llmError(problem, at, provider)
    case "llm_response":
      return new LlmBadResponse({
        ...base,
        sideEffect: problem.sideEffect,
        cause: Isolated.causeOf(problem),
        message: `${at.action}: ${summarize(problem.message)}`
      })
    case "limit":
      return new ActionFailed({ ...base, sideEffect: "possible", message: problem.message })
    case "gave_up":
      return new ActionFailed({
        ...base,
        sideEffect: "possible",
        cause: Isolated.causeOf(problem),
        message: `the model gave up on ${at.action}: ${summarize(problem.message)}`
      })
    case "not_found":
      return new ElementNotFound({ ...base, target: problem.target ?? "", message: problem.message })
    case "ambiguous":
      return new AmbiguousTarget({
        ...base,
        target: problem.target ?? "",
        candidates: problem.candidates ?? [],
        message: problem.message
      })
    case "invalid":
      return new InvalidInput({ ...base, ...(problem.field ? { field: problem.field } : {}), message: problem.message })
    case "unsupported":
      return new Unsupported({ ...base, message: problem.message })
    case "verification":
      return new VerificationFailed({
        ...base,
        expected: problem.expected ?? "",
        actual: problem.actual ?? "",
        ...(problem.landed === undefined ? {} : { landed: problem.landed }),
        message: problem.message
      })
    case "browser":
      return browserError(problem, at)
  }
}

/**
 * The worker stopped under a call: one that crashed because the browser connection dropped under magnitude-core lost
 * the connection (`cdp_closed`, retryable); otherwise it must be started again (`not_initialized`).
 */
export const workerStopped = (failure: Isolated.WorkerFailure, at: Attempt): SwitchyardError => {
  const cause = Isolated.causeOf(failure)
  const text = summarize(failure.message)
  return closed.test(failure.message)
    ? new CdpClosed({
        engine,
        action: at.action,
        sideEffect: at.sideEffect,
        cause,
        message: `the browser connection closed during ${at.action}, and the magnitude worker with it: ${text}`
      })
    : new NotInitialized({
        engine,
        action: at.action,
        cause,
        message: `${at.action}: the magnitude worker stopped: ${text}`
      })
}

/** The worker itself failed to start. */
export const startError = (failure: Isolated.WorkerFailure, endpoint: string): SwitchyardError => {
  const message = summarize(failure.message)
  const cause = Isolated.causeOf(failure)
  if (closed.test(failure.message)) {
    return new CdpClosed({
      engine,
      action: "connect",
      cause,
      message: `the browser closed the CDP connection: ${message}`
    })
  }
  if (failure.name === "ConnectFailed") {
    return new EndpointUnreachable({
      engine,
      action: "connect",
      endpoint,
      cause,
      message: `cannot connect to ${endpoint}: ${message}`
    })
  }
  return new NotInitialized({ engine, action: "connect", cause, message: `magnitude-core did not start: ${message}` })
}
