/**
 * Stagehand in `dom` mode on the main thread, with every SDK call made cancellable: the call's abort signal reaches
 * the model's HTTP request through model middleware, and a closed CDP transport fails the call at once.
 */

import { AsyncLocalStorage } from "node:async_hooks"
import type { ModelConfiguration, Action as StagehandAction } from "@browserbasehq/stagehand"
import { DateTime, Effect, Redacted } from "effect"
import { EndpointUnreachable } from "../../Errors/Browser.ts"
import { CdpClosed, Timeout } from "../../Errors/Engine.ts"
import type { SideEffect } from "../../Errors/Fields.ts"
import type { SwitchyardError } from "../../Errors.ts"
import * as Secrets from "../../Logging/Secrets.ts"
import { BrowserSession } from "../BrowserSession.ts"
import {
  type Action,
  type ActResult,
  type ActTarget,
  type Capabilities,
  Engine,
  type ScreenshotOptions
} from "../Engine.ts"
import * as Instruction from "../Instruction.ts"
import * as Model from "../Model.ts"
import { requireAbsoluteUrl } from "../Navigation.ts"
import * as Errors from "./Errors.ts"
import { limits, type StagehandEngineOptions } from "./Options.ts"
import * as StagehandPage from "./Page.ts"
import * as Verify from "./Verify.ts"

const engine = "stagehand" as const

type Middleware = NonNullable<Extract<ModelConfiguration, { modelName: string }>["middleware"]>

/** The SDK call in flight: its abort signal and how many model answers it has had (an act acts after the first). */
interface Call {
  readonly signal: AbortSignal
  readonly progress: { answers: number }
}

/**
 * The abort signal of the current call reaches every model request, and failed requests are marked not retryable:
 * the AI SDK retries only errors marked retryable, so the caller's Schedule stays the only retry policy.
 */
const middlewareFor = (calls: AsyncLocalStorage<Call>): Middleware => ({
  transformParams: async ({ params: raw }) => {
    // A page that shows a configured secret does not send it to the model: the prompt carries its reference.
    const params = { ...raw, prompt: Secrets.scrubDeep(raw.prompt) }
    const call = calls.getStore()
    if (call === undefined) return params
    const abortSignal =
      params.abortSignal === undefined ? call.signal : AbortSignal.any([params.abortSignal, call.signal])
    return { ...params, abortSignal }
  },
  wrapGenerate: async ({ doGenerate }) => {
    try {
      const result = await doGenerate()
      const call = calls.getStore()
      if (call !== undefined) call.progress.answers++
      return result
    } catch (error) {
      if (typeof error === "object" && error !== null && "isRetryable" in error) {
        Object.defineProperty(error, "isRetryable", { value: false })
      }
      throw error
    }
  }
})

/** The AI SDK's Anthropic provider wants `…/v1`; a configured Anthropic base URL is the origin its own SDK takes. */
const aiSdkBaseURL = (provider: string, baseURL: string) =>
  provider === "anthropic" && !/\/v1\/?$/.test(baseURL) ? `${baseURL.replace(/\/$/, "")}/v1` : baseURL

const quote = (s: string) => JSON.stringify(s)

/**
 * The SDK (with its AI SDK, model clients and browser library) is loaded on the first Stagehand connect, once: a
 * service without a model never pays its 300 ms of start-up or its ~60 MiB.
 */
let sdk: Promise<typeof import("@browserbasehq/stagehand")> | undefined
const loadStagehand = () => {
  sdk ??= import("@browserbasehq/stagehand")
  return sdk
}

const toAction = (a: StagehandAction): Action => ({
  selector: a.selector,
  method: a.method ?? "click",
  arguments: a.arguments ?? [],
  description: a.description
})

const describe = (a: Action) =>
  `${a.method} ${a.description || a.selector}${a.arguments.length > 0 ? ` (${a.arguments.map(quote).join(", ")})` : ""}`

/** How a failure is labelled: `after-model` means no side effect until the model has answered once. */
interface Step {
  readonly action: string
  readonly timeoutMs: number
  readonly sideEffect: SideEffect | "after-model"
  readonly url?: string
}

