/**
 * The cascade's configuration: ordered engine levels with retries and time limits, the total budget, and which
 * cascade a page's platform starts with (seed 001 §7-8). Validated by Schema; loadable from a file or from code.
 */
import { readFile } from "node:fs/promises"
import { Effect, Schema } from "effect"
import { type EngineId, EngineKind, EngineMode } from "../EngineId.ts"
import { InvalidInput } from "../Errors/Page.ts"

export const Platform = Schema.Literals(["linkedin", "greenhouse", "lever", "workday", "unknown"])
export type Platform = typeof Platform.Type

const positive = Schema.Number.check(Schema.isGreaterThan(0))
const count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const Level = Schema.Struct({
  engine: EngineKind,
  mode: Schema.optional(EngineMode),
  /** Retries on this level after the first attempt. */
  retryCount: count,
  timeoutPerAttemptMs: positive,
  skipForPlatforms: Schema.optional(Schema.Array(Platform))
})
export type Level = typeof Level.Type

/** The engine a level runs: the config file says `engine` and `mode`. */
export const idOf = (level: Level): EngineId => ({ kind: level.engine, ...(level.mode ? { mode: level.mode } : {}) })

/**
 * Why a person may be handed the page: `engines_exhausted` (every automation level failed for a reason of its own:
 * a time limit, a crash, a model error), `human_check` (the page shows a CAPTCHA or asks to verify a human),
 * `page_miss` (the target is not on the page or not one, or the call is malformed: `element_not_found`,
 * `ambiguous_target`, `invalid_input`, `verification_failed`), `agent_request` (`browser.handoff`).
 */
export const PersonNeeded = Schema.Literals(["engines_exhausted", "human_check", "page_miss", "agent_request"])
export type PersonNeeded = typeof PersonNeeded.Type

/** A page miss answers the agent at once, with its candidates: a person is for what automation cannot do. */
export const defaultHandToPerson: ReadonlyArray<PersonNeeded> = ["engines_exhausted", "human_check", "agent_request"]

/** Whether `config` hands the page to a person for `why`. */
export const handsToPerson = (config: CascadeConfig, why: PersonNeeded) =>
  (config.handToPerson ?? defaultHandToPerson).includes(why)

export const CascadeConfig = Schema.Struct({
  levels: Schema.Array(Level).check(Schema.isMinLength(1)),
  totalTimeoutMs: positive,
  /** Consecutive failures after which a level is skipped for `cooldownMs` (seed 001 §4, criterion 1). */
  maxFailures: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
  cooldownMs: Schema.optional(positive),
  /** First delay between retries on one level; it doubles per retry. */
  retryBaseDelayMs: Schema.optional(Schema.Number.check(Schema.isGreaterThanOrEqualTo(0))),
  /** Repeat an `act` that may have changed the page even when the page did change (off: it is not repeated). */
  repeatPossibleSideEffects: Schema.optional(Schema.Boolean),
  /** When the page goes to a person (the `human` level, or `browser.handoff`); default `defaultHandToPerson`. */
  handToPerson: Schema.optional(Schema.Array(PersonNeeded))
})
export type CascadeConfig = typeof CascadeConfig.Type

/** Seed 001's DEFAULT_CASCADE with the model-free Playwright engine inserted before the person. */
export const defaultCascade: CascadeConfig = {
  totalTimeoutMs: 300_000,
  maxFailures: 3,
  cooldownMs: 60_000,
  retryBaseDelayMs: 250,
  levels: [
    { engine: "stagehand", mode: "dom", retryCount: 2, timeoutPerAttemptMs: 15_000 },
    { engine: "stagehand", mode: "cua", retryCount: 1, timeoutPerAttemptMs: 30_000 },
    { engine: "magnitude", retryCount: 2, timeoutPerAttemptMs: 30_000 },
    { engine: "playwright", retryCount: 1, timeoutPerAttemptMs: 15_000 },
    { engine: "human", retryCount: 0, timeoutPerAttemptMs: 120_000 }
  ]
}

/** Workday's shadow DOM and custom components defeat DOM selectors: start with vision. */
export const workdayCascade: CascadeConfig = {
  ...defaultCascade,
  levels: [
    { engine: "magnitude", retryCount: 3, timeoutPerAttemptMs: 30_000 },
    { engine: "stagehand", mode: "cua", retryCount: 1, timeoutPerAttemptMs: 30_000 },
    { engine: "playwright", retryCount: 1, timeoutPerAttemptMs: 15_000 },
    { engine: "human", retryCount: 0, timeoutPerAttemptMs: 120_000 }
  ]
}

export const Policy = Schema.Struct({
  default: CascadeConfig,
  platforms: Schema.optional(
    Schema.Struct({
      linkedin: Schema.optional(CascadeConfig),
      greenhouse: Schema.optional(CascadeConfig),
      lever: Schema.optional(CascadeConfig),
      workday: Schema.optional(CascadeConfig),
      unknown: Schema.optional(CascadeConfig)
    })
  )
})
export type Policy = typeof Policy.Type

export const defaultPolicy: Policy = { default: defaultCascade, platforms: { workday: workdayCascade } }

const hosts: ReadonlyArray<readonly [RegExp, Platform]> = [
  [/(^|\.)linkedin\.com$/, "linkedin"],
  [/(^|\.)greenhouse\.io$/, "greenhouse"],
  [/(^|\.)lever\.co$/, "lever"],
  [/(^|\.)(myworkdayjobs|workday|myworkday)\.com$/, "workday"]
]

export const platformOf = (url: string | undefined): Platform => {
  if (url === undefined || !URL.canParse(url)) return "unknown"
  const host = new URL(url).hostname.toLowerCase()
  return hosts.find(([pattern]) => pattern.test(host))?.[1] ?? "unknown"
}

/** The cascade for a page: the platform's own, else the default; levels skipped for that platform removed. */
export const cascadeFor = (policy: Policy, url: string | undefined): CascadeConfig => {
  const platform = platformOf(url)
  const chosen = policy.platforms?.[platform] ?? policy.default
  return { ...chosen, levels: chosen.levels.filter((l) => !(l.skipForPlatforms ?? []).includes(platform)) }
}

export const decode = (input: unknown): Effect.Effect<Policy, InvalidInput> =>
  Schema.decodeUnknownEffect(Policy)(input).pipe(
    Effect.mapError((e) => new InvalidInput({ field: "cascade", message: `invalid cascade policy: ${e.message}` }))
  )

/** Reads a policy from a JSON file: `{ "default": {levels, totalTimeoutMs, …}, "platforms": { "workday": … } }`. */
export const load = (path: string): Effect.Effect<Policy, InvalidInput> =>
  Effect.tryPromise({
    try: async () => JSON.parse(await readFile(path, "utf8")) as unknown,
    catch: (cause) =>
      new InvalidInput({ field: "cascade", message: `cannot read cascade policy ${path}: ${(cause as Error).message}` })
  }).pipe(Effect.flatMap(decode))
