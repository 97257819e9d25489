/** What a Stagehand engine can be told: its mode, model and limits (both modes read these). */
import type { EngineMode } from "../../EngineId.ts"
import type * as Model from "../Model.ts"

export interface StagehandEngineOptions {
  /** Default `dom`. */
  readonly mode?: EngineMode
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

/** The limits with their defaults (as documented above) filled in: both modes read them from here. */
export const limits = (options: StagehandEngineOptions) => ({
  actionTimeoutMs: options.actionTimeoutMs ?? 60_000,
  taskTimeoutMs: options.taskTimeoutMs ?? 180_000,
  navigationTimeoutMs: options.navigationTimeoutMs ?? 30_000,
  pageTimeoutMs: options.pageTimeoutMs ?? 10_000,
  connectTimeoutMs: options.connectTimeoutMs ?? 15_000,
  releaseTimeoutMs: options.releaseTimeoutMs ?? 5_000,
  maxTextChars: options.maxTextChars ?? 20_000
})
