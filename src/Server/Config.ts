/**
 * The service's configuration: defaults, then an optional JSON file, then the environment, then flags, validated
 * by one Schema whose errors name the bad key. Model credentials are read by Engine/Model.ts (explicit config here
 * first, then the environment) and held as `Redacted`.
 */
import { readFile } from "node:fs/promises"
import { cpus } from "node:os"
import { Effect, Redacted, Schema } from "effect"
import { Policy } from "../Cascade/Policy.ts"
import * as Egress from "../Egress/Policy.ts"
import type * as Model from "../Engine/Model.ts"
import { InvalidInput } from "../Errors/Page.ts"

const count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const positive = Schema.Int.check(Schema.isGreaterThan(0))
const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const ServiceConfig = Schema.Struct({
  logDir: Schema.optional(Schema.String),
  browser: Schema.optional(
    Schema.Struct({
      provider: Schema.optional(Schema.Literals(["local", "cdp", "adspower"])),
      chromePath: Schema.optional(Schema.String),
      headless: Schema.optional(Schema.Boolean),
      profileDir: Schema.optional(Schema.String),
      cdpUrl: Schema.optional(Schema.String),
      adspower: Schema.optional(
        Schema.Struct({
          url: Schema.optional(Schema.String),
          userId: Schema.optional(Schema.String),
          serialNumber: Schema.optional(Schema.String),
          apiKey: Schema.optional(Schema.String)
        })
      )
    })
  ),
  sessions: Schema.optional(
    Schema.Struct({
      /** Browsers (sessions) at once. */
      maxBrowsers: Schema.optional(positive),
      /** Calls waiting for a browser slot before `busy`. */
      queue: Schema.optional(count),
      /** Calls waiting on one session before `busy` (a request storm). */
      maxPendingPerSession: Schema.optional(positive),
      idleTimeoutMs: Schema.optional(count),
      leaseTimeoutMs: Schema.optional(positive)
    })
  ),
  model: Schema.optional(
    Schema.Struct({
      model: Schema.optional(Schema.String),
      stagehandDom: Schema.optional(Schema.String),
      stagehandCua: Schema.optional(Schema.String),
      magnitude: Schema.optional(Schema.String),
      apiKeys: Schema.optional(Schema.Record(Schema.String, Schema.String)),
      baseURLs: Schema.optional(Schema.Record(Schema.String, Schema.String))
    })
  ),
  /** A cascade policy, inline or as the path of a JSON file. */
  cascade: Schema.optional(Schema.Union([Schema.String, Policy])),
  /** Route to the fallback engines after Stagehand's second failure. */
  fallback: Schema.optional(Schema.Boolean),
  urls: Schema.optional(
    Schema.Struct({
      /** URL schemes `browser.navigate` accepts; default http and https. */
      schemes: Schema.optional(Schema.Array(Schema.String)),
      /** Allow loopback and private-range hosts (default true: local apps are common targets). */
      privateNetworks: Schema.optional(Schema.Boolean)
    })
  ),
  limits: Schema.optional(Schema.Struct({ maxArgumentBytes: Schema.optional(positive) })),
  http: Schema.optional(
    Schema.Struct({
      host: Schema.optional(Schema.String),
      port: Schema.optional(count),
      token: Schema.optional(Schema.String)
    })
  ),
  artifacts: Schema.optional(
    Schema.Struct({ screenshots: Schema.optional(Schema.Boolean), snapshots: Schema.optional(Schema.Boolean) })
  ),
  /** Human takeover over VNC: each session's browser runs headed on its own VNC display. */
  human: Schema.optional(
    Schema.Struct({
      enabled: Schema.optional(Schema.Boolean),
      /** How long a person has before `human_timeout`. */
      timeoutMs: Schema.optional(positive),
      /** Where the noVNC page listens (default 127.0.0.1) and the host name people use to reach it. */
      host: Schema.optional(Schema.String),
      publicHost: Schema.optional(Schema.String)
    })
  ),
  /** What the browser may reach, enforced by the egress proxy: `allow`/`deny` lists of networks and host patterns
   * (a deny wins), and whether subresources are checked like documents. */
  egress: Schema.optional(Egress.EgressConfig)
})
export type ServiceConfig = typeof ServiceConfig.Type

