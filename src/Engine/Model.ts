/**
 * Which model each LLM engine uses and with which credentials. Resolution per seed 002: explicit configuration,
 * then the environment (SWITCHYARD_MODEL, per-engine SWITCHYARD_*_MODEL, provider keys and base URLs), then
 * `openai/gpt-4o`. The environment's names are declared here and read through `Config` (here and by the service's
 * configuration); keys are `Redacted` from the moment they are read until an SDK needs them.
 */
import { Config, Effect, Option, Redacted } from "effect"
import { NotConfigured } from "../Errors/Engine.ts"

/** The model-driven engines, each of which may use its own model. */
export type ModelRole = "stagehandDom" | "stagehandCua" | "magnitude"

export interface ModelConfig {
  /** `provider/model` used where no per-engine model is set. */
  readonly model?: string | undefined
  readonly stagehandDom?: string | undefined
  readonly stagehandCua?: string | undefined
  readonly magnitude?: string | undefined
  /** API keys by provider (`openai`, `anthropic`, `google`, …). */
  readonly apiKeys?: Readonly<Record<string, Redacted.Redacted<string>>>
  /** Base URLs by provider: a gateway or a local OpenAI-compatible server. */
  readonly baseURLs?: Readonly<Record<string, string>>
}

export interface ResolvedModel {
  readonly role: ModelRole
  readonly provider: string
  /** The model name without its provider prefix. */
  readonly model: string
  /** `provider/model`, the form Stagehand takes. */
  readonly id: string
  readonly apiKey: Redacted.Redacted<string>
  readonly baseURL?: string
}

export const defaultModel = "openai/gpt-4o"
/** Computer-use needs a model trained for it: OpenAI's unless the chosen provider is Anthropic. */
const defaultCuaModel = (provider: string) =>
  provider === "anthropic" ? "anthropic/claude-sonnet-4-5-20250929" : "openai/computer-use-preview"

/** The environment variable naming each model setting. */
export const modelEnv: Record<"model" | ModelRole, string> = {
  model: "SWITCHYARD_MODEL",
  stagehandDom: "SWITCHYARD_STAGEHAND_MODEL",
  stagehandCua: "SWITCHYARD_CUA_MODEL",
  magnitude: "SWITCHYARD_MAGNITUDE_MODEL"
}

/** Provider-native key variables, after the SWITCHYARD_<PROVIDER>_API_KEY form. */
const keyEnv: Record<string, ReadonlyArray<string>> = {
  openai: ["OPENAI_API_KEY"],
  anthropic: ["ANTHROPIC_API_KEY"],
  google: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"]
}

/** Providers whose keys have names of their own. */
export const knownProviders: ReadonlyArray<string> = Object.keys(keyEnv)

const upper = (provider: string) => provider.toUpperCase().replaceAll(/[^A-Z0-9]/g, "_")

/** Where a provider's API key may be set, first one wins. */
export const apiKeyEnv = (provider: string): ReadonlyArray<string> => [
  `SWITCHYARD_${upper(provider)}_API_KEY`,
  ...(keyEnv[provider] ?? [`${upper(provider)}_API_KEY`])
]

/** Where a provider's base URL may be set, first one wins. */
export const baseURLEnv = (provider: string): ReadonlyArray<string> => [
  `SWITCHYARD_${upper(provider)}_BASE_URL`,
  `${upper(provider)}_BASE_URL`
]

const optionalString = (name: string) =>
  Config.option(Config.String(name)).pipe(Effect.map(Option.filter((s) => s.trim() !== "")))
/** A key is `Redacted` from the moment it is read; a blank one counts as unset. */
const optionalSecret = (name: string) =>
  Config.option(Config.Redacted(name)).pipe(Effect.map(Option.filter((key) => Redacted.value(key).trim() !== "")))

const firstSome = <A, E, R>(effects: ReadonlyArray<Effect.Effect<Option.Option<A>, E, R>>) =>
  Effect.gen(function* () {
    for (const effect of effects) {
      const value = yield* effect
      if (Option.isSome(value)) return value
    }
    return Option.none<A>()
  })

const split = (id: string, role: ModelRole) => {
  const slash = id.indexOf("/")
  if (slash <= 0 || slash === id.length - 1) {
    return Effect.fail(
      new NotConfigured({ message: `model "${id}" for ${role} must be written provider/model, e.g. ${defaultModel}` })
    )
  }
  return Effect.succeed({ provider: id.slice(0, slash).toLowerCase(), model: id.slice(slash + 1) })
}

/** Resolves the model, key and base URL for one engine; a missing key is a non-retryable `not_configured`. */
export const resolve = Effect.fnUntraced(
  function* (role: ModelRole, config: ModelConfig = {}) {
    const base = Option.getOrElse(
      yield* firstSome([Effect.succeed(Option.fromNullishOr(config.model)), optionalString(modelEnv.model)]),
      () => defaultModel
    )
    const chosen = yield* firstSome([
      Effect.succeed(Option.fromNullishOr(config[role])),
      optionalString(modelEnv[role])
    ])
    const id = Option.getOrElse(chosen, () =>
      role === "stagehandCua" ? defaultCuaModel(base.split("/")[0]!.toLowerCase()) : base
    )
    const { provider, model } = yield* split(id, role)
    const baseURL = yield* firstSome([
      Effect.succeed(Option.fromNullishOr(config.baseURLs?.[provider])),
      ...baseURLEnv(provider).map(optionalString)
    ])
    const keyNames = apiKeyEnv(provider)
    const key = yield* firstSome([
      Effect.succeed(Option.fromNullishOr(config.apiKeys?.[provider])),
      ...keyNames.map(optionalSecret)
    ])
    if (Option.isNone(key) && Option.isNone(baseURL)) {
      return yield* new NotConfigured({
        message: `${role} uses ${id} but no ${provider} API key is set (set ${keyNames.join(" or ")}, or a base URL for a keyless local server)`
      })
    }
    return {
      role,
      provider,
      model,
      id: `${provider}/${model}`,
      // A keyless local OpenAI-compatible server still wants some bearer value.
      apiKey: Option.getOrElse(key, () => Redacted.make("not-needed")),
      ...(Option.isSome(baseURL) ? { baseURL: baseURL.value } : {})
    } satisfies ResolvedModel
  },
  Effect.mapError((e) =>
    e instanceof NotConfigured ? e : new NotConfigured({ message: `model configuration: ${String(e)}`, cause: e })
  )
)
