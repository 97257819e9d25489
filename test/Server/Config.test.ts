/**
 * The service's configuration: defaults ← file ← environment ← flags, every environment name in use, errors that
 * name the bad key and value, on/off spellings, and secrets that never show when the configuration is printed.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inspect } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Inspectable, Logger, Redacted } from "effect"
import * as Policy from "../../src/Cascade/Policy.ts"
import * as Config from "../../src/Server/Config.ts"
import { defaults } from "../../src/Server/Defaults.ts"

const dir = mkdtempSync(join(tmpdir(), "switchyard-config-"))
let files = 0
/** A config file holding `json`, by path. */
const file = (json: unknown) => {
  const path = join(dir, `config-${files++}.json`)
  writeFileSync(path, JSON.stringify(json))
  return path
}
const failure = (options: Parameters<typeof Config.resolve>[0]) =>
  Effect.flip(Config.resolve(options)).pipe(Effect.map((error) => error.message))

describe("Config.resolve", () => {
  it.effect("with nothing set, every setting has its default", () =>
    Effect.gen(function* () {
      const config = yield* Config.resolve({ env: {} })
      assert.strictEqual(config.logDir, defaults.logDir)
      assert.deepStrictEqual(config.sessions, defaults.sessions)
      assert.deepStrictEqual(config.urls, { ...defaults.urls, privateNetworks: undefined })
      assert.deepStrictEqual(config.http, { ...defaults.http, token: undefined })
      assert.deepStrictEqual(config.artifacts, defaults.artifacts)
      assert.strictEqual(config.cascade, Policy.defaultPolicy)
      assert.strictEqual(config.fallback, true)
      assert.strictEqual(config.browser.provider, "local")
      assert.strictEqual(config.browser.headless, true)
      assert.strictEqual(config.browser.adspower.url, defaults.browser.adspowerUrl)
      assert.deepInclude(config.human, { enabled: false, timeoutMs: 120_000, host: "127.0.0.1" })
      assert.strictEqual(config.model.model, "openai/gpt-4o")
      assert.strictEqual(config.limits.maxArgumentBytes, 262_144)
      assert.isAtLeast(config.sessions.maxBrowsers, 2)
    })
  )

  it.effect("defaults ← file ← environment ← flags, setting by setting", () =>
    Effect.gen(function* () {
      const path = file({
        logDir: "/file",
        sessions: { maxBrowsers: 2, queue: 3, idleTimeoutMs: 10 },
        http: { port: 9000, host: "0.0.0.0" },
        model: { apiKeys: { openai: "sk-file", mistral: "mk-file" }, stagehandDom: "anthropic/claude" }
      })
      const env = {
        SWITCHYARD_LOG_DIR: "/env",
        SWITCHYARD_MAX_BROWSERS: "5",
        SWITCHYARD_QUEUE: "4",
        OPENAI_API_KEY: "sk-env"
      }
      const config = yield* Config.resolve({ file: path, env, flags: { sessions: { maxBrowsers: 7 } } })
      assert.strictEqual(config.logDir, "/env")
      assert.deepStrictEqual(config.sessions, {
        ...defaults.sessions,
        maxBrowsers: 7,
        queue: 4,
        idleTimeoutMs: 10
      })
      assert.deepStrictEqual(config.http, { ...defaults.http, host: "0.0.0.0", port: 9000, token: undefined })
      assert.strictEqual(config.model.stagehandDom, "anthropic/claude")
      assert.strictEqual(Redacted.value(config.model.apiKeys!.openai!), "sk-env")
      assert.strictEqual(Redacted.value(config.model.apiKeys!.mistral!), "mk-file")
      // SWITCHYARD_CONFIG names the file when no flag does.
      const named = yield* Config.resolve({ env: { SWITCHYARD_CONFIG: path } })
      assert.strictEqual(named.logDir, "/file")
    })
  )

  it.effect("every environment name in use today", () =>
    Effect.gen(function* () {
      const config = yield* Config.resolve({
        env: {
          CLAW_LOG_DIR: "/claw",
          CHROME_PATH: "/usr/bin/chromium",
          SWITCHYARD_PROFILE_DIR: "/profile",
          SWITCHYARD_IDLE_TIMEOUT_MS: "0",
          SWITCHYARD_MAX_PENDING_PER_SESSION: "8",
          SWITCHYARD_LEASE_TIMEOUT_MS: "1000",
          SWITCHYARD_CASCADE: "/policy.json",
          SWITCHYARD_FALLBACK: "off",
          SWITCHYARD_URL_SCHEMES: "http, https,file",
          SWITCHYARD_PRIVATE_NETWORKS: "no",
          SWITCHYARD_MAX_ARGUMENT_BYTES: "4096",
          SWITCHYARD_SCREENSHOTS: "0",
          SWITCHYARD_HUMAN: "on",
          SWITCHYARD_HUMAN_TIMEOUT_MS: "60000",
          SWITCHYARD_VNC_HOST: "0.0.0.0",
          SWITCHYARD_VNC_PUBLIC_HOST: "vnc.example.test",
          SWITCHYARD_MODEL: "anthropic/claude-sonnet-4-5",
          SWITCHYARD_STAGEHAND_MODEL: "openai/gpt-4.1",
          SWITCHYARD_CUA_MODEL: "openai/computer-use-preview",
          SWITCHYARD_MAGNITUDE_MODEL: "openai/gpt-4.1-mini",
          ANTHROPIC_API_KEY: "ak",
          SWITCHYARD_OPENAI_API_KEY: "sk-switchyard",
          OPENAI_API_KEY: "sk-native",
          SWITCHYARD_OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
          OTEL_SERVICE_NAME: "sy",
          SWITCHYARD_REPLAY: "off",
          SWITCHYARD_REPLAY_TTL_MS: "3600000"
        }
      })
      assert.strictEqual(config.logDir, "/claw")
      assert.deepStrictEqual(config.replay, { enabled: false, ttlMs: 3_600_000 })
      assert.deepInclude(config.browser, { chromePath: "/usr/bin/chromium", profileDir: "/profile", provider: "local" })
      assert.deepInclude(config.sessions, { idleTimeoutMs: 0, maxPendingPerSession: 8, leaseTimeoutMs: 1000 })
      assert.strictEqual(config.cascade, "/policy.json")
      assert.strictEqual(config.fallback, false)
      assert.deepStrictEqual(config.urls, { schemes: ["http", "https", "file"], privateNetworks: false })
      assert.strictEqual(config.limits.maxArgumentBytes, 4096)
      assert.strictEqual(config.artifacts.screenshots, false)
      assert.deepStrictEqual(config.human, {
        enabled: true,
        timeoutMs: 60_000,
        host: "0.0.0.0",
        publicHost: "vnc.example.test"
      })
      assert.deepInclude(config.model, {
        model: "anthropic/claude-sonnet-4-5",
        stagehandDom: "openai/gpt-4.1",
        stagehandCua: "openai/computer-use-preview",
        magnitude: "openai/gpt-4.1-mini"
      })
      assert.strictEqual(Redacted.value(config.model.apiKeys!.anthropic!), "ak")
      assert.strictEqual(Redacted.value(config.model.apiKeys!.openai!), "sk-switchyard")
      assert.deepStrictEqual(config.model.baseURLs, { openai: "http://127.0.0.1:9/v1" })
      assert.deepStrictEqual(config.telemetry, { otlpUrl: "http://127.0.0.1:4318", serviceName: "sy" })

      const attach = yield* Config.resolve({ env: { SWITCHYARD_CDP_URL: "http://127.0.0.1:9222" } })
      assert.deepInclude(attach.browser, { provider: "cdp", cdpUrl: "http://127.0.0.1:9222" })
      const ads = yield* Config.resolve({
        env: {
          ADSPOWER_API_URL: "http://127.0.0.1:1",
          SWITCHYARD_ADSPOWER_USER_ID: "u1",
          SWITCHYARD_ADSPOWER_SERIAL: "7"
        }
      })
      assert.strictEqual(ads.browser.provider, "adspower")
      assert.deepInclude(ads.browser.adspower, { url: "http://127.0.0.1:1", userId: "u1", serialNumber: "7" })
      const named = yield* Config.resolve({ env: { SWITCHYARD_BROWSER: "local", SWITCHYARD_CDP_URL: "http://x" } })
      assert.strictEqual(named.browser.provider, "local")
      const otlp = yield* Config.resolve({
        env: { SWITCHYARD_OTLP_URL: "http://a", OTEL_EXPORTER_OTLP_ENDPOINT: "http://b" }
      })
      assert.strictEqual(otlp.telemetry.otlpUrl, "http://a")
      const blank = yield* Config.resolve({ env: { SWITCHYARD_LOG_DIR: "", CLAW_LOG_DIR: "/claw" } })
      assert.strictEqual(blank.logDir, "/claw")
    })
  )

  it.effect("the page model's settings: dialogs, upload roots, downloads; a bad dialogs mode names its variable", () =>
    Effect.gen(function* () {
      const none = yield* Config.resolve({ env: {} })
      assert.deepStrictEqual(none.dialogs, { mode: "agent", beforeunload: "accept" })
      assert.deepStrictEqual(none.uploads.roots, [process.cwd()])
      assert.deepStrictEqual(none.downloads, defaults.downloads)
      const set = yield* Config.resolve({
        env: {
          SWITCHYARD_DIALOGS: "dismiss",
          SWITCHYARD_DIALOGS_BEFOREUNLOAD: "agent",
          SWITCHYARD_UPLOAD_ROOTS: "/srv/cv, /srv/letters",
          SWITCHYARD_DOWNLOAD_DIR: "/srv/downloads",
          SWITCHYARD_DOWNLOAD_MAX_BYTES: "1048576"
        }
      })
      assert.deepStrictEqual(set.dialogs, { mode: "dismiss", beforeunload: "agent" })
      assert.deepStrictEqual(set.uploads.roots, ["/srv/cv", "/srv/letters"])
      assert.deepStrictEqual(set.downloads, { dir: "/srv/downloads", maxBytes: 1_048_576 })
      const bad = yield* failure({ env: { SWITCHYARD_DIALOGS: "ignore" } })
      assert.include(bad, "SWITCHYARD_DIALOGS")
      assert.include(bad, "ignore")
    })
  )

  it.effect("on/off: 1|true|on|yes and 0|false|off|no in any case; anything else names the variable", () =>
    Effect.gen(function* () {
      for (const [spelling, value] of [
        ...["1", "true", "on", "yes", "TRUE", "On", "Yes"].map((s) => [s, true] as const),
        ...["0", "false", "off", "no", "FALSE", "Off", "NO"].map((s) => [s, false] as const)
      ]) {
        const config = yield* Config.resolve({ env: { SWITCHYARD_HEADLESS: spelling, SWITCHYARD_HUMAN: spelling } })
        assert.strictEqual(config.browser.headless, value, spelling)
        assert.strictEqual(config.human.enabled, value, spelling)
      }
      for (const name of [
        "SWITCHYARD_HEADLESS",
        "SWITCHYARD_FALLBACK",
        "SWITCHYARD_PRIVATE_NETWORKS",
        "SWITCHYARD_SCREENSHOTS",
        "SWITCHYARD_HUMAN",
        "SWITCHYARD_REPLAY"
      ]) {
        assert.strictEqual(yield* failure({ env: { [name]: "maybe" } }), `configuration ${name}: "maybe" is not on/off`)
      }
    })
  )

  it.effect("each bad number names its variable and value", () =>
    Effect.gen(function* () {
      for (const name of [
        "SWITCHYARD_MAX_BROWSERS",
        "SWITCHYARD_QUEUE",
        "SWITCHYARD_MAX_PENDING_PER_SESSION",
        "SWITCHYARD_IDLE_TIMEOUT_MS",
        "SWITCHYARD_LEASE_TIMEOUT_MS",
        "SWITCHYARD_MAX_ARGUMENT_BYTES",
        "SWITCHYARD_HUMAN_TIMEOUT_MS",
        "SWITCHYARD_REPLAY_TTL_MS"
      ]) {
        assert.strictEqual(yield* failure({ env: { [name]: "x" } }), `configuration ${name}: "x" is not a whole number`)
        assert.strictEqual(
          yield* failure({ env: { [name]: "2.5" } }),
          `configuration ${name}: "2.5" is not a whole number`
        )
      }
      assert.strictEqual(
        yield* failure({ env: { SWITCHYARD_MAX_BROWSERS: "0" } }),
        `configuration SWITCHYARD_MAX_BROWSERS: "0" is not above 0`
      )
      assert.strictEqual(
        yield* failure({ env: { SWITCHYARD_BROWSER: "remote" } }),
        `configuration SWITCHYARD_BROWSER: "remote" is not one of local, cdp, adspower`
      )
      assert.strictEqual(
        yield* failure({ env: {}, flags: { sessions: { maxBrowsers: 0 } } }),
        "configuration flags: sessions.maxBrowsers: 0 is not above 0"
      )
    })
  )

  it.effect("a file's bad value, unknown key or misplaced value is an error naming the file and the key", () =>
    Effect.gen(function* () {
      const typed = file({ sessions: { maxBrowsers: "four" } })
      assert.strictEqual(
        yield* failure({ file: typed, env: {} }),
        `configuration ${typed}: sessions.maxBrowsers: "four" is not a whole number`
      )
      const unknown = file({ browser: { headles: false } })
      assert.strictEqual(
        yield* failure({ file: unknown, env: {} }),
        `configuration ${unknown}: unknown key browser.headles`
      )
      const empty = file({ browsr: {} })
      assert.strictEqual(yield* failure({ file: empty, env: {} }), `configuration ${empty}: unknown key browsr`)
      const misplaced = file({ sessions: 5 })
      assert.strictEqual(
        yield* failure({ file: misplaced, env: {} }),
        `configuration ${misplaced}: sessions holds settings, not 5`
      )
      const policy = file({ cascade: { default: { totalTimeoutMs: 1, levels: [{ engine: "x", retryCount: 0 }] } } })
      assert.include(yield* failure({ file: policy, env: {} }), `${policy}: cascade.default.levels.0`)
      const notJson = join(dir, "broken.json")
      writeFileSync(notJson, "{ nope")
      assert.include(yield* failure({ file: notJson, env: {} }), `configuration ${notJson}: cannot read it as JSON`)
      // Sections left empty, and an inline policy, are fine.
      const fine = file({ browser: {}, cascade: Policy.defaultPolicy, model: { apiKeys: {} } })
      const config = yield* Config.resolve({ file: fine, env: {} })
      assert.deepStrictEqual(config.cascade, Policy.defaultPolicy)
    })
  )

  it.effect("secrets are Redacted as read and never show when the configuration is printed or logged", () =>
    Effect.gen(function* () {
      const secrets = ["sk-file-canary", "sk-env-canary", "ak-env-canary", "ads-canary", "tok-flag-canary"]
      const config = yield* Config.resolve({
        file: file({ model: { apiKeys: { mistral: secrets[0] } } }),
        env: {
          OPENAI_API_KEY: secrets[1],
          SWITCHYARD_ANTHROPIC_API_KEY: secrets[2],
          SWITCHYARD_ADSPOWER_API_KEY: secrets[3]
        },
        flags: { http: { token: Redacted.make(secrets[4]!) } }
      })
      assert.strictEqual(Redacted.value(config.http.token!), secrets[4])
      assert.strictEqual(Redacted.value(config.browser.adspower.apiKey!), secrets[3])
      assert.deepStrictEqual(
        Object.values(config.model.apiKeys ?? {})
          .map(Redacted.value)
          .sort(),
        secrets.slice(0, 3).sort()
      )

      const lines: Array<string> = []
      const capture = [Logger.formatSimple, Logger.formatLogFmt, Logger.formatJson].map((format) =>
        Logger.map(format, (line) => void lines.push(line))
      )
      yield* Effect.log(config).pipe(Effect.provide(Logger.layer(capture)))
      yield* Effect.log("configuration", config).pipe(Effect.provide(Logger.layer(capture)))
      const printed = [
        String(config),
        `${config.http.token}`,
        JSON.stringify(config),
        JSON.stringify(Inspectable.toJson(config)),
        Inspectable.toStringUnknown(config),
        inspect(config, { depth: null }),
        ...lines
      ]
      assert.lengthOf(lines, 6)
      for (const text of printed) for (const value of secrets) assert.notInclude(text, value)
      assert.include(JSON.stringify(config), "<redacted>")
    })
  )
})