/** The machine's size decides how many browsers run at once: 4 stay responsive on 2 cores. */
export const defaultMaxBrowsers = () => Math.max(2, Math.min(16, cpus().length * 2))
export const defaultMaxArgumentBytes = 256 * 1024

const bad = (key: string, message: string) =>
  new InvalidInput({ field: key, message: `configuration ${key}: ${message}` })

const decode = (input: unknown, source: string) =>
  Schema.decodeUnknownEffect(ServiceConfig)(input, strict.parseOptions).pipe(
    Effect.mapError((e) => bad(source, e.message))
  )

/** A config file: JSON, validated; unknown keys are errors that name them. */
export const fromFile = (path: string) =>
  Effect.tryPromise({
    try: async () => JSON.parse(await readFile(path, "utf8")) as unknown,
    catch: (cause) => bad(path, `cannot read it as JSON: ${(cause as Error).message}`)
  }).pipe(Effect.flatMap((json) => decode(json, path)))

const bool = (key: string, raw: string | undefined) => {
  if (raw === undefined || raw === "") return Effect.succeed(undefined)
  if (/^(1|true|on|yes)$/i.test(raw)) return Effect.succeed(true)
  if (/^(0|false|off|no)$/i.test(raw)) return Effect.succeed(false)
  return Effect.fail(bad(key, `"${raw}" is not on/off`))
}
const int = (key: string, raw: string | undefined) => {
  if (raw === undefined || raw === "") return Effect.succeed(undefined)
  const n = Number(raw)
  return Number.isInteger(n) && n >= 0 ? Effect.succeed(n) : Effect.fail(bad(key, `"${raw}" is not a whole number`))
}

/** The environment's part: SWITCHYARD_* plus the names other tools use (CLAW_LOG_DIR, CHROME_PATH, ADSPOWER_API_URL). */
export const fromEnv = (env: Record<string, string | undefined> = process.env) =>
  Effect.gen(function* () {
    const adspowerUrl = env.ADSPOWER_API_URL
    const raw = {
      logDir: env.SWITCHYARD_LOG_DIR || env.CLAW_LOG_DIR || undefined,
      browser: {
        provider:
          env.SWITCHYARD_BROWSER ||
          (env.SWITCHYARD_CDP_URL ? "cdp" : adspowerUrl && env.SWITCHYARD_ADSPOWER_USER_ID ? "adspower" : undefined),
        chromePath: env.CHROME_PATH || undefined,
        headless: yield* bool("SWITCHYARD_HEADLESS", env.SWITCHYARD_HEADLESS),
        profileDir: env.SWITCHYARD_PROFILE_DIR || undefined,
        cdpUrl: env.SWITCHYARD_CDP_URL || undefined,
        adspower: {
          url: adspowerUrl || undefined,
          userId: env.SWITCHYARD_ADSPOWER_USER_ID || undefined,
          serialNumber: env.SWITCHYARD_ADSPOWER_SERIAL || undefined,
          apiKey: env.SWITCHYARD_ADSPOWER_API_KEY || undefined
        }
      },
      sessions: {
        maxBrowsers: yield* int("SWITCHYARD_MAX_BROWSERS", env.SWITCHYARD_MAX_BROWSERS),
        queue: yield* int("SWITCHYARD_QUEUE", env.SWITCHYARD_QUEUE),
        maxPendingPerSession: yield* int("SWITCHYARD_MAX_PENDING_PER_SESSION", env.SWITCHYARD_MAX_PENDING_PER_SESSION),
        idleTimeoutMs: yield* int("SWITCHYARD_IDLE_TIMEOUT_MS", env.SWITCHYARD_IDLE_TIMEOUT_MS),
        leaseTimeoutMs: yield* int("SWITCHYARD_LEASE_TIMEOUT_MS", env.SWITCHYARD_LEASE_TIMEOUT_MS)
      },
      cascade: env.SWITCHYARD_CASCADE || undefined,
      fallback: yield* bool("SWITCHYARD_FALLBACK", env.SWITCHYARD_FALLBACK),
      urls: {
        schemes: env.SWITCHYARD_URL_SCHEMES ? env.SWITCHYARD_URL_SCHEMES.split(",").map((s) => s.trim()) : undefined,
        privateNetworks: yield* bool("SWITCHYARD_PRIVATE_NETWORKS", env.SWITCHYARD_PRIVATE_NETWORKS)
      },
      limits: { maxArgumentBytes: yield* int("SWITCHYARD_MAX_ARGUMENT_BYTES", env.SWITCHYARD_MAX_ARGUMENT_BYTES) },
      http: { token: env.SWITCHYARD_HTTP_TOKEN || undefined },
      artifacts: { screenshots: yield* bool("SWITCHYARD_SCREENSHOTS", env.SWITCHYARD_SCREENSHOTS) },
      human: {
        enabled: yield* bool("SWITCHYARD_HUMAN", env.SWITCHYARD_HUMAN),
        timeoutMs: yield* int("SWITCHYARD_HUMAN_TIMEOUT_MS", env.SWITCHYARD_HUMAN_TIMEOUT_MS),
        host: env.SWITCHYARD_VNC_HOST || undefined,
        publicHost: env.SWITCHYARD_VNC_PUBLIC_HOST || undefined
      },
      egress: {
        allow: Egress.list(env.SWITCHYARD_EGRESS_ALLOW),
        deny: Egress.list(env.SWITCHYARD_EGRESS_DENY),
        subresources: yield* bool("SWITCHYARD_EGRESS_SUBRESOURCES", env.SWITCHYARD_EGRESS_SUBRESOURCES)
      }
    }
    return yield* decode(prune(raw), "environment")
  })

