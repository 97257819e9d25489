/**
 * The vision engine: magnitude-core 0.3.1 driving the session's own page from screenshots, run in a worker thread
 * (Magnitude/Worker.ts, reached through Magnitude/Connection.ts) so that a timeout or an interruption really stops it.
 * Its hidden retries are turned off; its failures are mapped in Magnitude/Errors.ts.
 */
import { DateTime, Effect, Layer, Redacted } from "effect"
import { NotConfigured, Unsupported } from "../Errors/Engine.ts"
import type { SideEffect } from "../Errors/Fields.ts"
import { InvalidInput } from "../Errors/Page.ts"
import type { SwitchyardError } from "../Errors.ts"
import { BrowserSession } from "./BrowserSession.ts"
import { type Action, type ActResult, type Capabilities, Engine, type ScreenshotOptions } from "./Engine.ts"
import * as Instruction from "./Instruction.ts"
import { clientFor } from "./Magnitude/Client.ts"
import * as Connection from "./Magnitude/Connection.ts"
import { type Attempt, engine } from "./Magnitude/Errors.ts"
import type { ActDone, ActionDone, Init, WireAction } from "./Magnitude/Protocol.ts"
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

export const make = Effect.fn("MagnitudeEngine.make")(function* (options: MagnitudeEngineOptions = {}) {
  const resolved = yield* Model.resolve("magnitude", options.model).pipe(
    Effect.mapError(
      (e) => new NotConfigured({ engine, message: e.message, ...(e.cause === undefined ? {} : { cause: e.cause }) })
    )
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
  const { call, connected } = yield* Connection.connect(init, {
    provider: resolved.provider,
    ...(options.releaseTimeoutMs === undefined ? {} : { releaseTimeoutMs: options.releaseTimeoutMs })
  })

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

    act: Effect.fn("MagnitudeEngine.act")(function* (input: Instruction.Said | Action) {
      if (!Instruction.isSaid(input)) {
        const label = `${input.method} ${input.selector}`.trim()
        const wire: WireAction = { ...input, arguments: [...input.arguments] }
        const done = yield* call<ActionDone>(
          at(label, init.limits.elementWaitMs + actionTimeoutMs + 5_000, "possible"),
          "runAction",
          wire
        )
        return {
          success: true,
          description: done.description,
          action: input,
          ...(done.target === undefined ? {} : { target: done.target })
        } satisfies ActResult
      }
      const { text } = input
      if (text.trim() === "") {
        return yield* new InvalidInput({ engine, action: "act", field: "instruction", message: "empty instruction" })
      }
      const done = yield* call<ActDone>(at(text, options.actTimeoutMs ?? 180_000, "possible"), "act", text)
      const reasoning = done.reasoning === "" ? "" : `: ${done.reasoning}`
      return {
        success: true,
        description: `${text} (${done.actions} actions in ${done.turns} model turns)${reasoning}`
      } satisfies ActResult
    }),

    observe: (instruction: Instruction.Said) =>
      Effect.fail(
        new Unsupported({
          engine,
          action: `observe ${instruction.text}`,
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

    connected: () => Effect.sync(connected)
  })
})

export const layer = (options: MagnitudeEngineOptions = {}): Layer.Layer<Engine, SwitchyardError, BrowserSession> =>
  Layer.effect(Engine, make(options))
