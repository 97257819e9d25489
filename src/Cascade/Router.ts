/**
 * The single entry point for `browser.*` tool calls (seeds 000, 003, 004): validates arguments, names the call
 * (traceId, stepId, attemptId), gives Stagehand one retry per request or step and then routes to the fallback
 * engines, and answers every call, success or error, with the session's state so the agent can correct itself.
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import type { Capabilities } from "../Engine/Engine.ts"
import * as EngineId from "../Engine/EngineId.ts"
import { NotConfigured } from "../Errors/Engine.ts"
import { type ErrorInfo, type SwitchyardError, toErrorInfo } from "../Errors.ts"
import * as Events from "../Logging/Events.ts"
import { Sandbox, type SandboxStatus } from "../Sandbox/Sandbox.ts"
import * as Handoff from "../Takeover/Handoff.ts"
import { Cascade } from "./Cascade.ts"
import { Engines } from "./Engines.ts"
import { type CascadeConfig, cascadeFor, defaultPolicy, idOf, type Level, type Policy } from "./Policy.ts"
import { engineTools, isToolName, type ToolName, toolNames, tools } from "./Tools.ts"
import * as UrlPolicy from "./UrlPolicy.ts"

export interface CallMeta {
  /** The agent's request; one is made up when absent (a one-shot call). */
  readonly traceId?: string
  /** A step of a multi-step flow: Stagehand's retry and disable state is kept per (traceId, stepId). */
  readonly stepId?: string
}

/** What every answer carries: enough for an LLM to see where it is and what it can do next. */
export interface StateBlock {
  readonly engine: string | null
  readonly level: number | null
  readonly disabled: ReadonlyArray<string>
  readonly url: string | null
  readonly title: string | null
  readonly tools: { readonly available: ReadonlyArray<ToolName>; readonly masked: Partial<Record<ToolName, string>> }
}

export interface ToolError extends ErrorInfo {
  /** For a call the current engines cannot serve: which engines could. */
  readonly servableBy?: ReadonlyArray<string>
  /** For bad input: what was wrong (`tool` or `arguments`). */
  readonly field?: "tool" | "arguments"
}

export interface ToolAnswer {
  readonly ok: boolean
  readonly result?: unknown
  readonly error?: ToolError
  /** Guidance for the agent: the retry and fallback messages of seed 000. */
  readonly message?: string
  readonly traceId: string
  readonly stepId?: string
  readonly attemptId: string
  readonly state: StateBlock
}

export interface RouterOptions {
  readonly policy?: Policy
  /** Route to the fallback engines after Stagehand's second failure (seed 000); off: Stagehand errors are final. */
  readonly fallback?: boolean
  /** Error types that earn Stagehand its one retry; others go to the fallback at once. Default: any retryable. */
  readonly retryOn?: ReadonlyArray<string>
  /** Which URLs `browser.navigate` may open. */
  readonly urlPolicy?: UrlPolicy.UrlPolicy
  /** Largest tool-argument payload accepted, as JSON bytes. */
  readonly maxArgumentBytes?: number
}

interface StepState {
  stagehandRetryUsed: boolean
  stagehandDisabled: boolean
  attempts: number
}

/** Groups identical calls in logs without writing their values. */
const hashArgs = (args: unknown) => createHash("sha256").update(JSON.stringify(args)).digest("hex").slice(0, 16)

/** Traces kept for retry/disable state; the oldest are dropped past this, so a long-lived service stays bounded. */
const maxTraces = 2_000

/** Whether an engine with these capabilities can serve the call at all. */
const serves = (tool: ToolName, args: Record<string, unknown>, c: Capabilities) => {
  switch (tool) {
    case "browser.act":
      return "action" in args ? c.actions : c.instructions !== "none"
    case "browser.observe":
      return c.observe
    case "browser.extract":
      return args.schema === undefined || c.extract === "any-schema"
    default:
      return true
  }
}

