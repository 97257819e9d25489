/**
 * The engine registry: turns a cascade level into the engine Layer to connect, or says why that level cannot run
 * here (no model credentials, no VNC for a person) so the cascade skips it without a network call.
 */
import { Context, Effect, Layer } from "effect"
import type { NotConfigured } from "../Engine/EngineError.ts"
import { NotConfigured as NotConfiguredError } from "../Engine/EngineError.ts"
import type * as Model from "../Engine/Model.ts"
import * as PlaywrightEngine from "../Engine/PlaywrightEngine.ts"
import type { EngineSpec } from "../Sandbox/Sandbox.ts"
import type { Level } from "./Policy.ts"

export interface EnginesOptions {
  readonly model?: Model.ModelConfig
}

export class Engines extends Context.Service<
  Engines,
  { readonly specFor: (level: Level) => Effect.Effect<EngineSpec, NotConfigured> }
>()("switchyard/Engines") {
  static readonly layerWith = (_options: EnginesOptions = {}) =>
    Layer.succeed(
      Engines,
      Engines.of({
        specFor: (level) => {
          switch (level.engine) {
            case "playwright":
              return Effect.succeed(playwright)
            default:
              return Effect.fail(
                new NotConfiguredError({ engine: level.engine, message: `the ${level.engine} engine is not available` })
              )
          }
        }
      })
    )

  static readonly layer = Engines.layerWith()
}

const playwright: EngineSpec = {
  kind: "playwright",
  capabilities: PlaywrightEngine.capabilities,
  layer: PlaywrightEngine.layer
}
