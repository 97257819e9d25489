/**
 * The model-driven engine: Stagehand 3.7 attached to the session's running Chromium. `dom` mode reads the
 * accessibility tree (Stagehand/Dom.ts); `cua` mode drives a computer-use model from screenshots (Stagehand/Cua.ts).
 */
import { Layer } from "effect"
import type { BrowserSession } from "../Sandbox/Browser.ts"
import { type Capabilities, Engine } from "./Engine.ts"
import type { EngineError } from "./EngineError.ts"
import type * as Model from "./Model.ts"
import * as Cua from "./Stagehand/Cua.ts"
import * as Dom from "./Stagehand/Dom.ts"

export type StagehandMode = "dom" | "cua"

export interface StagehandEngineOptions {
  /** Default `dom`. */
  readonly mode?: StagehandMode
  /** Which model and credentials; resolved when the layer is built, so an unconfigured engine fails before any call. */
  readonly model?: Model.ModelConfig
  /** Limit for one `act`/`observe`/`extract` (its model calls and page work); default 60 s. */
  readonly actionTimeoutMs?: number
  /** cua: limit for one instruction (several model turns and actions); default 180 s. */
  readonly taskTimeoutMs?: number
  /** Limit for `navigate`; default 30 s. */
  readonly navigationTimeoutMs?: number
  /** Limit for screenshots and page-state reads; default 10 s. */
  readonly pageTimeoutMs?: number
  /** Limit for attaching to the browser (and, in cua mode, starting the worker); default 15 s. */
  readonly connectTimeoutMs?: number
  /** Bound on disconnecting when the layer is released; default 5 s. */
  readonly releaseTimeoutMs?: number
  /** dom: how long Stagehand waits for the DOM to settle around an action (its default ≈ 500 ms). */
  readonly domSettleTimeoutMs?: number
  /** dom with an OpenAI model: chat completions (what OpenAI-compatible servers speak, the default) or responses. */
  readonly openaiEndpointFormat?: "chat" | "responses"
  /** cua: the viewport the page gets and the model is told; default 1288×711, what Stagehand's CUA clients assume. */
  readonly viewport?: { readonly width: number; readonly height: number }
  /** cua: model turns per instruction; default 10. */
  readonly maxSteps?: number
  /** cua: pause after each action; default Stagehand's 500 ms. */
  readonly waitBetweenActionsMs?: number
  /** cua: cap on the visible text the page-facts `extract` returns; default 20,000 characters. */
  readonly maxTextChars?: number
}

export const capabilities: Record<StagehandMode, Capabilities> = {
  dom: { instructions: "natural-language", actions: true, extract: "any-schema", observe: true, vision: false },
  // Computer-use models act from screenshots and cannot fill a schema or list elements: extract serves page facts
  // (as the playwright engine does) and observe is unsupported.
  cua: { instructions: "natural-language", actions: true, extract: "page-facts", observe: false, vision: true }
}

export const layerWith = (options: StagehandEngineOptions = {}): Layer.Layer<Engine, EngineError, BrowserSession> =>
  Layer.effect(
    Engine,
    options.mode === "cua" ? Cua.make(options, capabilities.cua) : Dom.make(options, capabilities.dom)
  )

export const layer: Layer.Layer<Engine, EngineError, BrowserSession> = layerWith()