/** Drops undefined leaves and empty objects, so a layer only overrides what it sets. */
const prune = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value
  const entries = Object.entries(value)
    .map(([k, v]) => [k, prune(v)] as const)
    .filter(
      ([, v]) =>
        v !== undefined && !(typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
    )
  return entries.length === 0 ? undefined : Object.fromEntries(entries)
}

/** Later layers win, key by key. */
export const merge = (...layers: ReadonlyArray<unknown>): unknown =>
  layers.reduce((acc: unknown, layer) => {
    if (layer === undefined) return acc
    if (
      typeof acc !== "object" ||
      acc === null ||
      Array.isArray(acc) ||
      typeof layer !== "object" ||
      layer === null ||
      Array.isArray(layer)
    )
      return layer
    const out: Record<string, unknown> = { ...(acc as Record<string, unknown>) }
    for (const [k, v] of Object.entries(layer)) out[k] = merge(out[k], v)
    return out
  }, undefined)

/** File ← environment ← flags, validated once more as a whole. */
export const resolve = (options: { file?: string; flags?: unknown; env?: Record<string, string | undefined> } = {}) =>
  Effect.gen(function* () {
    const env = options.env ?? process.env
    const path = options.file ?? env.SWITCHYARD_CONFIG
    const file = path ? yield* fromFile(path) : undefined
    const fromEnvironment = yield* fromEnv(env)
    const flags = options.flags === undefined ? undefined : yield* decode(prune(options.flags) ?? {}, "flags")
    return yield* decode(merge({}, file, fromEnvironment, flags) ?? {}, "configuration")
  })

/** The explicit model configuration for the engines, credentials as `Redacted`. */
export const modelConfig = (config: ServiceConfig): Model.ModelConfig => {
  const m = config.model ?? {}
  return {
    ...(m.model ? { model: m.model } : {}),
    ...(m.stagehandDom ? { stagehandDom: m.stagehandDom } : {}),
    ...(m.stagehandCua ? { stagehandCua: m.stagehandCua } : {}),
    ...(m.magnitude ? { magnitude: m.magnitude } : {}),
    ...(m.apiKeys
      ? { apiKeys: Object.fromEntries(Object.entries(m.apiKeys).map(([k, v]) => [k, Redacted.make(v)])) }
      : {}),
    ...(m.baseURLs ? { baseURLs: m.baseURLs } : {})
  }
}