export const make = Effect.fn("StagehandEngine.dom")(function* (options: StagehandEngineOptions, caps: Capabilities) {
  const { actionTimeoutMs, navigationTimeoutMs, pageTimeoutMs, connectTimeoutMs, releaseTimeoutMs } = limits(options)
  const session = yield* BrowserSession
  const model = yield* Model.resolve("stagehandDom", options.model)
  const calls = new AsyncLocalStorage<Call>()
  const { Stagehand } = yield* Effect.promise(loadStagehand)

  const connection = yield* Effect.acquireRelease(
    Effect.try({
      try: () => ({
        ready: undefined as Promise<void> | undefined,
        sh: new Stagehand({
          env: "LOCAL",
          localBrowserLaunchOptions: { cdpUrl: session.wsEndpoint, connectTimeoutMs },
          model: {
            modelName: model.id,
            apiKey: Redacted.value(model.apiKey),
            ...(model.baseURL === undefined ? {} : { baseURL: aiSdkBaseURL(model.provider, model.baseURL) }),
            ...(model.provider === "openai" ? { openaiEndpointFormat: options.openaiEndpointFormat ?? "chat" } : {}),
            middleware: middlewareFor(calls)
          },
          // A failing Action must not silently ask the model and click something else; retries are the caller's.
          selfHeal: false,
          ...(options.domSettleTimeoutMs === undefined ? {} : { domSettleTimeout: options.domSettleTimeoutMs }),
          disablePino: true,
          verbose: 0,
          logger: () => {}
        })
      }),
      catch: (cause) => Errors.connectError(cause, session.wsEndpoint, model.provider)
    }),
    // On an attached browser close() only disconnects; wait for a connect still under way so it is closed too.
    ({ sh, ready }) =>
      Effect.promise(async () => {
        await ready?.catch(() => undefined)
        await sh.close().catch(() => undefined)
      }).pipe(Effect.timeoutOption(releaseTimeoutMs))
  )
  const { sh } = connection
  connection.ready = sh.init()
  yield* Effect.tryPromise({
    try: () => connection.ready!,
    catch: (cause) => Errors.connectError(cause, session.wsEndpoint, model.provider)
  }).pipe(
    Effect.timeoutOrElse({
      duration: connectTimeoutMs,
      orElse: () =>
        Effect.fail(
          new EndpointUnreachable({
            engine,
            action: "connect",
            endpoint: session.wsEndpoint,
            message: `Stagehand did not attach to ${session.wsEndpoint} within ${connectTimeoutMs} ms`
          })
        )
    })
  )

  // Stagehand drops its context when the socket closes, and a call in flight may then never settle: watch the
  // transport and fail the call instead.
  const context = sh.context
  let closedBy: string | undefined
  const waiting = new Set<() => void>()
  const onClosed = (why: string) => {
    closedBy = why
    for (const wake of waiting) wake()
    waiting.clear()
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => context.conn.onTransportClosed(onClosed)),
    () => Effect.sync(() => context.conn.offTransportClosed(onClosed))
  )

  const { page, found } = yield* Effect.tryPromise({
    try: () => StagehandPage.find(sh, session.targetId),
    catch: (cause) => Errors.connectError(cause, session.wsEndpoint, model.provider)
  })
  if (found !== "target") {
    yield* Effect.logWarning(
      `StagehandEngine: the session's page ${session.targetId} is gone; using ${found === "first" ? "the first open page" : "a new page"}`
    )
  }

  const isConnected = () =>
    closedBy === undefined && (sh.context as typeof context | null) !== null && context.pages().includes(page)

  const attemptOf = (step: Step, progress: { answers: number }): Errors.Attempt => ({
    action: step.action,
    timeoutMs: step.timeoutMs,
    provider: model.provider,
    sideEffect: step.sideEffect === "after-model" ? (progress.answers > 0 ? "possible" : "none") : step.sideEffect,
    ...(step.url === undefined ? {} : { url: step.url })
  })

  const closedError = (at: Errors.Attempt) =>
    new CdpClosed({
      engine,
      action: at.action,
      sideEffect: at.sideEffect,
      message: `the browser connection closed during ${at.action}: ${closedBy ?? "the engine is no longer connected to the page"}`
    })

  /** Fails as soon as the CDP transport closes. */
  const whenClosed = (at: () => Errors.Attempt) =>
    Effect.callback<never, CdpClosed>((resume) => {
      const wake = () => resume(Effect.fail(closedError(at())))
      if (closedBy !== undefined) return wake()
      waiting.add(wake)
      return Effect.sync(() => void waiting.delete(wake))
    })

  /**
   * One SDK call, cancellable: interruption (the limit below, or the caller's own timeout) aborts the model request
   * through the call's signal, and a closed transport wins the race at once. The SDK's promise may never settle
   * after a browser death; nothing waits for it.
   */
  const run = <A>(step: Step, f: () => Promise<A>): Effect.Effect<A, SwitchyardError> =>
    Effect.suspend(() => {
      const progress = { answers: 0 }
      const at = () => attemptOf(step, progress)
      if (!isConnected()) return Effect.fail(closedError(at()))
      const sdk = Effect.tryPromise({
        try: (signal) => calls.run({ signal, progress }, f),
        catch: (cause) => Errors.toEngineError(cause, at())
      })
      return Effect.raceFirst(sdk, whenClosed(at)).pipe(
        Effect.timeoutOrElse({
          duration: step.timeoutMs,
          orElse: () =>
            Effect.fail(
              new Timeout({
                engine,
                action: step.action,
                timeoutMs: step.timeoutMs,
                sideEffect: at().sideEffect,
                message: `${step.action} did not finish within ${step.timeoutMs} ms and was stopped`
              })
            )
        })
      )
    })

  const actResult = (
    result: { readonly message: string; readonly actions: ReadonlyArray<StagehandAction> },
    target?: ActTarget
  ) => {
    const actions = result.actions.map(toAction)
    const [only] = actions
    return {
      success: true,
      description: actions.length > 0 ? actions.map(describe).join(", then ") : result.message,
      ...(actions.length === 1 && only !== undefined ? { action: only } : {}),
      ...(target === undefined ? {} : { target })
    } satisfies ActResult
  }

  /** The acts' targets read back (Verify.ts): the last one's state for the answer, or what the page does not show. */
  const checked = (actions: ReadonlyArray<Action>, label: string) =>
    Effect.gen(function* () {
      let target: ActTarget | undefined
      for (const action of actions) {
        const found = yield* run({ action: label, timeoutMs: pageTimeoutMs, sideEffect: "possible" }, () =>
          Verify.check(page, action)
        )
        const failure = Verify.failure(found, label)
        if (failure !== undefined) return yield* Effect.fail(failure)
        if (found._tag === "shown") target = found.target
      }
      return target
    })

  return Engine.of({
    kind: engine,
    mode: "dom",
    capabilities: caps,

    navigate: Effect.fn("StagehandEngine.navigate")(function* (url: string) {
      const label = `navigate ${url}`
      yield* requireAbsoluteUrl(engine, label, url)
      const at = yield* run({ action: label, timeoutMs: navigationTimeoutMs, sideEffect: "possible", url }, () =>
        StagehandPage.navigate(page, url, navigationTimeoutMs)
      )
      return yield* Errors.landed(label, url, at)
    }),

    act: Effect.fn("StagehandEngine.act")(function* (input: Instruction.Said | Action) {
      if (Instruction.isSaid(input)) {
        const { text } = input
        // Every field's value is kept first, so text the model's act sent elsewhere can be found afterwards.
        yield* run({ action: text, timeoutMs: pageTimeoutMs, sideEffect: "none" }, () => Verify.remember(page))
        const result = yield* run({ action: text, timeoutMs: actionTimeoutMs, sideEffect: "after-model" }, () =>
          sh.act(text, { page })
        )
        if (!result.success) return yield* Effect.fail(Errors.failedAct(result.message, text, text))
        return actResult(result, yield* checked(result.actions.map(toAction), text))
      }
      const label = `${input.method} ${input.selector}`.trim()
      const prepared = yield* run({ action: label, timeoutMs: pageTimeoutMs, sideEffect: "none" }, () =>
        Verify.prepare(page, input)
      )
      if (prepared._tag !== "ready") return yield* Effect.fail(Verify.failure(prepared, label)!)
      const action = { ...prepared.action, arguments: [...prepared.action.arguments] }
      const result = yield* run({ action: label, timeoutMs: actionTimeoutMs, sideEffect: "possible" }, () =>
        sh.act(action, { page })
      )
      if (!result.success) return yield* Effect.fail(Errors.failedAct(result.message, input.selector, label))
      return actResult(result, yield* checked([prepared.action], label))
    }),

    observe: Effect.fn("StagehandEngine.observe")(function* ({ text }: Instruction.Said) {
      const found = yield* run({ action: `observe ${text}`, timeoutMs: actionTimeoutMs, sideEffect: "none" }, () =>
        sh.observe(text, { page })
      )
      return found.map(toAction)
    }),

    extract: Effect.fn("StagehandEngine.extract")(function* (instruction: string, jsonSchema?: unknown) {
      const step: Step = { action: `extract ${instruction}`, timeoutMs: actionTimeoutMs, sideEffect: "none" }
      if (jsonSchema === undefined) return withoutCacheStatus(yield* run(step, () => sh.extract(instruction, { page })))
      // zod is loaded with the first schema, not with the service.
      const Schema = yield* Effect.promise(() => import("./Schema.ts"))
      const schema = yield* Effect.fromResult(Schema.toZod(jsonSchema))
      return withoutCacheStatus(yield* run(step, () => sh.extract(instruction, schema, { page })))
    }),

    screenshot: Effect.fn("StagehandEngine.screenshot")(function* (options?: ScreenshotOptions) {
      return yield* run({ action: "screenshot", timeoutMs: pageTimeoutMs, sideEffect: "none" }, () =>
        StagehandPage.screenshot(page, options?.fullPage ?? false)
      )
    }),

    pageState: Effect.fn("StagehandEngine.pageState")(function* () {
      const state = yield* run({ action: "pageState", timeoutMs: pageTimeoutMs, sideEffect: "none" }, () =>
        StagehandPage.state(page)
      )
      const now = yield* DateTime.now
      return { ...state, timestamp: DateTime.formatIso(now) }
    }),

    connected: () => Effect.sync(isConnected)
  })
})

/** Stagehand adds `cacheStatus` when its server cache answered; it is not part of what was extracted. */
const withoutCacheStatus = (value: unknown) => {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !("cacheStatus" in value)) return value
  const { cacheStatus: _, ...rest } = value as Record<string, unknown>
  return rest
}
