/**
 * The scenario suite format: JSON files validated by Schema, with errors that name the file and the bad key. A suite
 * lists scenarios inline or by path (a directory includes every `*.json` in it, e.g. traces imported from production).
 */
import { readdir, readFile, stat } from "node:fs/promises"
import { dirname, join, relative, resolve } from "node:path"
import { Data, Effect, Result, Schema, SchemaIssue } from "effect"
import { CascadeConfig, Level, Policy } from "../Cascade/Policy.ts"
import { toolNames } from "../Cascade/Tools.ts"

// ---------------------------------------------------------------------------------------------------------------
// Schema.

const NonEmpty = Schema.String.check(Schema.isMinLength(1))

/** `stagehand:dom`, `stagehand:cua`, `magnitude`, `playwright`, `human`: a level with the suite's default limits. */
export const LevelName = Schema.Literals([
  "stagehand:dom",
  "stagehand:cua",
  "stagehand",
  "magnitude",
  "playwright",
  "human"
])
export type LevelName = typeof LevelName.Type

/** A level written out; only `engine` is required. */
export const LevelSpec = Schema.Struct({
  engine: Level.fields.engine,
  mode: Level.fields.mode,
  retryCount: Schema.optional(Level.fields.retryCount),
  timeoutPerAttemptMs: Schema.optional(Level.fields.timeoutPerAttemptMs)
})

/** Which engines a scenario uses: a level list (names or objects) with optional limits, or a whole cascade policy. */
export const Engines = Schema.Struct({
  levels: Schema.optional(Schema.Array(Schema.Union([LevelName, LevelSpec])).check(Schema.isMinLength(1))),
  totalTimeoutMs: Schema.optional(CascadeConfig.fields.totalTimeoutMs),
  retryBaseDelayMs: CascadeConfig.fields.retryBaseDelayMs,
  /** Give Stagehand its one retry and then fall back (seed 000); default true. */
  fallback: Schema.optional(Schema.Boolean),
  /** A full cascade policy (Policy.ts); takes the place of `levels`. */
  policy: Schema.optional(Policy)
})
export type Engines = typeof Engines.Type

/**
 * The model for the LLM engines, by reference: `"scripted"` (the bundled deterministic model), `"env"` (the
 * environment: SWITCHYARD_MODEL, OPENAI_API_KEY, …), or model names plus the names of the environment variables that
 * hold keys and base URLs. A file never holds a key.
 */
export const ModelRef = Schema.Union([
  Schema.Literals(["scripted", "env"]),
  Schema.Struct({
    model: Schema.optional(NonEmpty),
    stagehandDom: Schema.optional(NonEmpty),
    stagehandCua: Schema.optional(NonEmpty),
    magnitude: Schema.optional(NonEmpty),
    /** Provider → environment variable with its API key, e.g. `{ "openai": "OPENAI_API_KEY" }`. */
    apiKeyEnv: Schema.optional(Schema.Record(Schema.String, NonEmpty)),
    /** Provider → environment variable with its base URL. */
    baseURLEnv: Schema.optional(Schema.Record(Schema.String, NonEmpty))
  })
])
export type ModelRef = typeof ModelRef.Type

/** One fixed step: a tool call, or an instruction (shorthand for `browser.act {instruction}`). */
export const Step = Schema.Struct({
  tool: Schema.optional(Schema.Literals(toolNames)),
  args: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  instruction: Schema.optional(NonEmpty),
  /** The scenario goes on when this step fails (a step expected to fail, e.g. on a page that crashes). */
  allowFailure: Schema.optional(Schema.Boolean),
  /** How often a failed step is repeated, as an agent following the router's guidance would; default 1. */
  retries: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 }))),
  /** Pause before a repeat, in ms; default 1500. */
  retryDelayMs: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 30_000 }))),
  note: Schema.optional(Schema.String)
}).check(
  Schema.makeFilter((step) =>
    (step.tool === undefined) === (step.instruction === undefined)
      ? "a step needs exactly one of `tool` (with `args`) or `instruction`"
      : step.instruction !== undefined && step.args !== undefined
        ? "`args` belongs to a `tool` step; an `instruction` step is the instruction alone"
        : undefined
  )
)
export type Step = typeof Step.Type

/** What must hold after the steps. Without an `expect`, a scenario passes when every step succeeded. */
export const Expect = Schema.Struct({
  /** The page's URL, exactly (`site:` URLs allowed). */
  url: Schema.optional(NonEmpty),
  /** A part of the page's URL. */
  urlIncludes: Schema.optional(NonEmpty),
  /** Texts shown somewhere on the page (any frame, open shadow roots included; case-insensitive). */
  text: Schema.optional(Schema.Array(NonEmpty)),
  /** Texts that must not be shown. */
  textAbsent: Schema.optional(Schema.Array(NonEmpty)),
  /** CSS selector (any frame, open shadow roots pierced) → the field's value, or checked state for a boolean. */
  values: Schema.optional(Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Boolean]))),
  /** A subset of what the last `browser.extract` step returned. */
  extracted: Schema.optional(Schema.Unknown)
})
export type Expect = typeof Expect.Type

