/**
 * One run of one scenario: its steps planned from the suite (site URLs resolved), played through a fresh session
 * stack as an agent would (repeating a step the answer says may pass), then the scenario's expectations checked.
 */
import { Clock, Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import type { EnginesOptions } from "../../Cascade/Engines.ts"
import type { ReplayOptions } from "../../Cascade/Replay.ts"
import { Router, type ToolAnswer } from "../../Cascade/Router.ts"
import type * as Model from "../../Engine/Model.ts"
import * as Artifacts from "../../Logging/Artifacts.ts"
import * as AttemptLog from "../../Logging/AttemptLog.ts"
import * as LocalChromium from "../../Sandbox/Provider/LocalChromium.ts"
import { Sandbox } from "../../Sandbox/Sandbox.ts"
import * as SessionStack from "../../Server/SessionStack.ts"
import * as Expect from "../Expect.ts"
import type * as ScriptedModel from "../ScriptedModel.ts"
import type * as Sites from "../Sites.ts"
import * as Suite from "../Suite.ts"
import type { RunResult, StepResult } from "./Results.ts"

/** What a run takes from the suite's options. */
export interface RunOptions {
  /**
   * The model for every scenario, overriding the suite: `"scripted"` (the bundled deterministic model), `"env"`
   * (real providers from the environment), or an explicit configuration. Default: what each scenario names.
   */
  readonly model?: "scripted" | "env" | Model.ModelConfig
  readonly headless?: boolean
  readonly executablePath?: string
  /** Retries and per-attempt limit for levels written by name; default 0 retries, 8 s. */
  readonly limits?: { readonly retryCount: number; readonly timeoutPerAttemptMs: number }
  /** Engine options beyond the model; default Stagehand settles the DOM for 250 ms. */
  readonly engines?: Omit<EnginesOptions, "model">
  /** Longest one run of one scenario may take, steps and checks included; default 120 s. */
  readonly scenarioTimeoutMs?: number
  /** The replay level and its store; default none (every run resolves its acts afresh). */
  readonly replay?: ReplayOptions
}

export interface RunContext {
  readonly runId: string
  readonly sites: Sites.Sites
  readonly scripted: ScriptedModel.ScriptedModel | undefined
  readonly options: RunOptions
}

// ---------------------------------------------------------------------------------------------------------------
// Models.

export const modelName = (model: RunOptions["model"] | Suite.ModelRef) =>
  typeof model === "string" ? model : "configured"

/** A suite's model reference made concrete; environment variables are read here, at run time, never stored. */
const modelConfig = (
  ref: "scripted" | "env" | Model.ModelConfig | Suite.ModelRef,
  scripted: ScriptedModel.ScriptedModel | undefined,
  seed: number
): Model.ModelConfig => {
  if (ref === "scripted") return scripted!.modelConfig(seed)
  if (ref === "env") return {}
  if (!("apiKeyEnv" in ref || "baseURLEnv" in ref)) return ref as Model.ModelConfig
  const fromEnv = (names: Readonly<Record<string, string>> | undefined) =>
    Object.fromEntries(
      Object.entries(names ?? {}).flatMap(([provider, name]) => {
        const value = process.env[name]
        return value === undefined || value === "" ? [] : [[provider, value] as const]
      })
    )
  const { apiKeyEnv, baseURLEnv, ...models } = ref as Extract<Suite.ModelRef, { apiKeyEnv?: unknown }>
  const keys = fromEnv(apiKeyEnv)
  const names = Object.fromEntries(Object.entries(models).filter(([, v]) => v !== undefined)) as Pick<
    Model.ModelConfig,
    "model" | "stagehandDom" | "stagehandCua" | "magnitude"
  >
  return {
    ...names,
    apiKeys: Object.fromEntries(Object.entries(keys).map(([p, k]) => [p, Redacted.make(k)])),
    baseURLs: fromEnv(baseURLEnv)
  }
}

export const usesScripted = (scenarios: ReadonlyArray<Suite.LoadedScenario>, override: RunOptions["model"]) =>
  override === undefined ? scenarios.some((s) => s.model === "scripted") : override === "scripted"

// ---------------------------------------------------------------------------------------------------------------
// One run of one scenario.

interface Planned {
  readonly stepId: string
  readonly tool: string
  /** As written in the scenario (`site:` URLs kept), for the log. */
  readonly written: Record<string, unknown>
  /** As sent (URLs resolved). */
  readonly args: Record<string, unknown>
  readonly allowFailure: boolean
  readonly retries: number
  readonly retryDelayMs: number
}

const resolveArgs = (value: unknown, sites: Sites.Sites): unknown =>
  typeof value === "string"
    ? sites.resolve(value)
    : Array.isArray(value)
      ? value.map((v) => resolveArgs(v, sites))
      : typeof value === "object" && value !== null
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveArgs(v, sites)]))
        : value

const plan = (scenario: Suite.LoadedScenario, sites: Sites.Sites): ReadonlyArray<Planned> => [
  {
    stepId: "start",
    tool: "browser.navigate",
    written: { url: scenario.start },
    args: { url: sites.resolve(scenario.start) },
    allowFailure: false,
    retries: 1,
    retryDelayMs: 1_500
  },
  ...scenario.steps.map((step, i): Planned => {
    const written = step.instruction === undefined ? { ...step.args } : { instruction: step.instruction }
    return {
      stepId: `s${i + 1}`,
      tool: step.tool ?? "browser.act",
      written,
      args: resolveArgs(written, sites) as Record<string, unknown>,
      allowFailure: step.allowFailure ?? false,
      retries: step.retries ?? 1,
      retryDelayMs: step.retryDelayMs ?? 1_500
    }
  })
]

