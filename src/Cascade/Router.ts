/**
 * The single entry point for `browser.*` tool calls (seeds 000, 003, 004): names the call (traceId, stepId,
 * attemptId), passes it through named checks (a known tool, offered, arguments that decode, no person or dialog in the
 * way, an allowed URL, confined files), dispatches it to its tool's handler (engine tools through the Stagehand policy
 * and the cascade, session tools on the session) and answers every call, success or error, with the state block.
 * The checks are in Router/Checks.ts, the session's starting storage state in Router/StorageStart.ts.
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import { Egress } from "../Egress/Egress.ts"
import * as Screenshot from "../Engine/Screenshot.ts"
import { Unsupported } from "../Errors/Engine.ts"
import { DialogOpen } from "../Errors/Page.ts"
import { Internal } from "../Errors/Service.ts"
import { toErrorInfo } from "../Errors.ts"
import * as Events from "../Logging/Events.ts"
import * as Secrets from "../Logging/Secrets.ts"
import * as Files from "../Sandbox/Files.ts"
import { type PageEvent, Sandbox } from "../Sandbox/Sandbox.ts"
import { StorageStates } from "../Store/StorageStates.ts"
import { Cascade } from "./Cascade.ts"
import { Engines } from "./Engines.ts"
import * as HandoffTools from "./HandoffTools.ts"
import { type CascadeConfig, cascadeFor, defaultPolicy, handsToPerson, type Policy, platformOf } from "./Policy.ts"
import { Replay, type Replayed } from "./Replay.ts"
import * as Checks from "./Router/Checks.ts"
import * as Steps from "./Router/Steps.ts"
import * as StorageStart from "./Router/StorageStart.ts"
import * as StagehandFallback from "./StagehandFallback.ts"
import * as StateBlock from "./StateBlock.ts"
import * as Tool from "./Tool.ts"
import * as Tools from "./Tools.ts"
import * as UrlPolicy from "./UrlPolicy.ts"

export type { StateBlock, ToolError } from "./StateBlock.ts"
export type { CallMeta } from "./Tool.ts"

/** A call's answer; `Result` is the tool's result type when the call named its tool (`Tools.ResultOf`). */
export interface ToolAnswer<Result = unknown> {
  readonly ok: boolean
  readonly result?: Result
  readonly error?: StateBlock.ToolError
  /** Guidance for the agent: the retry and fallback messages of seed 000. */
  readonly message?: string
  /** What happened on the pages since the last answer: a tab opened, a dialog, files chosen, a download. */
  readonly pageEvents?: ReadonlyArray<PageEvent>
  readonly traceId: string
  readonly stepId?: string
  readonly attemptId: string
  /** Without what did not change since the session's previous answer (`browser.status` always has it all). */
  readonly state: StateBlock.AnswerState
  /** What the call made that a client may fetch apart from the answer: a screenshot, a PDF, a whole snapshot. */
  readonly resources?: ReadonlyArray<Tool.Resource>
}

export interface RouterOptions extends StagehandFallback.StagehandFallbackOptions {
  readonly policy?: Policy
  /** Largest tool-argument payload accepted, as JSON bytes. */
  readonly maxArgumentBytes?: number
  /** Folders a call may upload files from; default: the service's working directory. */
  readonly uploadRoots?: ReadonlyArray<string>
  /** Tools the operator turned on (evaluate is off by default). */
  readonly features?: Partial<Tool.Features>
  /** The saved storage state every browser of the session starts from, unless a first call names another. */
  readonly storageState?: string
  /** The largest screenshot answers carry (Screenshot.ts); default: what model APIs accept. */
  readonly screenshot?: Screenshot.Limits
}

/** Groups identical calls in logs without writing their values. */
const hashArgs = (args: unknown) => createHash("sha256").update(JSON.stringify(args)).digest("hex").slice(0, 16)

export class Router extends Context.Service<
  Router,
  {
    /**
     * Runs a tool. Named by a literal (`"browser.navigate"`), its arguments and its answer's result take the tool's
     * types, as `Toolkit.handle` does; named by a string known only at run time, they are `unknown`.
     */
    readonly call: <Name extends string>(
      tool: Name,
      args: Tools.ArgsOf<Name>,
      meta?: Tool.CallMeta
    ) => Effect.Effect<ToolAnswer<Tools.ResultOf<Name>>>
    /** The state block alone, for status surfaces. */
    readonly state: (meta?: Tool.CallMeta) => Effect.Effect<StateBlock.StateBlock>
    /** Whether a person holds the browser now: automation calls are then answered at once, without waiting. */
    readonly occupied: Effect.Effect<boolean>
  }