export const Scenario = Schema.Struct({
  name: NonEmpty.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)),
  description: Schema.optional(Schema.String),
  /** The first page: `site:/forms.html` (a bundled site), `site2:/…` (the second origin) or any URL. */
  start: NonEmpty,
  steps: Schema.Array(Step),
  expect: Schema.optional(Expect),
  /** Breaks the scripted model's ties; recorded with every run. Default: the suite's, else 1. */
  seed: Schema.optional(Schema.Int),
  engines: Schema.optional(Engines),
  model: Schema.optional(ModelRef),
  tags: Schema.optional(Schema.Array(Schema.String)),
  /** Artifacts per attempt (default both): a page whose renderer is gone cannot be captured, and trying costs time. */
  artifacts: Schema.optional(
    Schema.Struct({ screenshots: Schema.optional(Schema.Boolean), snapshots: Schema.optional(Schema.Boolean) })
  ),
  /** Where an imported scenario came from (importTrace), and what could not be recovered. */
  origin: Schema.optional(
    Schema.Struct({
      traceId: Schema.String,
      importedFrom: Schema.optional(Schema.String),
      outcome: Schema.optional(Schema.String),
      notes: Schema.optional(Schema.Array(Schema.String))
    })
  )
})
export type Scenario = typeof Scenario.Type

export const SuiteFile = Schema.Struct({
  name: NonEmpty,
  description: Schema.optional(Schema.String),
  defaults: Schema.optional(
    Schema.Struct({
      engines: Schema.optional(Engines),
      model: Schema.optional(ModelRef),
      seed: Schema.optional(Schema.Int)
    })
  ),
  /** Scenarios inline, or paths (relative to this file) to scenario files or directories of them. */
  scenarios: Schema.Array(Schema.Union([NonEmpty, Schema.Unknown]))
})
export type SuiteFile = typeof SuiteFile.Type

/** A scenario as loaded: defaults applied, and the file it came from. */
export interface LoadedScenario extends Scenario {
  readonly seed: number
  readonly engines: Engines
  readonly model: ModelRef
  readonly file: string
}

export interface Suite {
  readonly name: string
  readonly description?: string
  readonly file: string
  readonly scenarios: ReadonlyArray<LoadedScenario>
}

// ---------------------------------------------------------------------------------------------------------------
// Errors.

export interface Problem {
  /** The key at fault, as a path: `scenarios[2].steps[0].tool`. */
  readonly path: string
  readonly message: string
}

export class SuiteError extends Data.TaggedError("SuiteError")<{
  readonly file: string
  readonly problems: ReadonlyArray<Problem>
}> {
  override get message() {
    return this.problems.map((p) => `${this.file}: ${p.path === "" ? "" : `${p.path}: `}${p.message}`).join("\n")
  }
}

