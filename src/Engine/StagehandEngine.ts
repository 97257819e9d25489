/**
 * The model-driven engine: Stagehand 3.7 attached to the session's running Chromium. `dom` mode reads the
 * accessibility tree (Stagehand/Dom.ts); `cua` mode drives a computer-use model from screenshots (Stagehand/Cua.ts).
 */
import { Layer } from "effect"
import type { EngineMode } from "../EngineId.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { BrowserSession } from "./BrowserSession.ts"
import { type Capabilities, Engine } from "./Engine.ts"
import * as Cua from "./Stagehand/Cua.ts"
import * as Dom from "./Stagehand/Dom.ts"
import type { StagehandEngineOptions } from "./Stagehand/Options.ts"

export const capabilities: Record<EngineMode, Capabilities> = {
  dom: { instructions: "natural-language", actions: true, extract: "any-schema", observe: true, vision: false },
  // Computer-use models act from screenshots and cannot fill a schema or list elements: extract serves page facts
  // (as the playwright engine does) and observe is unsupported.
  cua: { instructions: "natural-language", actions: true, extract: "page-facts", observe: false, vision: true }
}

export const layer = (options: StagehandEngineOptions = {}): Layer.Layer<Engine, SwitchyardError, BrowserSession> =>
  Layer.effect(
    Engine,
    options.mode === "cua" ? Cua.make(options, capabilities.cua) : Dom.make(options, capabilities.dom)
  )