>()("switchyard/Router") {
  static readonly layer = (options: RouterOptions = {}) =>
    Layer.effect(
      Router,
      Effect.gen(function* () {
        const sandbox = yield* Sandbox
        const cascade = yield* Cascade
        const engines = yield* Engines
        const policy = options.policy ?? defaultPolicy
        /** The page the session's last answer was on: it picks the cascade for calls that open none. */
        const lastUrl = yield* Ref.make<string | undefined>(undefined)
        const handoff = yield* HandoffTools.make({
          allowed: Ref.get(lastUrl).pipe(Effect.map((url) => handsToPerson(cascadeFor(policy, url), "agent_request")))
        })
        const features: Tool.Features = { ...Tool.defaultFeatures, ...options.features }
        const states = StateBlock.make({ sandbox, engines, takeover: handoff.active, features })
        const route = StagehandFallback.make(options, (level) => states.usable(level).pipe(Effect.map(Option.isSome)))
        const storage = yield* Effect.serviceOption(StorageStates)
        const replay = yield* Effect.serviceOption(Replay)
        const session: Tool.Session = { sandbox, handoff, storage }
        // Which URLs a tool that opens one (`browser.navigate`) may open: the session's egress policy.
        const egress = Option.getOrUndefined(yield* Effect.serviceOption(Egress))
        const urlPolicy = egress?.policy ?? UrlPolicy.defaultPolicy
        const maxArgumentBytes = options.maxArgumentBytes ?? 256 * 1024
        const uploadRoots = options.uploadRoots ?? [process.cwd()]
        const screenshotLimits = options.screenshot ?? Screenshot.defaults
        const steps = yield* Steps.make()
        const cascadeNow = Ref.get(lastUrl).pipe(Effect.map((url) => cascadeFor(policy, url)))

        const answer = (
          base: { traceId: string; stepId: string | undefined; attemptId: string },
          step: Steps.StepState,
          config: CascadeConfig,
          outcome:
            | { ok: true; result: unknown; resources?: ReadonlyArray<Tool.Resource> }
            | { ok: false; error: StateBlock.ToolError },
          message?: string,
          replayed = false,
          servedBy?: Replayed<unknown>["servedBy"]
        ) =>
          Effect.gen(function* () {
            const status = { ...(yield* sandbox.status), ...servedBy }
            const { stagehandDisabled } = yield* Ref.get(step.flags)
            const block = yield* states.block(stagehandDisabled, status, config)
            // A replayed answer says so: its level is the replay level, in front of the cascade.
            const state: StateBlock.StateBlock = replayed ? { ...block, level: "replay" } : block
            const pageEvents = yield* sandbox.events
            if (state.url !== null) yield* Ref.set(lastUrl, state.url)
            // A page that echoes a configured secret does not hand it back: the answer carries its reference.
            return Secrets.scrubDeep({
              ...outcome,
              ...(message === undefined ? {} : { message }),
              ...(pageEvents.length === 0 ? {} : { pageEvents }),
              traceId: base.traceId,
              ...(base.stepId === undefined ? {} : { stepId: base.stepId }),
              attemptId: base.attemptId,
              state
            } satisfies ToolAnswer)
          }).pipe(Effect.withSpan("Router.answer"))

        /** One system-log line per call; failures also reach stderr as a one-line summary. */
        const logCall = (tool: string, started: number, answer: ToolAnswer) =>
          Effect.gen(function* () {
            const line = JSON.stringify({
              event: "tool_call",
              tool,
              traceId: answer.traceId,
              ...(answer.stepId === undefined ? {} : { stepId: answer.stepId }),
              attemptId: answer.attemptId,
              ok: answer.ok,
              engine: answer.state.engine,
              durationMs: (yield* Clock.currentTimeMillis) - started,
              ...(answer.error ? { errorType: answer.error.type, reason: answer.error.message } : {})
            })
            return yield* answer.ok ? Effect.logInfo(line) : Effect.logWarning(line)
          }).pipe(Effect.withSpan("Router.logCall"))

        /** The levels whose engine the call means something to (element references: the engine that made them). */
        const tried = (config: CascadeConfig, bound: Tool.Bound & { readonly _tag: "engine" }) =>
          Effect.gen(function* () {
            const levels: Array<CascadeConfig["levels"][number]> = []
            for (const level of config.levels) {
              const spec = yield* states.usable(level)
              if (Option.isNone(spec) || bound.tries(spec.value.capabilities)) levels.push(level)
            }
            return levels.length < config.levels.length ? { ...config, levels } : config
          })

        /** A call that waits by design gets an attempt limit its wait fits in, and one attempt per level. */
        const waiting = (config: CascadeConfig, waitsMs: number | undefined): CascadeConfig =>
          waitsMs === undefined
            ? config
            : {
                ...config,
                levels: config.levels.map((level) => ({
                  ...level,
                  retryCount: 0,
                  timeoutPerAttemptMs: Math.max(level.timeoutPerAttemptMs, waitsMs + 5_000)
                }))
              }

        const call = Effect.fn("Router.call")(function* (toolName: string, rawArgs: unknown, meta: Tool.CallMeta = {}) {
          const started = yield* Clock.currentTimeMillis
          const answer = yield* callUnlogged(toolName, rawArgs, meta)
          yield* logCall(toolName, started, answer)
          return yield* changedOnly(toolName, answer)
        })

        // Answers carry what rarely changes only when it changed since the session's previous answer.
        const sent = yield* Ref.make<StateBlock.Sent>({})
        const changedOnly = (toolName: string, answer: ToolAnswer) =>
          Ref.modify(sent, (before): [ToolAnswer, StateBlock.Sent] => {
            const full = Option.exists(Tools.find(toolName), (tool) => tool.fullState)
            const [state, after] = StateBlock.changedOnly(answer.state, before, full)
            return [{ ...answer, state }, after]
          })

        const startFrom = yield* StorageStart.make(sandbox, storage)
        const { known, offered, decoded, stateGiven, engineMay } = Checks.make({
          sandbox,
          handoff,
          features,
          egress,
          urlPolicy,
          maxArgumentBytes,
          uploadRoots,
          startFrom,
          storageState: options.storageState
        })

        /** A success as answered: the result, and the resources it made when it made some. */
        const succeeded = (tool: Tool.Any, value: unknown) => {
          const made = tool.produces(value)
          return {
            ok: true as const,
            result: made.result,
            ...(made.resources.length === 0 ? {} : { resources: made.resources })
          }
        }

        /** The call's ids (its attempt numbered in its request or step) and the cascade for the page it starts on. */
        const begin = (meta: Tool.CallMeta) =>
          Effect.gen(function* () {
            const traceId = meta.traceId ?? crypto.randomUUID()
            const step = yield* steps.get(traceId, meta.stepId)
            const n = yield* Ref.updateAndGet(step.calls, (calls) => calls + 1)
            const base = {
              traceId,
              stepId: meta.stepId,
              attemptId: `${traceId}${meta.stepId ? `/${meta.stepId}` : ""}#${n}`
            }
            return { traceId, step, base, config: yield* cascadeNow }
          })

        const callUnlogged = (toolName: string, rawArgs: unknown, meta: Tool.CallMeta) =>
          Effect.gen(function* () {
            const { traceId, step, base, config } = yield* begin(meta)
            const fail = (error: StateBlock.ToolError) => answer(base, step, config, { ok: false, error })
            return yield* Effect.gen(function* () {
              const tool = yield* known(toolName)
              yield* offered(tool)
              const bound = yield* decoded(tool, rawArgs)
              yield* stateGiven(tool, meta)
              const files = bound._tag === "engine" ? yield* engineMay(tool, bound) : undefined
              const url = yield* Ref.get(lastUrl)
              const scoped = <A, E>(self: Effect.Effect<A, E>) =>
                Effect.flatMap(Ref.make(0), (attempts) =>
                  self.pipe(
                    Effect.provideService(Screenshot.CurrentLimits, screenshotLimits),
                    Effect.provideService(Events.CurrentCall, {
                      traceId,
                      attemptId: base.attemptId,
                      action: tool.name,
                      toolArgsHash: hashArgs(bound.args),
                      platform: meta.platform ?? platformOf(bound._tag === "engine" ? (bound.opens ?? url) : url),
                      toolArgs: bound.args,
                      attempts,
                      flags: Ref.get(step.flags),
                      ...(meta.stepId === undefined ? {} : { stepId: meta.stepId })
                    }),
                    Effect.withSpan(`Router.${tool.name}`, {
                      attributes: { traceId, stepId: meta.stepId, attemptId: base.attemptId }
                    })
                  )
                )
              if (bound._tag === "session") {
                const outcome = yield* Effect.result(scoped(bound.run(session)))
                return yield* outcome._tag === "Success"
                  ? answer(base, step, config, succeeded(tool, outcome.success))
                  : fail(toErrorInfo(outcome.failure))
              }
              const used = waiting(yield* tried(cascadeFor(policy, bound.opens ?? url), bound), bound.waitsMs)
              if (used.levels.length === 0) {
                return yield* Checks.refusing(
                  Effect.fail(new Unsupported({ action: tool.name, message: bound.untried }))
                )
              }
              // Named files answer any file chooser the call's click opens, whichever engine clicks.
              const choosing = <E>(self: Effect.Effect<unknown, E>) =>
                files === undefined
                  ? self
                  : sandbox
                      .chooseFiles(files, self)
                      .pipe(
                        Effect.flatMap(([result, chosen]) =>
                          chosen > 0 || Files.setInputDirectly(result)
                            ? Effect.succeed(result)
                            : Files.noChooser(tool.name)
                        )
                      )
              const routed = route(tool.name, used, step.flags, (levels) =>
                choosing(
                  cascade.call({
                    config: levels,
                    action: tool.name,
                    isAct: bound.isAct,
                    readsOnly: tool.annotations.readOnlyHint === true,
                    modelFree: Secrets.refersToSecret(bound.args),
                    run: bound.run,
                    levelIndex: (level) => used.levels.indexOf(level)
                  })
                )
              )
              const { outcome, message, replayed, servedBy } = yield* scoped(
                Option.isSome(replay)
                  ? replay.value.around({ tool: tool.name, args: bound.args }, routed)
                  : routed.pipe(Effect.map((r): Replayed<unknown> => ({ ...r, replayed: false })))
              )
              if (outcome._tag === "Success") {
                return yield* answer(base, step, used, succeeded(tool, outcome.success), message, replayed, servedBy)
              }
              // The act did what it was asked and the page answered with a dialog: that is its outcome, not a failure.
              if (bound.isAct && outcome.failure instanceof DialogOpen && outcome.failure.openedByCall) {
                const opened = outcome.failure.dialog
                const result = {
                  success: true as const,
                  description: `done; the page then opened a ${opened.type} dialog ${JSON.stringify(opened.message.slice(0, 200))}: answer it with browser.dialog (accept: true or false)`,
                  dialog: opened
                }
                return yield* answer(base, step, used, { ok: true, result }, message, replayed)
              }
              const { stagehandDisabled } = yield* Ref.get(step.flags)
              const error = yield* states.explain(outcome.failure, bound, stagehandDisabled, yield* cascadeNow)
              return yield* answer(base, step, used, { ok: false, error }, message, replayed)
            }).pipe(
              Effect.catchTag("Refused", (refused) => fail(refused.error)),
              // A defect (a bug) still gets a typed answer at once, and the session goes on; the log keeps the defect.
              Effect.catchDefect((defect) =>
                Effect.logError(`${toolName} ended by a defect`, defect).pipe(
                  Effect.andThen(
                    fail(
                      toErrorInfo(
                        new Internal({
                          action: toolName,
                          message: `the service failed on this call (logged under trace ${traceId}): ${defect instanceof Error ? defect.message : String(defect)}`,
                          sideEffect: Option.exists(Tools.find(toolName), (tool) => tool.changesPage)
                            ? "possible"
                            : "none"
                        })
                      )
                    )
                  )
                )
              )
            )
          })

        return Router.of({
          // The answer's result is what the named tool's handler returned (its result Schema's type).
          call: call as Router["Service"]["call"],
          occupied: handoff.active.pipe(Effect.map(Option.isSome)),
          state: Effect.fn("Router.state")(function* (meta: Tool.CallMeta = {}) {
            const step = meta.traceId ? yield* steps.find(meta.traceId, meta.stepId) : Option.none()
            const disabled = Option.isSome(step) && (yield* Ref.get(step.value.flags)).stagehandDisabled
            return yield* states.block(disabled, yield* sandbox.status, yield* cascadeNow)
          })
        })
      })
    )
}
