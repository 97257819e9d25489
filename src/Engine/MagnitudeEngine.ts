/**
 * The vision engine: magnitude-core 0.3.1 driving the session's own page from screenshots, run in a worker thread
 * (Magnitude/Worker.ts) so that a timeout or an interruption really stops it. Its hidden retries are turned off.
 */
import { DateTime, Deferred, Duration, Effect, Layer, Redacted, Semaphore } from "effect"
import { EndpointUnreachable } from "../Errors/Browser.ts"
import {
  CdpClosed,
  LlmBadResponse,
  LlmError,
  NotConfigured,
  NotInitialized,
  Timeout,
  Unsupported
} from "../Errors/Engine.ts"
import type { SideEffect } from "../Errors/Fields.ts"
import { ActionFailed, AmbiguousTarget, ElementNotFound, InvalidInput, NavigationFailed } from "../Errors/Page.ts"
import type { SwitchyardError } from "../Errors.ts"
import { BrowserSession } from "./BrowserSession.ts"
import { type Action, type ActResult, type Capabilities, Engine, type ScreenshotOptions } from "./Engine.ts"
import * as Isolated from "./Isolated.ts"
import type { ActDone, Init, LlmClient, Outcome, Problem, Started, WireAction } from "./Magnitude/Protocol.ts"
import * as Model from "./Model.ts"
import { requireAbsoluteUrl } from "./Navigation.ts"

export interface MagnitudeEngineOptions {
  /** Which model, key and base URL; resolved when the layer is built (Model.ts), so a missing key fails first. */
  readonly model?: Model.ModelConfig
  /** Model turns one `act` may take before it stops with ActionFailed; default 12. */
  readonly maxSteps?: number
  /** Browser actions one `act` may run; default 40. */
  readonly maxActions?: number
  /** Limit for one `act`; default 180 s. Past it the worker is terminated. */
  readonly actTimeoutMs?: number
  /** Limit for one `extract`; default 90 s. */
  readonly extractTimeoutMs?: number
  /** Limit for `navigate`; default 30 s. */
  readonly navigationTimeoutMs?: number
  /** Limit for one Action, screenshot or page read; default 10 s. */
  readonly actionTimeoutMs?: number
  /** How long an Action's selector may take to appear before ElementNotFound; default 2 s. */
  readonly elementWaitMs?: number
  /** Limit for starting the worker: loading magnitude-core and attaching to the page; default 30 s. */
  readonly connectTimeoutMs?: number
  /** Bound on disconnecting when the layer is released; default 5 s. */
  readonly releaseTimeoutMs?: number
}

export const capabilities: Capabilities = {
  instructions: "natural-language",
  actions: true,
  extract: "any-schema",
  observe: false,
  vision: true
}

const engine = "magnitude" as const
const entry = new URL("./Magnitude/Worker.ts", import.meta.url)

// ---------------------------------------------------------------------------------------------------------------
// Errors: every failure, from the worker or of the worker, goes through `toEngineError`.

