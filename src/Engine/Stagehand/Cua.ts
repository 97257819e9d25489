/**
 * Stagehand in `cua` mode: a computer-use model (Anthropic or OpenAI, from the resolved model) acts from screenshots.
 * The whole Stagehand instance lives in a worker (CuaWorker.ts); an interrupted call ends the worker, and the engine
 * then reports itself disconnected so the Sandbox connects a fresh one.
 */
import type { ActResult as StagehandActResult } from "@browserbasehq/stagehand"
import { DateTime, Effect, Redacted } from "effect"
import { EndpointUnreachable } from "../../Errors/Browser.ts"
import { CdpClosed, NotConfigured, NotInitialized, Timeout, Unsupported } from "../../Errors/Engine.ts"
import type { SideEffect } from "../../Errors/Fields.ts"
import { ActionFailed } from "../../Errors/Page.ts"
import type { SwitchyardError } from "../../Errors.ts"
import { BrowserSession } from "../BrowserSession.ts"
import { type Action, type ActResult, type Capabilities, Engine, type ScreenshotOptions } from "../Engine.ts"
import * as Instruction from "../Instruction.ts"
import * as Isolated from "../Isolated.ts"
import * as Model from "../Model.ts"
import { requireAbsoluteUrl } from "../Navigation.ts"
import * as PageFacts from "../PageFacts.ts"
import type { CuaInit, TaskOutcome } from "./CuaWorker.ts"
import * as Errors from "./Errors.ts"
import { limits, type StagehandEngineOptions } from "./Options.ts"
import type { Navigated } from "./Page.ts"
import * as Verify from "./Verify.ts"

const engine = "stagehand" as const
const entry = Isolated.sibling("./CuaWorker", import.meta.url)
/** Providers Stagehand 3.7 has computer-use clients for. */
const providers = ["anthropic", "openai", "google"]
/** The size Stagehand's CUA clients assume when they cannot read the page's. */
export const defaultViewport = { width: 1288, height: 711 } as const

interface Step {
  readonly action: string
  readonly timeoutMs: number
  readonly sideEffect: SideEffect
  readonly url?: string
}

