import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import * as Model from "../../src/Engine/Model.ts"

const withEnv = (env: Record<string, string>) => Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))

describe("Model.resolve", () => {
  it.effect("defaults to openai/gpt-4o with the OpenAI key from the environment", () =>
    Effect.gen(function* () {
      const m = yield* Model.resolve("stagehandDom").pipe(withEnv({ OPENAI_API_KEY: "sk-env" }))
      assert.strictEqual(m.id, "openai/gpt-4o")
      assert.strictEqual(Redacted.value(m.apiKey), "sk-env")
      assert.notInclude(String(m.apiKey), "sk-env", "the key does not print")
      assert.isUndefined(m.baseURL)
    })
  )

  it.effect("explicit config wins over the environment, per engine", () =>
    Effect.gen(function* () {
      const env = withEnv({
        SWITCHYARD_MODEL: "openai/gpt-4.1",
        SWITCHYARD_MAGNITUDE_MODEL: "openai/gpt-4.1-mini",
        OPENAI_API_KEY: "sk-env",
        ANTHROPIC_API_KEY: "ak"
      })
      const config = { stagehandDom: "anthropic/claude-sonnet-4-5", apiKeys: { openai: Redacted.make("sk-explicit") } }
      const dom = yield* Model.resolve("stagehandDom", config).pipe(env)
      const magnitude = yield* Model.resolve("magnitude", config).pipe(env)
      const fromDefault = yield* Model.resolve("magnitude", { model: "openai/o3" }).pipe(
        withEnv({ OPENAI_API_KEY: "k" })
      )
      assert.strictEqual(dom.id, "anthropic/claude-sonnet-4-5")
      assert.strictEqual(Redacted.value(dom.apiKey), "ak")
      assert.strictEqual(magnitude.id, "openai/gpt-4.1-mini")
      assert.strictEqual(Redacted.value(magnitude.apiKey), "sk-explicit")
      assert.strictEqual(fromDefault.id, "openai/o3")
    })
  )

  it.effect("computer use defaults to a computer-use model of the chosen provider", () =>
    Effect.gen(function* () {
      const openai = yield* Model.resolve("stagehandCua").pipe(withEnv({ OPENAI_API_KEY: "k" }))
      const anthropic = yield* Model.resolve("stagehandCua", { model: "anthropic/claude-opus-4" }).pipe(
        withEnv({ ANTHROPIC_API_KEY: "k" })
      )
      assert.strictEqual(openai.id, "openai/computer-use-preview")
      assert.strictEqual(anthropic.provider, "anthropic")
    })
  )

  it.effect("a base URL points a provider at a gateway; a keyless local server is allowed", () =>
    Effect.gen(function* () {
      const m = yield* Model.resolve("magnitude").pipe(withEnv({ SWITCHYARD_OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }))
      assert.strictEqual(m.baseURL, "http://127.0.0.1:9/v1")
      assert.strictEqual(Redacted.value(m.apiKey), "not-needed")
    })
  )

  it.effect("no key and no base URL is a non-retryable not_configured naming what to set", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Model.resolve("stagehandDom").pipe(withEnv({})))
      assert.strictEqual(error.type, "not_configured")
      assert.isFalse(error.retryable)
      assert.include(error.message, "OPENAI_API_KEY")
    })
  )

  it.effect("a model without a provider prefix is rejected clearly", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Model.resolve("magnitude", { model: "gpt-4o" }).pipe(withEnv({ OPENAI_API_KEY: "k" }))
      )
      assert.strictEqual(error.type, "not_configured")
      assert.include(error.message, "provider/model")
    })
  )
})