interface Attempt {
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
  const base = { engine, action: at.action, sideEffect: problem.sideEffect }
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
  const base = { engine, action: at.action }
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

export const toEngineError = (problem: Problem, at: Attempt, provider: string): SwitchyardError => {
  const base = { engine, action: at.action }
  switch (problem.source) {
    case "llm":
      return llmError(problem, at, provider)
    case "llm_response":
      return new LlmBadResponse({
        ...base,
        sideEffect: problem.sideEffect,
        message: `${at.action}: ${summarize(problem.message)}`
      })
    case "limit":
      return new ActionFailed({ ...base, sideEffect: "possible", message: problem.message })
    case "gave_up":
      return new ActionFailed({
        ...base,
        sideEffect: "possible",
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
    case "browser":
      return browserError(problem, at)
  }
}

/** The worker itself failed to start. */
const startError = (failure: Isolated.WorkerFailure, endpoint: string): SwitchyardError => {
  const message = summarize(failure.message)
  if (closed.test(failure.message)) {
    return new CdpClosed({ engine, action: "connect", message: `the browser closed the CDP connection: ${message}` })
  }
  if (failure.name === "ConnectFailed") {
    return new EndpointUnreachable({
      engine,
      action: "connect",
      endpoint,
      message: `cannot connect to ${endpoint}: ${message}`
    })
  }
  return new NotInitialized({ engine, action: "connect", message: `magnitude-core did not start: ${message}` })
}

// ---------------------------------------------------------------------------------------------------------------
// The model: Magnitude's client config from the resolved model.

/** Magnitude's `LLMClient` for a resolved model; any provider with a base URL is spoken to as OpenAI-compatible. */
export const clientFor = (model: Model.ResolvedModel, apiKey: string): Effect.Effect<LlmClient, NotConfigured> => {
  const common = { model: model.model, apiKey, temperature: 0.2 }
  const baseUrl = model.baseURL === undefined ? {} : { baseUrl: model.baseURL }
  switch (model.provider) {
    case "anthropic":
      return Effect.succeed({ provider: "anthropic", ...common, ...baseUrl })
    case "google":
      return Effect.succeed({ provider: "google-ai", ...common, ...baseUrl })
    case "openai":
      return Effect.succeed(
        model.baseURL === undefined
          ? { provider: "openai", ...common }
          : { provider: "openai-generic", ...common, baseUrl: model.baseURL }
      )
    default:
      return model.baseURL === undefined
        ? Effect.fail(
            new NotConfigured({
              engine,
              message: `magnitude cannot reach ${model.id}: its providers are openai, anthropic and google, or any OpenAI-compatible server given a base URL (SWITCHYARD_${model.provider.toUpperCase()}_BASE_URL)`
            })
          )
        : Effect.succeed({ provider: "openai-generic", ...common, baseUrl: model.baseURL })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The engine.

export const make = Effect.fn("MagnitudeEngine.make")(function* (options: MagnitudeEngineOptions = {}) {
  const resolved = yield* Model.resolve("magnitude", options.model).pipe(
    Effect.mapError((e) => new NotConfigured({ engine, message: e.message }))
  )
  const llm = yield* clientFor(resolved, Redacted.value(resolved.apiKey))
  const session = yield* BrowserSession
  const actionTimeoutMs = options.actionTimeoutMs ?? 10_000
  const init: Init = {
    wsEndpoint: session.wsEndpoint,
    targetId: session.targetId,
    connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
    llm,
    limits: {
      maxSteps: options.maxSteps ?? 12,
      maxActions: options.maxActions ?? 40,
      actionTimeoutMs,
      navigationTimeoutMs: options.navigationTimeoutMs ?? 30_000,
      elementWaitMs: options.elementWaitMs ?? 2_000
    }
  }

  // BAML writes its call logs to the process's stdout (a JSON-RPC channel here) unless BAML_LOG is "off" in the real
  // environment; magnitude-core sets it, but from a worker thread that only changes the worker's copy.
  process.env.BAML_LOG ??= "off"
  const worker = yield* Isolated.spawn(entry, init).pipe(
    Effect.mapError((failure) => startError(failure, session.wsEndpoint)),
    Effect.timeoutOrElse({
      duration: Duration.millis(init.connectTimeoutMs),
      orElse: () =>
        Effect.fail(
          new Timeout({
            engine,
            action: "connect",
            timeoutMs: init.connectTimeoutMs,
            message: `magnitude-core did not attach to the session's page within ${init.connectTimeoutMs} ms`
          })
        )
    })
  )
  const { found } = yield* worker
    .call<Started>("started")
    .pipe(Effect.mapError((failure) => startError(failure, session.wsEndpoint)))
  if (found !== "target") {
    yield* Effect.logWarning(
      `MagnitudeEngine: the session's page ${session.targetId} is gone; using ${found === "first" ? "the first open page" : "a new page"}`
    )
  }

  // Resolves when the worker sees the browser connection or the session's page go away; a running call then fails at
  // once with CdpClosed instead of waiting for its model call to come back.
  const gone = yield* Deferred.make<string>()
  yield* worker.call<string>("disconnected").pipe(
    Effect.flatMap((reason) => Deferred.succeed(gone, reason)),
    Effect.ignore,
    Effect.forkScoped
  )
  // Runs before the watcher above is interrupted (finalizers run in reverse), which terminates the worker.
  yield* Effect.addFinalizer(() =>
    worker.call("close").pipe(Effect.timeoutOption(options.releaseTimeoutMs ?? 5_000), Effect.ignore)
  )
  const lock = yield* Semaphore.make(1)

  const closedError = (at: Attempt, reason: string) =>
    new CdpClosed({ engine, action: at.action, sideEffect: at.sideEffect, message: `${at.action}: ${reason}` })

  /** One worker call: typed outcome, bounded by `at.timeoutMs`, cut short by a lost connection. */
  const call = <A>(at: Attempt, method: string, ...args: ReadonlyArray<unknown>): Effect.Effect<A, SwitchyardError> =>
    lock.withPermits(1)(
      Effect.gen(function* () {
        if (Deferred.isDoneUnsafe(gone)) {
          return yield* closedError(at, "the engine is no longer connected to the page")
        }
        if (!worker.alive()) {
          return yield* new NotInitialized({
            engine,
            action: at.action,
            message: `${at.action}: the magnitude worker was stopped (a call timed out or was interrupted); reconnect the engine`
          })
        }
        const outcome = yield* worker.call<Outcome<A>>(method, ...args).pipe(
          Effect.mapError(
            (failure): SwitchyardError =>
              new NotInitialized({
                engine,
                action: at.action,
                message: `${at.action}: the magnitude worker stopped: ${failure.message}`
              })
          ),
          Effect.raceFirst(Deferred.await(gone).pipe(Effect.flatMap((reason) => Effect.fail(closedError(at, reason))))),
          Effect.timeoutOrElse({
            duration: Duration.millis(at.timeoutMs),
            orElse: () =>
              Effect.fail(
                new Timeout({
                  engine,
                  action: at.action,
                  timeoutMs: at.timeoutMs,
                  sideEffect: at.sideEffect,
                  message: `${at.action} did not finish within ${at.timeoutMs} ms; the magnitude worker was stopped`
                })
              )
          })
        )
        return outcome.ok ? outcome.value : yield* Effect.fail(toEngineError(outcome.problem, at, resolved.provider))
      })
    )

  const at = (action: string, timeoutMs = actionTimeoutMs, sideEffect: SideEffect = "none"): Attempt => ({
    action,
    timeoutMs,
    sideEffect
  })

  return Engine.of({
    kind: "magnitude",
    capabilities,

    navigate: Effect.fn("MagnitudeEngine.navigate")(function* (url: string) {
      const label = `navigate ${url}`
      yield* requireAbsoluteUrl(engine, label, url)
      return yield* call<{ url: string; title: string; status: number | null }>(
        at(label, init.limits.navigationTimeoutMs + 5_000, "possible"),
        "navigate",
        url
      )
    }),

    act: Effect.fn("MagnitudeEngine.act")(function* (input: string | Action) {
      if (typeof input !== "string") {
        const label = `${input.method} ${input.selector}`.trim()
        const wire: WireAction = { ...input, arguments: [...input.arguments] }
        const description = yield* call<string>(
          at(label, init.limits.elementWaitMs + actionTimeoutMs + 5_000, "possible"),
          "runAction",
          wire
        )
        return { success: true, description, action: input } satisfies ActResult
      }
      if (input.trim() === "") {
        return yield* new InvalidInput({ engine, action: "act", field: "instruction", message: "empty instruction" })
      }
      const done = yield* call<ActDone>(at(input, options.actTimeoutMs ?? 180_000, "possible"), "act", input)
      const reasoning = done.reasoning === "" ? "" : `: ${done.reasoning}`
      return {
        success: true,
        description: `${input} (${done.actions} actions in ${done.turns} model turns)${reasoning}`
      } satisfies ActResult
    }),

    observe: (instruction: string) =>
      Effect.fail(
        new Unsupported({
          engine,
          action: `observe ${instruction}`,
          message:
            "magnitude works from screenshot coordinates and has no observe; use an engine with observe (stagehand, playwright)"
        })
      ),

    extract: Effect.fn("MagnitudeEngine.extract")(function* (instruction: string, jsonSchema?: unknown) {
      return yield* call<unknown>(
        at(`extract ${instruction}`, options.extractTimeoutMs ?? 90_000),
        "extract",
        instruction,
        jsonSchema
      )
    }),

    screenshot: Effect.fn("MagnitudeEngine.screenshot")(function* (screenshotOptions?: ScreenshotOptions) {
      return yield* call<Uint8Array>(at("screenshot"), "screenshot", screenshotOptions?.fullPage ?? false)
    }),

    pageState: Effect.fn("MagnitudeEngine.pageState")(function* () {
      const state = yield* call<{ url: string; title: string; scrollX: number; scrollY: number }>(
        at("pageState"),
        "pageState"
      )
      const now = yield* DateTime.now
      return { ...state, timestamp: DateTime.formatIso(now) }
    }),

    connected: () => Effect.sync(() => worker.alive() && !Deferred.isDoneUnsafe(gone))
  })
})

export const layer = (options: MagnitudeEngineOptions = {}): Layer.Layer<Engine, SwitchyardError, BrowserSession> =>
  Layer.effect(Engine, make(options))