export const make = Effect.fn("StagehandEngine.cua")(function* (options: StagehandEngineOptions, caps: Capabilities) {
  const { taskTimeoutMs, actionTimeoutMs, navigationTimeoutMs, pageTimeoutMs, connectTimeoutMs, maxTextChars } =
    limits(options)
  const session = yield* BrowserSession
  const model = yield* Model.resolve("stagehandCua", options.model)
  if (!providers.includes(model.provider)) {
    return yield* new NotConfigured({
      engine,
      action: "connect",
      message: `cua mode needs a computer-use model from ${providers.join(", ")}; ${model.id} is not one`
    })
  }

  const init: CuaInit = {
    wsEndpoint: session.wsEndpoint,
    targetId: session.targetId,
    provider: model.provider,
    model: model.model,
    apiKey: Redacted.value(model.apiKey),
    ...(model.baseURL === undefined ? {} : { baseURL: model.baseURL }),
    viewport: options.viewport ?? defaultViewport,
    maxSteps: options.maxSteps ?? 10,
    ...(options.waitBetweenActionsMs === undefined ? {} : { waitBetweenActionsMs: options.waitBetweenActionsMs }),
    connectTimeoutMs,
    navigationTimeoutMs
  }
  // Interrupting the start (the limit below) terminates the worker, as releasing the layer does.
  const worker = yield* Isolated.spawn(entry, init).pipe(
    Effect.mapError((failure) => Errors.connectError(failure, session.wsEndpoint, model.provider)),
    Effect.timeoutOrElse({
      duration: connectTimeoutMs,
      orElse: () =>
        Effect.fail(
          new EndpointUnreachable({
            engine,
            action: "connect",
            endpoint: session.wsEndpoint,
            message: `the Stagehand cua worker did not attach to ${session.wsEndpoint} within ${connectTimeoutMs} ms`
          })
        )
    })
  )

  /** Set once the worker reported the browser connection closed: the worker lives on but cannot serve. */
  let closedBy: string | undefined

  const notConnected = (action: string): SwitchyardError =>
    closedBy !== undefined
      ? new CdpClosed({ engine, action, message: `${action}: the browser connection closed earlier (${closedBy})` })
      : new NotInitialized({
          engine,
          action,
          message: `${action}: the cua worker was stopped (an earlier call was interrupted or timed out); reconnect the engine`
        })

  const attemptOf = (step: Step, sideEffect = step.sideEffect): Errors.Attempt => ({
    action: step.action,
    timeoutMs: step.timeoutMs,
    provider: model.provider,
    sideEffect,
    ...(step.url === undefined ? {} : { url: step.url })
  })

  /** One worker call; a timeout interrupts it, which terminates the worker (the only way to stop a CUA task). */
  const call = <A>(step: Step, method: string, ...args: ReadonlyArray<unknown>): Effect.Effect<A, SwitchyardError> =>
    Effect.suspend(() => {
      if (closedBy !== undefined || !worker.alive()) return Effect.fail(notConnected(step.action))
      return worker.call<A>(method, ...args).pipe(
        Effect.mapError((failure) => Errors.toEngineError(failure, attemptOf(step))),
        Effect.timeoutOrElse({
          duration: step.timeoutMs,
          orElse: () =>
            Effect.fail(
              new Timeout({
                engine,
                action: step.action,
                timeoutMs: step.timeoutMs,
                sideEffect: step.sideEffect,
                message: `${step.action} did not finish within ${step.timeoutMs} ms; its worker was stopped`
              })
            )
        }),
        Effect.tapError((error) =>
          Effect.sync(() => {
            if (error._tag === "CdpClosed") closedBy = error.message
          })
        )
      )
    })

  const task = (instruction: string) =>
    Effect.gen(function* () {
      const step: Step = { action: instruction, timeoutMs: taskTimeoutMs, sideEffect: "possible" }
      const outcome = yield* call<TaskOutcome>(step, "execute", instruction)
      if (outcome.ok) {
        return { success: true, description: outcome.message || `done: ${instruction}` } satisfies ActResult
      }
      const sideEffect: SideEffect = outcome.actions > 0 ? "possible" : "none"
      if (outcome.error !== undefined) {
        return yield* Effect.fail(Errors.toEngineError(outcome.error, attemptOf(step, sideEffect)))
      }
      return yield* new ActionFailed({
        engine,
        action: instruction,
        sideEffect,
        message: `${instruction}: the computer-use model did not finish (${outcome.actions} actions): ${outcome.message}`
      })
    })

  /** An Action checked against the page before and after it runs (Verify.ts), in the worker. */
  const runAction = (input: Action) =>
    Effect.gen(function* () {
      const label = `${input.method} ${input.selector}`.trim()
      const step: Step = { action: label, timeoutMs: actionTimeoutMs, sideEffect: "possible" }
      const read: Step = { action: label, timeoutMs: pageTimeoutMs, sideEffect: "none" }
      const prepared = yield* call<Verify.Prepared>(read, "prepare", input)
      if (prepared._tag !== "ready") return yield* Effect.fail(Verify.failure(prepared, label)!)
      const action = { ...prepared.action, arguments: [...prepared.action.arguments] }
      const result = yield* call<StagehandActResult>(step, "act", action)
      if (!result.success) return yield* Effect.fail(Errors.failedAct(result.message, input.selector, label))
      const checked = yield* call<Verify.Checked>({ ...read, sideEffect: "possible" }, "check", action)
      const failure = Verify.failure(checked, label)
      if (failure !== undefined) return yield* Effect.fail(failure)
      return {
        success: true,
        description: `${input.method} ${input.description || input.selector}`,
        action: input,
        ...(checked._tag === "shown" && checked.target !== undefined ? { target: checked.target } : {})
      } satisfies ActResult
    })

  return Engine.of({
    kind: engine,
    mode: "cua",
    capabilities: caps,

    navigate: Effect.fn("StagehandEngine.navigate")(function* (url: string) {
      const label = `navigate ${url}`
      yield* requireAbsoluteUrl(engine, label, url)
      const step: Step = { action: label, timeoutMs: navigationTimeoutMs, sideEffect: "possible", url }
      return yield* Errors.landed(label, url, yield* call<Navigated>(step, "navigate", url))
    }),

    act: Effect.fn("StagehandEngine.act")(function* (input: Instruction.Said | Action) {
      return yield* Instruction.isSaid(input) ? task(input.text) : runAction(input)
    }),

    observe: Effect.fn("StagehandEngine.observe")(function* (instruction: Instruction.Said) {
      return yield* new Unsupported({
        engine,
        action: `observe ${instruction.text}`,
        message: "the stagehand engine in cua mode works from screenshots and cannot list page elements; use dom mode"
      })
    }),

    extract: Effect.fn("StagehandEngine.extract")(function* (_instruction: string, jsonSchema?: unknown) {
      const step: Step = { action: "extract", timeoutMs: pageTimeoutMs, sideEffect: "none" }
      const raw = yield* call<PageFacts.RawFacts>(step, "facts", maxTextChars)
      return yield* PageFacts.extracted(raw, jsonSchema, { engine, name: "the stagehand engine in cua mode" })
    }),

    screenshot: Effect.fn("StagehandEngine.screenshot")(function* (options?: ScreenshotOptions) {
      const step: Step = { action: "screenshot", timeoutMs: pageTimeoutMs, sideEffect: "none" }
      return yield* call<Uint8Array>(step, "screenshot", options?.fullPage ?? false)
    }),

    pageState: Effect.fn("StagehandEngine.pageState")(function* () {
      const step: Step = { action: "pageState", timeoutMs: pageTimeoutMs, sideEffect: "none" }
      const state = yield* call<{ url: string; title: string; scrollX: number; scrollY: number }>(step, "state")
      const now = yield* DateTime.now
      return { ...state, timestamp: DateTime.formatIso(now) }
    }),

    // A worker that cannot answer this within 2 s is stuck; the timeout ends it and the answer is false.
    connected: () =>
      Effect.suspend(() =>
        closedBy !== undefined || !worker.alive()
          ? Effect.succeed(false)
          : worker.call<boolean>("connected").pipe(
              Effect.timeout("2 seconds"),
              Effect.catch(() => Effect.succeed(false))
            )
      )
  })
})
