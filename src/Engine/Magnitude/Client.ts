/**
 * The model client Magnitude talks to: chosen from the resolved model on the engine's side (any provider with a base
 * URL is spoken to as OpenAI-compatible), and turned into magnitude-core's and BAML's client options in the worker.
 */
import { Effect } from "effect"
import type { LLMClient } from "magnitude-core"
import { NotConfigured } from "../../Errors/Engine.ts"
import type * as Model from "../Model.ts"
import type { LlmClient } from "./Protocol.ts"

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
              engine: "magnitude",
              message: `magnitude cannot reach ${model.id}: its providers are openai, anthropic and google, or any OpenAI-compatible server given a base URL (SWITCHYARD_${model.provider.toUpperCase()}_BASE_URL)`
            })
          )
        : Effect.succeed({ provider: "openai-generic", ...common, baseUrl: model.baseURL })
  }
}

/** Magnitude's own client config; its options decide the agent's defaults (Claude gets a 1024×768 virtual screen). */
export const magnitudeClient = (llm: LlmClient): LLMClient =>
  ({
    provider: llm.provider,
    options: {
      model: llm.model,
      apiKey: llm.apiKey,
      temperature: llm.temperature,
      ...(llm.baseUrl === undefined ? {} : { baseUrl: llm.baseUrl })
    }
  }) as LLMClient

/**
 * The BAML client options magnitude-core would register (its `convertToBamlClientOptions`), registered again without
 * its `DefaultRetryPolicy` (5 retries, exponential from 500 ms: ≈ 25 s of hidden retries per failing call).
 */
export const bamlOptions = (llm: LlmClient): Record<string, unknown> => {
  const base = llm.baseUrl === undefined ? {} : { base_url: llm.baseUrl }
  switch (llm.provider) {
    case "openai-generic":
      return {
        ...base,
        api_key: llm.apiKey,
        model: llm.model,
        temperature: llm.temperature,
        headers: { "HTTP-Referer": "https://magnitude.run", "X-Title": "Magnitude" }
      }
    case "openai":
      return { ...base, api_key: llm.apiKey, model: llm.model, temperature: llm.temperature }
    case "anthropic":
      // Magnitude turns prompt caching on for Claude models and marks memory with cache_control metadata.
      return {
        ...base,
        api_key: llm.apiKey,
        model: llm.model,
        temperature: llm.temperature,
        ...(llm.model.includes("claude")
          ? { allowed_role_metadata: "all", headers: { "anthropic-beta": "prompt-caching-2024-07-31" } }
          : {})
      }
    case "google-ai":
      return { ...base, api_key: llm.apiKey, model: llm.model, generationConfig: { temperature: llm.temperature } }
  }
}