const pathText = (path: ReadonlyArray<PropertyKey>) =>
  path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join("")

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** Decodes `input` with `schema`, unknown keys refused; problems are prefixed with `at` (the key they sit under). */
const decode = <S extends Schema.Codec<unknown, unknown>>(
  schema: S,
  input: unknown,
  file: string,
  at: ReadonlyArray<PropertyKey> = []
): Effect.Effect<S["Type"], SuiteError> => {
  const result = Schema.decodeUnknownResult(schema as unknown as Schema.Codec<S["Type"], unknown>, {
    onExcessProperty: "error",
    errors: "all"
  })(input)
  if (Result.isSuccess(result)) return Effect.succeed(result.success)
  const issues = formatter(result.failure.issue).issues
  const seen = new Set<string>()
  const problems: Array<Problem> = []
  for (const issue of issues) {
    const path = pathText([...at, ...(issue.path ?? []).map((p) => (typeof p === "object" ? p.key : p))])
    const message = issue.message === "Expected no excess property" ? "unknown key" : issue.message
    const key = `${path}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    problems.push({ path, message })
  }
  return Effect.fail(new SuiteError({ file, problems }))
}

const readJson = (file: string) =>
  Effect.tryPromise({
    try: () => readFile(file, "utf8"),
    catch: (cause) =>
      new SuiteError({ file, problems: [{ path: "", message: `cannot read: ${(cause as Error).message}` }] })
  }).pipe(
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: (cause) =>
          new SuiteError({ file, problems: [{ path: "", message: `not valid JSON: ${(cause as Error).message}` }] })
      })
    )
  )

// ---------------------------------------------------------------------------------------------------------------
// Loading.

const withDefaults = (scenario: Scenario, file: string, defaults: SuiteFile["defaults"]): LoadedScenario => ({
  ...scenario,
  seed: scenario.seed ?? defaults?.seed ?? 1,
  engines: { ...defaults?.engines, ...scenario.engines },
  model: scenario.model ?? defaults?.model ?? "scripted",
  file
})

/** Reads one scenario file (as importTrace writes them). */
export const loadScenario = (file: string): Effect.Effect<Scenario, SuiteError> =>
  readJson(file).pipe(Effect.flatMap((json) => decode(Scenario, json, file)))

const scenarioFiles = (path: string, file: string, at: ReadonlyArray<PropertyKey>) =>
  Effect.tryPromise({
    try: async () => {
      const info = await stat(path)
      if (!info.isDirectory()) return [path]
      const names = (await readdir(path)).filter((n) => n.endsWith(".json")).sort()
      return names.map((n) => join(path, n))
    },
    catch: () =>
      new SuiteError({ file, problems: [{ path: pathText(at), message: `no scenario file or directory at ${path}` }] })
  })

/** A path as shown in errors: relative to the working directory when under it. */
const shown = (file: string) => {
  const rel = relative(process.cwd(), file)
  return rel === "" || rel.startsWith("..") ? file : rel
}

/** Reads and validates a suite file and every scenario file it names; defaults are applied to each scenario. */
export const load = (path: string): Effect.Effect<Suite, SuiteError> =>
  Effect.gen(function* () {
    const file = resolve(path)
    const name = shown(file)
    const json = yield* readJson(file).pipe(
      Effect.mapError((e) => new SuiteError({ file: name, problems: e.problems }))
    )
    // Every problem of the file at once: the shell, then each inline scenario.
    const problems: Array<Problem> = []
    const collect = <A>(self: Effect.Effect<A, SuiteError>) =>
      self.pipe(
        Effect.map((a): A | undefined => a),
        Effect.catch((e: SuiteError) => Effect.sync(() => void problems.push(...e.problems)))
      )
    const suite = yield* collect(decode(SuiteFile, json, name))
    const entries: ReadonlyArray<unknown> =
      suite?.scenarios ??
      (typeof json === "object" && json !== null && Array.isArray((json as { scenarios?: unknown }).scenarios)
        ? (json as { scenarios: ReadonlyArray<unknown> }).scenarios
        : [])
    const scenarios: Array<LoadedScenario> = []
    for (const [index, entry] of entries.entries()) {
      if (typeof entry === "string") {
        if (suite === undefined) continue
        const files = yield* collect(scenarioFiles(resolve(dirname(file), entry), name, ["scenarios", index]))
        for (const child of files ?? []) {
          const scenario = yield* loadScenario(child).pipe(
            Effect.mapError((e) => new SuiteError({ file: shown(child), problems: e.problems }))
          )
          scenarios.push(withDefaults(scenario, child, suite.defaults))
        }
      } else {
        const scenario = yield* collect(decode(Scenario, entry, name, ["scenarios", index]))
        if (scenario !== undefined && suite !== undefined) scenarios.push(withDefaults(scenario, file, suite.defaults))
      }
    }
    if (problems.length > 0 || suite === undefined) return yield* new SuiteError({ file: name, problems })
    const seen = new Set<string>()
    for (const [i, s] of scenarios.entries()) {
      if (seen.has(s.name))
        problems.push({ path: `scenarios[${i}].name`, message: `duplicate scenario name "${s.name}"` })
      seen.add(s.name)
    }
    if (problems.length > 0) return yield* new SuiteError({ file: name, problems })
    return {
      name: suite.name,
      ...(suite.description === undefined ? {} : { description: suite.description }),
      file,
      scenarios
    }
  })

/** The Policy a scenario's `engines` stand for; levels written by name get the limits given here. */
export const policyOf = (engines: Engines, limits: { retryCount: number; timeoutPerAttemptMs: number }): Policy => {
  if (engines.policy !== undefined) return engines.policy
  const names: ReadonlyArray<LevelName | typeof LevelSpec.Type> = engines.levels ?? ["stagehand:dom", "playwright"]
  const levels = names.map((entry): Level => {
    if (typeof entry === "string") {
      const [engine, mode] = entry.split(":") as [Level["engine"], "dom" | "cua" | undefined]
      return {
        engine,
        ...(engine === "stagehand" ? { mode: mode ?? "dom" } : {}),
        retryCount: limits.retryCount,
        timeoutPerAttemptMs: limits.timeoutPerAttemptMs
      }
    }
    return {
      engine: entry.engine,
      ...(entry.mode === undefined ? {} : { mode: entry.mode }),
      retryCount: entry.retryCount ?? limits.retryCount,
      timeoutPerAttemptMs: entry.timeoutPerAttemptMs ?? limits.timeoutPerAttemptMs
    }
  })
  return {
    default: {
      levels,
      totalTimeoutMs: engines.totalTimeoutMs ?? 60_000,
      retryBaseDelayMs: engines.retryBaseDelayMs ?? 100
    }
  }
}
