/**
 * Every Stagehand failure as a Switchyard error. The SDKs Stagehand bundles (AI SDK, openai@4, Anthropic) share no
 * classes with us and the CUA worker sends errors as plain data, so failures are matched by name, status and message.
 */

import { Effect } from "effect"
import { EndpointUnreachable } from "../../Errors/Browser.ts"
import {
  CdpClosed,
  LlmBadResponse,
  LlmError,
  NotConfigured,
  NotInitialized,
  Timeout,
  Unsupported
} from "../../Errors/Engine.ts"
import type { SideEffect } from "../../Errors/Fields.ts"
import { ActionFailed, ElementNotFound, InvalidInput, NavigationFailed } from "../../Errors/Page.ts"
import { isSwitchyardError, type SwitchyardError } from "../../Errors.ts"
import { pageFailure } from "../Navigation.ts"
import type { Navigated } from "./Page.ts"

const engine = "stagehand" as const

/** What was being done when a call failed: names the error's `action` and decides its `sideEffect`. */
export interface Attempt {
  readonly action: string
  readonly timeoutMs: number
  readonly sideEffect: SideEffect
  /** The model provider (`openai`, `anthropic`, …) for LlmError. */
  readonly provider: string
  /** Set for navigations: failures become NavigationFailed. */
  readonly url?: string
}

interface Fields {
  readonly name: string
  readonly message: string
  readonly status: number | undefined
  /** AI_RetryError: the last attempt's error. */
  readonly lastError: unknown
  /** The worker died rather than the call failing (Isolated's WorkerFailure). */
  readonly dead: boolean
}

const read = (cause: unknown): Fields => {
  if (typeof cause !== "object" || cause === null) {
    return { name: "Error", message: String(cause), status: undefined, lastError: undefined, dead: false }
  }
  const e = cause as Record<string, unknown>
  const status = typeof e.statusCode === "number" ? e.statusCode : typeof e.status === "number" ? e.status : undefined
  return {
    name: typeof e.name === "string" ? e.name : "Error",
    message: (typeof e.message === "string" ? e.message : String(cause)).split("\n")[0]!,
    status,
    lastError: e.lastError,
    dead: e.dead === true
  }
}

// Names of Stagehand's own error classes (`name` is the class name) and of the bundled SDKs' errors.
const notConfigured = new Set([
  "MissingLLMConfigurationError",
  "MissingEnvironmentVariableError",
  "UnsupportedModelError",
  "UnsupportedModelProviderError",
  "UnsupportedAISDKModelProviderError",
  "InvalidAISDKModelFormatError",
  "CuaModelRequiredError",
  "ExperimentalNotConfiguredError",
  "AI_LoadAPIKeyError",
  "AI_NoSuchModelError"
])
const notInitialized = new Set(["StagehandNotInitializedError", "StagehandClosedError", "HandlerNotInitializedError"])
const badResponse = new Set([
  "AI_NoObjectGeneratedError",
  "AI_JSONParseError",
  "AI_TypeValidationError",
  "AI_InvalidResponseDataError",
  "AI_NoContentGeneratedError",
  "AI_EmptyResponseBodyError",
  "LLMResponseError",
  "CreateChatCompletionResponseError",
  "ZodSchemaValidationError",
  "ResponseParseError",
  "ResponseBodyError"
])
const llmTransport = new Set([
  "AI_APICallError",
  "APIError",
  "APIConnectionError",
  "APIConnectionTimeoutError",
  "AuthenticationError",
  "PermissionDeniedError",
  "RateLimitError",
  "InternalServerError",
  "BadRequestError",
  "NotFoundError",
  "ConflictError",
  "UnprocessableEntityError"
])
const timeouts = new Set([
  "TimeoutError",
  "ActTimeoutError",
  "ExtractTimeoutError",
  "ObserveTimeoutError",
  "ConnectionTimeoutError",
  "AbortError",
  "APIUserAbortError"
])
const notFound = new Set(["StagehandElementNotFoundError", "XPathResolutionError", "ContentFrameNotFoundError"])
const invalid = new Set(["StagehandInvalidArgumentError", "StagehandMissingArgumentError"])

const closed =
  /CDP connection closed|CDP transport closed|transport closed|websocket (is not open|closed|error)|socket hang up|target closed|session closed|browser has (been )?(closed|disconnected)|ECONNRESET/i
const missing = /could not find an element|no element (found|matches)|element not found|failed to resolve xpath/i

/** Statuses worth retrying: rate limits, overload, timeouts at the provider. */
const retryableStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500

const llm = (status: number | undefined, message: string, at: Attempt, cause: unknown): SwitchyardError => {
  const base = { engine, action: at.action, sideEffect: at.sideEffect, cause }
  // A 2xx that failed is a body the SDK could not read ("Invalid JSON response").
  if (status !== undefined && status >= 200 && status < 300) {
    return new LlmBadResponse({
      ...base,
      message: `${at.action}: ${at.provider} answered with a body the SDK cannot read: ${message}`
    })
  }
  return new LlmError({
    ...base,
    provider: at.provider,
    ...(status === undefined ? {} : { status }),
    // No status: the provider was unreachable or the connection dropped, which a retry can fix.
    retryable: status === undefined || retryableStatus(status),
    message:
      status === undefined
        ? `${at.action}: cannot reach ${at.provider}: ${message}`
        : `${at.action}: ${at.provider} answered ${status}: ${message}`
  })
}

