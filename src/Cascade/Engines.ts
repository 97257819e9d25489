/**
 * The engine registry: turns a cascade level into the engine Layer to connect, or says why that level cannot run
 * here (no model credentials, no person to take over) so the cascade skips it without a network call.
 */
import { Context, Effect, Layer } from "effect"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as MagnitudeEngine from "../Engine/MagnitudeEngine.ts"
import * as Model from "../Engine/Model.ts"
import * as PlaywrightEngine from "../Engine/PlaywrightEngine.ts"
import type { StagehandEngineOptions } from "../Engine/Stagehand/Options.ts"
import * as StagehandEngine from "../Engine/StagehandEngine.ts"
import * as EngineId from "../EngineId.ts"
import { NotConfigured } from "../Errors/Engine.ts"
import { idOf, type Level } from "./Policy.ts"

export interface EnginesOptions {
  /** Models and credentials for the LLM engines (explicit config; the environment fills the rest). */
  readonly model?: Model.ModelConfig
  /** Per-engine options beyond the model, e.g. shorter limits in tests. */
  readonly stagehand?: Omit<StagehandEngineOptions, "mode" | "model">
  readonly magnitude?: Omit<MagnitudeEngine.MagnitudeEngineOptions, "model">
  /** The model-free level's limits, e.g. how long a target that is not there yet is waited for. */
  readonly playwright?: PlaywrightEngine.PlaywrightEngineOptions
  /** The session's person over VNC, when the session has a VNC display. */
  readonly human?: EngineSpec
}

/** Every level a policy may name, by its label: each resolved once, on first use. */
const levels: ReadonlyArray<Level> = [
  { engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 0 },
  { engine: "stagehand", mode: "dom", retryCount: 0, timeoutPerAttemptMs: 0 },
  { engine: "stagehand", mode: "cua", retryCount: 0, timeoutPerAttemptMs: 0 },
  { engine: "magnitude", retryCount: 0, timeoutPerAttemptMs: 0 },
  { engine: "human", retryCount: 0, timeoutPerAttemptMs: 0 }
]

export const make = Effect.fnUntraced(function* (options: EnginesOptions = {}) {
  const model = options.model ?? {}
  const playwright: EngineSpec = {
    id: { kind: "playwright" },
    capabilities: PlaywrightEngine.capabilities,
    layer: PlaywrightEngine.layer(options.playwright),
    warm: PlaywrightEngine.warm
  }
  // Layers are built once per level, so a connect reuses the same Layer value.
  const stagehand = {
    dom: StagehandEngine.layer({ ...options.stagehand, mode: "dom", model }),
    cua: StagehandEngine.layer({ ...options.stagehand, mode: "cua", model })
  }
  const magnitude = MagnitudeEngine.layer({ ...options.magnitude, model })
  const specFor = (level: Level): Effect.Effect<EngineSpec, NotConfigured> => {
    switch (level.engine) {
      case "playwright":
        return Effect.succeed(playwright)
      case "stagehand": {
        const mode = level.mode ?? "dom"
        return Model.resolve(mode === "dom" ? "stagehandDom" : "stagehandCua", model).pipe(
          Effect.as<EngineSpec>({
            id: { kind: "stagehand", mode },
            capabilities: StagehandEngine.capabilities[mode],
            layer: stagehand[mode]
          })
        )
      }
      case "magnitude":
        return Model.resolve("magnitude", model).pipe(
          Effect.as<EngineSpec>({
            id: { kind: "magnitude" },
            capabilities: MagnitudeEngine.capabilities,
            layer: magnitude
          })
        )
      case "human":
        return options.human
          ? Effect.succeed(options.human)
          : Effect.fail(
              new NotConfigured({
                engine: "human",
                message:
                  "human takeover is not set up on this service (start it with SWITCHYARD_HUMAN=on; it needs a VNC display)"
              })
            )
    }
  }
  // Credentials and models do not change while the service runs: each level is resolved once, when first asked for.
  const resolved: ReadonlyMap<string, Effect.Effect<EngineSpec, NotConfigured>> = new Map(
    yield* Effect.forEach(levels, (level) =>
      Effect.cached(specFor(level)).pipe(Effect.map((spec) => [EngineId.label(idOf(level)), spec] as const))
    )
  )
  return {
    specFor: (level: Level) =>
      (resolved.get(EngineId.label(idOf(level))) ?? specFor(level)).pipe(
        Effect.withSpan("Engines.specFor", { attributes: { engine: EngineId.label(idOf(level)) } })
      )
  }
})

/** Declared after `make`, which its layer statics call while the class is being defined. */
export class Engines extends Context.Service<
  Engines,
  { readonly specFor: (level: Level) => Effect.Effect<EngineSpec, NotConfigured> }
>()("switchyard/Engines") {
  static readonly layer = (options: EnginesOptions = {}) => Layer.effect(Engines, make(options))
}