export class Router extends Context.Service<
  Router,
  {
    readonly call: (tool: string, args: unknown, meta?: CallMeta) => Effect.Effect<ToolAnswer>
    /** The state block alone, for status surfaces. */
    readonly state: (meta?: CallMeta) => Effect.Effect<StateBlock>
  }
>()("switchyard/Router") {
  static readonly layer = (options: RouterOptions = {}) =>
    Layer.effect(
      Router,
      Effect.gen(function* () {
        const sandbox = yield* Sandbox
        const cascade = yield* Cascade
        const engines = yield* Engines
        // Present when the session has a VNC display: a person can take the browser over.
        const handoff = yield* Effect.serviceOption(Handoff.Handoff)
        const layerScope = yield* Effect.scope
        const takeover = Option.isSome(handoff) ? handoff.value.active : Effect.succeed(Option.none<Handoff.Takeover>())
        const policy = options.policy ?? defaultPolicy
        const urlPolicy = options.urlPolicy ?? UrlPolicy.defaultUrlPolicy
        const maxArgumentBytes = options.maxArgumentBytes ?? 256 * 1024
        const fallbackEnabled = options.fallback ?? true
        const steps = new Map<string, StepState>()
        let lastUrl: string | undefined

        const stepOf = (traceId: string, stepId: string | undefined) => {
          const key = `${traceId}\u0000${stepId ?? ""}`
          let state = steps.get(key)
          if (state === undefined) {
            state = { stagehandRetryUsed: false, stagehandDisabled: false, attempts: 0 }
            steps.set(key, state)
            if (steps.size > maxTraces) steps.delete(steps.keys().next().value!)
          }
          return state
        }

        const usable = (level: Level) =>
          engines.specFor(level).pipe(
            Effect.map((spec) => Option.some(spec)),
            Effect.orElseSucceed(() => Option.none())
          )

        const stateBlock = (step: StepState | undefined, status: SandboxStatus, config: CascadeConfig) =>
          Effect.gen(function* () {
            const page = status.active ? yield* sandbox.location : Option.none()
            const levels = config.levels.filter((l) => !(step?.stagehandDisabled && l.engine === "stagehand"))
            const specs = (yield* Effect.forEach(levels, usable)).flatMap((o) => (Option.isSome(o) ? [o.value] : []))
            const masked: Partial<Record<ToolName, string>> = {}
            if (!specs.some((s) => s.capabilities.observe)) {
              masked["browser.observe"] = "no engine available now can list page elements"
            }
            if (!specs.some((s) => s.id.kind === "human")) {
              masked["browser.handoff"] = "no person can take over on this service (human takeover is not set up)"
              masked["browser.resume"] = "no person can take over on this service (human takeover is not set up)"
            }
            const person = yield* takeover
            if (Option.isSome(person)) {
              for (const t of engineTools) {
                masked[t] =
                  `a person has the browser (${person.value.url}); wait for them, check browser.status, or call browser.resume when they are done`
              }
            } else if (masked["browser.resume"] === undefined) {
              masked["browser.resume"] = "nobody has the browser: call browser.handoff first"
            }
            if (specs.length === 0) {
              for (const t of engineTools) masked[t] = "no engine is configured"
            }
            return {
              engine:
                status.engine === null ? null : EngineId.label({ kind: status.engine, mode: status.mode ?? undefined }),
              level: ((i) => (i >= 0 ? i : null))(
                config.levels.findIndex((l) => l.engine === status.engine && (l.mode ?? null) === status.mode)
              ),
              disabled: step?.stagehandDisabled ? ["stagehand"] : [],
              url: Option.isSome(page) ? page.value.url : null,
              title: Option.isSome(page) ? page.value.title : null,
              tools: { available: toolNames.filter((t) => masked[t] === undefined), masked }
            } satisfies StateBlock
          })

        /** Runs an engine tool on some of the cascade's levels. */
        const onLevels = (tool: ToolName, args: Record<string, unknown>, config: CascadeConfig) =>
          cascade.call({
            config,
            action: tool,
            isAct: tool === "browser.act",
            run: (engine) => {
              switch (tool) {
                case "browser.navigate":
                  return engine.navigate(args.url as string)
                case "browser.act":
                  return engine.act(("action" in args ? args.action : args.instruction) as string)
                case "browser.extract":
                  return engine.extract(args.instruction as string, args.schema)
                case "browser.observe":
                  return engine.observe(args.instruction as string)
                default:
                  return engine
                    .screenshot({ fullPage: (args.fullPage as boolean | undefined) ?? false })
                    .pipe(Effect.map((png) => ({ mimeType: "image/png", data: Buffer.from(png).toString("base64") })))
              }
            }
          })

        const logFallback = (action: string, attempt: number, reason: string, fallback: "retry" | "webview") =>
          Effect.logInfo(JSON.stringify({ event: "stagehand_fallback", action, attempt, reason, fallback }))

        /** Seed 000's policy around the Stagehand levels; everything else is the plain cascade. */
        const routed = (tool: ToolName, args: Record<string, unknown>, step: StepState) =>
          Effect.gen(function* () {
            const started = yield* Clock.currentTimeMillis
            const config = cascadeFor(policy, tool === "browser.navigate" ? (args.url as string) : lastUrl)
            const stagehand = config.levels.filter((l) => l.engine === "stagehand")
            const rest = { ...config, levels: config.levels.filter((l) => l.engine !== "stagehand") }
            const stagehandUsable = (yield* Effect.forEach(stagehand, usable)).some(Option.isSome)
            const fallbackConfig = rest.levels.length > 0 ? rest : config
            if (step.stagehandDisabled || !stagehandUsable || stagehand.length === 0) {
              return { outcome: yield* Effect.result(onLevels(tool, args, fallbackConfig)), message: undefined, config }
            }
            const first = yield* Effect.result(onLevels(tool, args, { ...config, levels: stagehand }))
            if (first._tag === "Success" || !fallbackEnabled || rest.levels.length === 0) {
              return { outcome: first, message: undefined, config }
            }
            const reason = first.failure.message
            // A resting Stagehand (its breaker open) would fail the retry the same way: fall back at once.
            const earnsRetry =
              first.failure.retryable &&
              first.failure.type !== "engine_cooling_down" &&
              (options.retryOn === undefined || options.retryOn.includes(first.failure.type))
            if (earnsRetry && !step.stagehandRetryUsed) {
              step.stagehandRetryUsed = true
              yield* logFallback(tool, 1, reason, "retry")
              return { outcome: first, message: `Stagehand failed: ${reason}. Try Stagehand once more.`, config }
            }
            step.stagehandDisabled = true
            yield* logFallback(tool, 2, reason, "webview")
            yield* Events.emit({ event: "disabled", provider: "stagehand", reason })
            yield* Events.emit({
              event: "fallback",
              from: "stagehand",
              to: rest.levels.map((l) => EngineId.label(idOf(l))).join(" → "),
              reason
            })
            // One call, one budget: the fallback gets what Stagehand left of it.
            const remaining = config.totalTimeoutMs - ((yield* Clock.currentTimeMillis) - started)
            if (remaining <= 0) {
              return {
                outcome: first,
                message: `Stagehand failed again: ${reason}. The call used its whole budget; the next call uses the fallback tools.`,
                config
              }
            }
            return {
              outcome: yield* Effect.result(onLevels(tool, args, { ...rest, totalTimeoutMs: remaining })),
              message: `Stagehand failed again: ${reason}. Using fallback tools now.`,
              config
            }
          })

        const session = (tool: ToolName, args: Record<string, unknown>): Effect.Effect<unknown, SwitchyardError> => {
          switch (tool) {
            case "browser.status":
              return sandbox.status
            case "browser.close":
              return sandbox.close.pipe(Effect.as({ status: "ok" }))
            default: {
              if (Option.isNone(handoff)) {
                return Effect.fail(
                  new NotConfigured({
                    engine: "human",
                    action: tool,
                    message: `${tool} is not available: no person can take over on this service (start it with SWITCHYARD_HUMAN=on)`
                  })
                )
              }
              const h = handoff.value
              if (tool === "browser.resume") return h.resume().pipe(Effect.map((resumed) => ({ resumed })))
              return Effect.gen(function* () {
                const reason = String(args.reason)
                const human = yield* engines.specFor({ engine: "human", retryCount: 0, timeoutPerAttemptMs: 1 })
                // The takeover starts first, so automation calls waiting for the browser are refused, not let in.
                const before = yield* h.active
                const started = yield* h.start(reason)
                // Hand the page over: the automation client disconnects and the switch is recorded.
                yield* sandbox
                  .switchTo(human, `handoff: ${reason}`)
                  .pipe(
                    Effect.tapError(() =>
                      Option.isNone(before) || before.value.id !== started.id ? h.resume(started.id) : Effect.void
                    )
                  )
                // An open takeover ends with the person's resume or the human timeout, never stays forever.
                yield* Effect.forkIn(h.await().pipe(Effect.ignore), layerScope)
                return {
                  url: started.url,
                  since: started.since,
                  reason: started.reason,
                  next: "Open the URL to take over (the VNC password comes from the operator); browser.resume hands the browser back."
                }
              })
            }
          }
        }

        const answer = (
          base: { traceId: string; stepId: string | undefined; attemptId: string },
          step: StepState | undefined,
          config: CascadeConfig,
          outcome: { ok: true; result: unknown } | { ok: false; error: ToolError },
          message?: string
        ) =>
          Effect.gen(function* () {
            const status = yield* sandbox.status
            const state = yield* stateBlock(step, status, config)
            if (state.url !== null) lastUrl = state.url
            return {
              ...outcome,
              ...(message === undefined ? {} : { message }),
              traceId: base.traceId,
              ...(base.stepId === undefined ? {} : { stepId: base.stepId }),
              attemptId: base.attemptId,
              state
            } satisfies ToolAnswer
          })

        const describeFailure = (
          tool: ToolName,
          args: Record<string, unknown>,
          error: SwitchyardError,
          step: StepState
        ) =>
          Effect.gen(function* () {
            const info: ToolError = toErrorInfo(error)
            if (error.type !== "unsupported") return info
            // Mask, don't remove: say which engines could serve the call.
            const config = cascadeFor(policy, lastUrl)
            const could: Array<string> = []
            for (const level of config.levels) {
              const spec = yield* usable(level)
              if (Option.isNone(spec) || !serves(tool, args, spec.value.capabilities)) continue
              could.push(
                step.stagehandDisabled && level.engine === "stagehand"
                  ? `${EngineId.label(idOf(level))} (disabled for this request after two failures)`
                  : EngineId.label(idOf(level))
              )
            }
            return could.length > 0 ? { ...info, servableBy: could } : info
          })

        /** One system-log line per call; failures also reach stderr as a one-line summary. */
        const logCall = (tool: string, started: number, answer: ToolAnswer) => {
          const line = JSON.stringify({
            event: "tool_call",
            tool,
            traceId: answer.traceId,
            ...(answer.stepId === undefined ? {} : { stepId: answer.stepId }),
            attemptId: answer.attemptId,
            ok: answer.ok,
            engine: answer.state.engine,
            durationMs: Date.now() - started,
            ...(answer.error ? { errorType: answer.error.type, reason: answer.error.message } : {})
          })
          return answer.ok ? Effect.logInfo(line) : Effect.logWarning(line)
        }

        const call = (toolName: string, rawArgs: unknown, meta: CallMeta = {}) =>
          Effect.suspend(() => {
            const started = Date.now()
            return callUnlogged(toolName, rawArgs, meta).pipe(
              Effect.tap((answer) => logCall(toolName, started, answer))
            )
          })

        const callUnlogged = (toolName: string, rawArgs: unknown, meta: CallMeta = {}) =>
          Effect.gen(function* () {
            const traceId = meta.traceId ?? crypto.randomUUID()
            const step = stepOf(traceId, meta.stepId)
            step.attempts++
            const base = {
              traceId,
              stepId: meta.stepId,
              attemptId: `${traceId}${meta.stepId ? `/${meta.stepId}` : ""}#${step.attempts}`
            }
            const config = cascadeFor(policy, lastUrl)
            const fail = (error: ToolError) => answer(base, step, config, { ok: false, error })
            if (!isToolName(toolName)) {
              return yield* fail({
                type: "invalid_input",
                retryable: false,
                field: "tool",
                message: `unknown tool "${toolName}"; the tools are ${toolNames.join(", ")}`
              })
            }
            const size = Buffer.byteLength(JSON.stringify(rawArgs ?? {}) ?? "")
            if (size > maxArgumentBytes) {
              return yield* fail({
                type: "invalid_input",
                retryable: false,
                action: toolName,
                field: "arguments",
                message: `arguments for ${toolName} are ${size} bytes; the limit is ${maxArgumentBytes}`
              })
            }
            const decoded = yield* Effect.result(
              Schema.decodeUnknownEffect(tools[toolName] as Schema.Codec<unknown>)(rawArgs)
            )
            if (decoded._tag === "Failure") {
              return yield* fail({
                type: "invalid_input",
                retryable: false,
                action: toolName,
                field: "arguments",
                message: `bad arguments for ${toolName}: ${decoded.failure.message}`
              })
            }
            const args = decoded.success as Record<string, unknown>
            const person = yield* takeover
            if (Option.isSome(person) && engineTools.includes(toolName)) {
              return yield* fail(toErrorInfo(Handoff.inControl(person.value, toolName)))
            }
            if (toolName === "browser.navigate") {
              const allowed = yield* Effect.result(UrlPolicy.check(args.url as string, urlPolicy))
              if (allowed._tag === "Failure") return yield* fail(toErrorInfo(allowed.failure))
            }
            const scoped = <A, E>(self: Effect.Effect<A, E>) =>
              self.pipe(
                Effect.provideService(Events.CurrentCall, {
                  traceId,
                  attemptId: base.attemptId,
                  action: toolName,
                  toolArgsHash: hashArgs(args),
                  toolArgs: args,
                  attempts: { n: 0 },
                  flags: step,
                  ...(meta.stepId === undefined ? {} : { stepId: meta.stepId })
                }),
                Effect.withSpan(`Router.${toolName}`, {
                  attributes: { traceId, stepId: meta.stepId, attemptId: base.attemptId }
                })
              )
            if (!engineTools.includes(toolName)) {
              const outcome = yield* Effect.result(scoped(session(toolName, args)))
              return yield* outcome._tag === "Success"
                ? answer(base, step, config, { ok: true, result: outcome.success })
                : fail(toErrorInfo(outcome.failure))
            }
            const { outcome, message, config: used } = yield* scoped(routed(toolName, args, step))
            if (outcome._tag === "Success") {
              return yield* answer(base, step, used, { ok: true, result: outcome.success }, message)
            }
            const error = yield* describeFailure(toolName, args, outcome.failure, step)
            return yield* answer(base, step, used, { ok: false, error }, message)
          })

        return Router.of({
          call,
          state: (meta = {}) =>
            Effect.gen(function* () {
              const step = meta.traceId ? steps.get(`${meta.traceId}\u0000${meta.stepId ?? ""}`) : undefined
              return yield* stateBlock(step, yield* sandbox.status, cascadeFor(policy, lastUrl))
            })
        })
      })
    )
}