/** Maps a failure the SDK threw (or the CUA worker sent as data); the failure itself becomes the error's `cause`. */
export const toEngineError = (cause: unknown, at: Attempt): SwitchyardError => classify(cause, at, cause)

/** `failure` decides the error; `cause` is what was thrown (an AI_RetryError is classified by its last error). */
const classify = (failure: unknown, at: Attempt, cause: unknown): SwitchyardError => {
  if (isSwitchyardError(failure)) return failure
  const { name, message, status, lastError, dead } = read(failure)
  const base = { engine, action: at.action, cause }
  if (name === "AI_RetryError" && lastError !== undefined) return classify(lastError, at, cause)
  // A worker that crashed because the browser connection dropped under Stagehand lost the connection, not its setup.
  const lostConnection = name === "CdpConnectionClosedError" || closed.test(message)
  if (dead && (lostConnection || read((failure as { cause?: unknown }).cause).name === "CdpConnectionClosedError")) {
    return new CdpClosed({
      ...base,
      sideEffect: at.sideEffect,
      message: `the browser connection closed during ${at.action}, and the Stagehand worker with it: ${message}`
    })
  }
  if (dead) {
    return new NotInitialized({
      ...base,
      message: `${at.action}: the Stagehand worker is not running (${message}); the engine must be reconnected`
    })
  }
  if (notConfigured.has(name)) return new NotConfigured({ ...base, message: `${at.action}: ${message}` })
  if (badResponse.has(name)) {
    return new LlmBadResponse({
      ...base,
      sideEffect: at.sideEffect,
      message: `${at.action}: the model's answer does not have the expected shape: ${message}`
    })
  }
  if (llmTransport.has(name) || status !== undefined) return llm(status, message, at, cause)
  // node-fetch (under the Anthropic and openai@4 SDKs): an unreadable body, or no connection at all.
  if (name === "FetchError") return llm(/invalid json/i.test(message) ? 200 : undefined, message, at, cause)
  if (lostConnection) {
    return new CdpClosed({
      ...base,
      sideEffect: at.sideEffect,
      message: `the browser connection closed during ${at.action}: ${message}`
    })
  }
  if (notInitialized.has(name)) {
    return new NotInitialized({ ...base, message: `${at.action}: Stagehand is not initialized: ${message}` })
  }
  if (timeouts.has(name)) {
    return new Timeout({
      ...base,
      timeoutMs: at.timeoutMs,
      sideEffect: at.sideEffect,
      message: `${at.action} timed out: ${message}`
    })
  }
  if (notFound.has(name) || missing.test(message)) {
    return new ElementNotFound({ ...base, target: at.action, message: `${at.action}: ${message}` })
  }
  if (invalid.has(name)) return new InvalidInput({ ...base, message: `${at.action}: ${message}` })
  if (name === "StagehandUnsupportedBrowserFeatureError") {
    return new Unsupported({ ...base, message: `${at.action}: ${message}` })
  }
  return pageFailure(base, at, message)
}

/** `act` resolving `{ success: false }`: Stagehand's message tells a missing element from a failed action. */
export const failedAct = (message: string, target: string, action: string): SwitchyardError => {
  const base = { engine, action }
  if (/no action found|no observe results found/i.test(message)) {
    return new ElementNotFound({
      ...base,
      target,
      message: `${action}: the model found no element for "${target}" on the page`
    })
  }
  if (missing.test(message)) return new ElementNotFound({ ...base, target, message: `${action}: ${message}` })
  if (/method .* not supported|not supported in action/i.test(message)) {
    return new InvalidInput({ ...base, field: "method", message: `${action}: ${message}` })
  }
  return new ActionFailed({ ...base, sideEffect: "possible", message: `${action} failed: ${message}` })
}

/** Connecting to the browser failed: configuration problems stay typed, the rest is an unreachable endpoint. */
export const connectError = (cause: unknown, endpoint: string, provider: string): SwitchyardError => {
  const at: Attempt = { action: "connect", timeoutMs: 0, sideEffect: "none", provider }
  const error = toEngineError(cause, at)
  if (error._tag === "NotConfigured" || error._tag === "CdpClosed") return error
  return new EndpointUnreachable({
    engine,
    action: "connect",
    endpoint,
    cause,
    message: `Stagehand cannot attach to ${endpoint}: ${read(cause).message}`
  })
}

/** Where a navigation landed, or NavigationFailed when it ended on the browser's error page. */
export const landed = (action: string, url: string, at: Navigated) =>
  at.errorCode === undefined
    ? Effect.succeed({ url: at.url, title: at.title, status: at.status })
    : Effect.fail(
        new NavigationFailed({ engine, action, url, message: `navigation to ${url} failed: ${at.errorCode}` })
      )
