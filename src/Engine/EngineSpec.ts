/**
 * How the Sandbox connects an engine: which engine it is, what it can serve (known before connecting, for routing
 * and masking), and the Layer that connects it to a `BrowserSession`.
 */
import type { Effect, Layer } from "effect"
import type { EngineId } from "../EngineId.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { BrowserSession } from "./BrowserSession.ts"
import type { Capabilities, Engine } from "./Engine.ts"

export interface EngineSpec {
  readonly id: EngineId
  readonly capabilities: Capabilities
  readonly layer: Layer.Layer<Engine, SwitchyardError, BrowserSession>
  /** Readies what connecting needs but the browser does not (the SDK's modules), while the browser starts. */
  readonly warm?: Effect.Effect<void>
}