/** The stack for one run, built fresh: its own browser, breakers and Stagehand retry state. */
const stack = (scenario: Suite.LoadedScenario, ctx: RunContext) => {
  const { options } = ctx
  const policy = Suite.policyOf(scenario.engines, options.limits ?? { retryCount: 0, timeoutPerAttemptMs: 8_000 })
  return SessionStack.layer({
    router: { policy, fallback: scenario.engines.fallback ?? true },
    sandbox: { idleTimeoutMs: null },
    engines: {
      ...options.engines,
      model: modelConfig(options.model ?? scenario.model, ctx.scripted, scenario.seed),
      stagehand: { domSettleTimeoutMs: 250, ...options.engines?.stagehand }
    },
    browser: LocalChromium.layer({
      headless: options.headless ?? true,
      ...(options.executablePath === undefined ? {} : { executablePath: options.executablePath })
    }),
    ...(options.replay === undefined ? {} : { replay: options.replay })
  })
}

const traceIdOf = (runId: string, scenario: string, repeat: number) => `${runId}-${scenario}-r${repeat}`.slice(0, 120)

export const runOnce = (scenario: Suite.LoadedScenario, repeat: number, ctx: RunContext) =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const traceId = traceIdOf(ctx.runId, scenario.name, repeat)
    const log = yield* AttemptLog.AttemptLog
    const steps: Array<StepResult> = []
    const failures: Array<string> = []
    const scope = yield* Scope.make()
    const body = Effect.gen(function* () {
      const built = yield* Layer.buildWithMemoMap(stack(scenario, ctx), yield* Layer.makeMemoMap, scope)
      const router = Context.get(built, Router)
      const sandbox = Context.get(built, Sandbox)
      let lastUrl: string | null = null
      let extracted: unknown
      for (const step of plan(scenario, ctx.sites)) {
        const stepStarted = yield* Clock.currentTimeMillis
        // What the step asked, as written (site: URLs kept): lets importTrace turn this trace back into a scenario.
        yield* log.record({
          event: "scenario_step",
          ts: new Date(stepStarted).toISOString(),
          traceId,
          stepId: step.stepId,
          action: step.tool,
          scenario: scenario.name,
          seed: scenario.seed,
          toolArgs: step.written
        })
        let answer: ToolAnswer | undefined
        let calls = 0
        while (calls <= step.retries) {
          if (calls > 0) yield* Effect.sleep(step.retryDelayMs)
          calls++
          answer = yield* router.call(step.tool, step.args, { traceId, stepId: step.stepId })
          if (answer.ok) break
          // An agent repeats a failed step when the error may pass or the router says to try again.
          if (!(answer.error?.retryable || answer.message !== undefined)) break
        }
        const done = answer!
        if (done.state.url !== null) lastUrl = done.state.url
        if (step.tool === "browser.extract" && done.ok) extracted = done.result
        steps.push({
          stepId: step.stepId,
          tool: step.tool,
          calls,
          ok: done.ok,
          engine: done.state.engine,
          level: done.state.level,
          ...(done.error === undefined ? {} : { errorType: done.error.type, message: done.error.message }),
          durationMs: (yield* Clock.currentTimeMillis) - stepStarted
        })
        if (!done.ok && !step.allowFailure) {
          failures.push(
            `step ${step.stepId} (${step.tool}) failed after ${calls} call${calls === 1 ? "" : "s"}: ${done.error?.type}: ${done.error?.message}`
          )
          return
        }
      }
      if (scenario.expect !== undefined) {
        const { wsEndpoint } = yield* sandbox.status
        if (wsEndpoint === null) failures.push("no browser is running to check the outcome on")
        else
          failures.push(
            ...(yield* Expect.check({ wsEndpoint, expect: scenario.expect, lastUrl, extracted, sites: ctx.sites }))
          )
      }
    })
    const limit = ctx.options.scenarioTimeoutMs ?? 120_000
    const sink = yield* Artifacts.Artifacts
    const outcome = yield* body.pipe(
      Effect.provideService(Artifacts.Artifacts, {
        ...sink,
        screenshots: sink.screenshots && (scenario.artifacts?.screenshots ?? true),
        snapshots: sink.snapshots && (scenario.artifacts?.snapshots ?? true)
      }),
      Effect.timeoutOption(limit),
      Effect.exit
    )
    if (Exit.isFailure(outcome)) failures.push(`the run failed: ${String(outcome.cause).slice(0, 500)}`)
    else if (Option.isNone(outcome.value)) failures.push(`the run took longer than ${limit} ms and was stopped`)
    yield* Scope.close(scope, Exit.void).pipe(Effect.timeoutOption(30_000))
    return {
      scenario: scenario.name,
      repeat,
      seed: scenario.seed,
      traceId,
      passed: failures.length === 0,
      failures,
      steps,
      durationMs: (yield* Clock.currentTimeMillis) - started
    } satisfies RunResult
  })
