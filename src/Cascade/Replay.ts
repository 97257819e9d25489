/**
 * The replay level, in front of the cascade: a sentence act (or an observe) that a level resolved before on a page of
 * the same site and route shape is replayed by the model-free engine — its target found again by the same role, name
 * and context, acted on, and checked as every act is — before any model is asked. A target not found or not one, or a
 * failed check, goes on to the cascade at once (no retry spent on the replay); what the cascade then resolves is kept
 * for next time. Keys and placeholders are `Replay/Key.ts`, targets and methods `Replay/Target.ts`; the kept entries
 * are the store's (`Store/Resolutions.ts`).
 *
 * Safe by construction: nothing is acted on through a reference or selector that was kept, only on the one element
 * that is now what the kept target was (a submit, pay, delete or send included); a replay that may have acted and
 * failed (a click) is answered as it is, never followed by the cascade acting again.
 */
import { Clock, Context, Effect, Layer, Option, Ref, Result } from "effect"
import { Egress } from "../Egress/Egress.ts"
import * as AccessibilityTree from "../Engine/AccessibilityTree.ts"
import type { Action, Engine } from "../Engine/Engine.ts"
import * as Instruction from "../Engine/Instruction.ts"
import * as Elements from "../Engine/Playwright/Elements.ts"
import * as Instructions from "../Engine/Playwright/Instructions.ts"
import * as EngineId from "../EngineId.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as Events from "../Logging/Events.ts"
import * as Secrets from "../Logging/Secrets.ts"
import { Sandbox } from "../Sandbox/Sandbox.ts"
import { type Entry, idOf, type Key, type Resolution, type Resolutions, type Step } from "../Store/Resolutions.ts"
import { policing } from "./Cascade.ts"
import { Engines } from "./Engines.ts"
import type { Level } from "./Policy.ts"
import * as Keys from "./Replay/Key.ts"
import {
  askedMethod,
  describeTarget,
  isDestructive,
  isTarget,
  pointing,
  replayable,
  sameSelector,
  targetOf
} from "./Replay/Target.ts"
import type { Routed } from "./StagehandFallback.ts"

export interface ReplayOptions {
  /** `SWITCHYARD_REPLAY=off` turns the level off: nothing is replayed or kept. */
  readonly enabled: boolean
  readonly store: Resolutions["Service"]
  /** Longest a replay may take (finding its target and acting); default 15 s. */
  readonly timeoutMs?: number
}

/** A call as the replay level sees it: its tool and arguments. */
export interface ReplayCall {
  readonly tool: string
  readonly args: unknown
}

export interface Replayed<A> extends Routed<A> {
  /** The answer came from the replay level (its `state.level` says `replay`). */
  readonly replayed: boolean
  /** The engine that served the call, when another is connected now (what it did was identified on the model-free
   * level afterwards): the answer's state names the one that served. */
  readonly servedBy?: { readonly engine: EngineId.EngineKind; readonly mode: EngineId.EngineMode | null }
}

/** The model-free level replays run on. */
const playwright: Level = { engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 15_000 }

/** A call the replay level serves: an act by sentence, or an observe of something. */
const servedCall = (call: ReplayCall): { readonly tool: Key["tool"]; readonly said: Instruction.Said } | undefined => {
  const args = call.args as { readonly instruction?: unknown }
  if (typeof args !== "object" || args === null) return undefined
  // The instruction arrives parsed where the tool's arguments were decoded: its words and the grammar's reading.
  const said = args.instruction
  if (!Instruction.isSaid(said) || said.text.trim() === "") return undefined
  if (call.tool === "browser.act") return { tool: "act", said }
  // Every control of the page is what it shows now: a kept list would leave out a control shown since.
  if (call.tool === "browser.observe" && !Instructions.listsEverything(said.text)) return { tool: "observe", said }
  return undefined
}

/** What a replay came to. */
type Tried =
  | { readonly _tag: "hit"; readonly value: unknown; readonly target: string }
  | { readonly _tag: "miss"; readonly reason: string }
  /** It may have acted and failed: the answer is its error; the cascade does not act again. */
  | { readonly _tag: "halt"; readonly error: SwitchyardError; readonly target: string }

const miss = (reason: string): Tried => ({ _tag: "miss", reason })

/** Failures that end a replayed act as they end a cascade attempt: the page or policy, not the replay, decided. */
const final = new Set(["DialogOpen", "PolicyRejected", "LimitExceeded"])

export class Replay extends Context.Service<
  Replay,
  {
    /** Runs `cascade` for `call` behind the replay level: replayed when a kept resolution holds, kept when not. */
    readonly around: (call: ReplayCall, cascade: Effect.Effect<Routed<unknown>>) => Effect.Effect<Replayed<unknown>>
  }
>()("switchyard/Replay") {
  static readonly layer = (options: ReplayOptions) => Layer.effect(Replay, make(options))
}

/** An observe the model-free level answered: it lists what the page shows at each call, for no model request, so a
 * kept list could only leave out what the page has shown since. */
const listedWithoutModel = (tool: Key["tool"], resolvedBy: string) =>
  tool === "observe" && resolvedBy === EngineId.label({ kind: "playwright" })

export const make = Effect.fnUntraced(function* (options: ReplayOptions) {
  const sandbox = yield* Sandbox
  const engines = yield* Engines
  const policed = policing(sandbox, yield* Effect.serviceOption(Egress))
  const store = options.store
  const timeoutMs = options.timeoutMs ?? 15_000
  /** The store is a convenience: when it cannot be read or written, the call goes on without it. */
  const quietly = <A>(self: Effect.Effect<A, SwitchyardError>, otherwise: A) =>
    self.pipe(
      Effect.tapError((e) => Effect.logWarning(`replay: ${e.message}`)),
      Effect.orElseSucceed(() => otherwise)
    )
  const onPlaywright = <A>(f: (engine: Engine["Service"]) => Effect.Effect<A, SwitchyardError>) =>
    engines.specFor(playwright).pipe(Effect.flatMap((spec) => sandbox.use(spec, f)))

  /** The first key of the instruction's that holds an entry; an expired one is said so. */
  const find = (keys: ReadonlyArray<Key>) =>
    Effect.gen(function* () {
      let expired: Entry | undefined
      for (const key of keys) {
        const found = yield* quietly(store.lookup(key), { _tag: "absent" } as const)
        // An observe the model-free level listed (kept before such were not) is not replayed either.
        if (found._tag === "found" && !listedWithoutModel(key.tool, found.entry.resolvedBy))
          return { entry: found.entry, key }
        if (found._tag === "expired") expired ??= found.entry
      }
      return { expired }
    })

  /** Replays an entry on the model-free level: its targets found again, then acted on (an act) or listed. */
  const replay = (entry: Entry, tool: Key["tool"], instruction: string) =>
    Effect.gen(function* () {
      // The target once the act began: a failure after that may have acted, and is judged rather than missed.
      const acting = yield* Ref.make<string | undefined>(undefined)
      const work = onPlaywright((engine) =>
        Effect.gen(function* () {
          if (engine.elements === undefined) return miss("the model-free level lists no elements")
          const elements = yield* engine.elements()
          const found: Array<AccessibilityTree.Element> = []
          for (const step of entry.resolution.steps) {
            const matching = elements.filter(isTarget(step.target))
            if (matching.length === 0) return miss(`no ${describeTarget(step.target)} on the page`)
            if (matching.length > 1)
              return miss(`${matching.length} elements on the page are ${describeTarget(step.target)}`)
            found.push(matching[0]!)
          }
          const actions = entry.resolution.steps.map((step, i): Action => {
            const args = Keys.fill(step.arguments, instruction)
            // An observe lists them as the model-free level does (its frame, a file input as an upload): one control,
            // one description, whoever answers.
            if (tool === "observe") return Instructions.listed(found[i]!, step.method, args)
            return {
              selector: `aria-ref=${found[i]!.ref}`,
              method: step.method,
              arguments: args,
              description: AccessibilityTree.describeIn(found[i]!)
            }
          })
          const target = actions.map((a) => a.description).join(", ")
          if (tool === "observe") return { _tag: "hit", value: actions, target } satisfies Tried
          yield* Ref.set(acting, target)
          const done = yield* Effect.result(policed("browser.act", "playwright", engine.act(actions[0]!)))
          if (Result.isSuccess(done)) return { _tag: "hit", value: done.success, target } satisfies Tried
          return judge(done.failure, entry.resolution.steps[0]!, target)
        })
      )
      return yield* work.pipe(
        Effect.timeoutOption(timeoutMs),
        Effect.map((outcome) =>
          Option.getOrElse(outcome, (): Tried => miss(`the replay took longer than ${timeoutMs} ms`))
        ),
        Effect.catch((error: SwitchyardError) =>
          Ref.get(acting).pipe(
            Effect.map(
              (acted): Tried =>
                acted === undefined
                  ? miss(`${error.type}: ${error.message}`)
                  : judge(error, entry.resolution.steps[0]!, acted)
            )
          )
        )
      )
    })

  /** A replayed act that failed: a miss the cascade repairs, unless it may have acted where acting twice costs. */
  const judge = (error: SwitchyardError, step: Step, target: string): Tried => {
    if (final.has(error._tag) || (error._tag === "CdpClosed" && error.lost !== undefined))
      return { _tag: "halt", error, target }
    const possible = "sideEffect" in error && error.sideEffect === "possible"
    if (possible && pointing.has(step.method.toLowerCase())) return { _tag: "halt", error, target }
    return miss(`${error.type}: ${error.message}`)
  }

  /** What a level's answer acted on: its action (an act), or the actions it found (an observe). */
  const actionsOf = (tool: Key["tool"], value: unknown): ReadonlyArray<Action> => {
    if (tool === "observe") return Array.isArray(value) ? (value as ReadonlyArray<Action>) : []
    const action = (value as { readonly action?: Action } | null)?.action
    return action === undefined ? [] : [action]
  }

  /** The element a selector names, as the element model names it; none when the model-free level cannot tell. */
  const identify = (selectors: ReadonlyArray<string>) => {
    const unknown = () => selectors.map(() => Option.none<AccessibilityTree.Element>())
    return onPlaywright((engine) =>
      engine.identify === undefined
        ? Effect.succeed(unknown())
        : Effect.forEach(selectors, (selector) => engine.identify!(selector))
    ).pipe(
      // A page that does not answer keeps the call waiting no longer than a replay would.
      Effect.timeoutOption(timeoutMs),
      Effect.map((found) => Option.getOrElse(found, unknown)),
      Effect.orElseSucceed(unknown)
    )
  }

  /**
   * Keeps what the cascade resolved, when its targets can be named so that a new page load finds them again: each is
   * identified on the page now, or was identified before the act (`before`: a target learned because it went with
   * the navigation its act started).
   */
  const record = (
    place: { readonly site: string; readonly route: string },
    tool: Key["tool"],
    said: Instruction.Said,
    value: unknown,
    by: { readonly costMs: number; readonly resolvedBy: string },
    before?: { readonly selector: string; readonly element: Option.Option<AccessibilityTree.Element> }
  ) =>
    Effect.gen(function* () {
      const { resolvedBy } = by
      const actions = actionsOf(tool, value)
      const notKept = (reason: string) =>
        Events.emit({
          event: "replay",
          outcome: "not_recorded",
          reason,
          entry: "",
          site: place.site,
          route: place.route,
          resolvedBy
        })
      if (listedWithoutModel(tool, resolvedBy))
        return yield* notKept("the model-free level lists the page as it is at each call")
      if (actions.length === 0)
        return yield* notKept(
          tool === "act"
            ? `${resolvedBy} acted without naming an element (at screen coordinates, or several actions)`
            : "nothing was found"
        )
      const unfit = actions.find((a) => !replayable.has(a.method.toLowerCase()))
      if (unfit !== undefined && tool === "act") return yield* notKept(`${unfit.method} acts are not replayed`)
      const learned = (selector: string) =>
        before !== undefined && Option.isSome(before.element) && sameSelector(before.selector, selector)
          ? before.element
          : undefined
      const now = yield* identify(actions.map((a) => a.selector))
      const identified = actions.map((a, i) => learned(a.selector) ?? now[i]!)
      const kept = Keys.keep(
        place,
        tool,
        said.text,
        actions.map((a) => Secrets.scrubDeep([...a.arguments]))
      )
      const keep = (resolution: Resolution) => store.record(kept.key, resolution, by)
      const elements = identified.flatMap((o) => (Option.isSome(o) && o.value.name !== "" ? [o.value] : []))
      if (elements.length !== actions.length) {
        const [only] = actions
        // A selector of the level's own (an XPath) that names nothing now: its element went with a navigation.
        if (tool !== "act" || only === undefined || Elements.refOf(only.selector) !== undefined)
          return yield* notKept("the element acted on has no name the page gives it")
        const saved = yield* Effect.result(keep({ steps: [], destructive: false, learning: only.selector }))
        return yield* notKept(
          Result.isFailure(saved)
            ? saved.failure.message
            : (value as { readonly navigated?: unknown }).navigated !== undefined
              ? "the element acted on went with the navigation it started: it is identified before the act next time"
              : "the element acted on is not on the page after the act: it is identified before the act next time"
        )
      }
      // An act that moved the page on (its target learned because it went with the navigation) costs to repeat.
      const navigated =
        tool === "act" &&
        ((value as { readonly navigated?: unknown }).navigated !== undefined ||
          actions.some((a) => learned(a.selector) !== undefined))
      const steps = elements.map(
        (e, i): Step => ({
          target: targetOf(e),
          method: tool === "act" ? askedMethod(said, actions[i]!.method) : actions[i]!.method,
          arguments: kept.args[i]!
        })
      )
      const saved = yield* Effect.result(keep({ steps, destructive: steps.some((s) => isDestructive(s, navigated)) }))
      if (Result.isFailure(saved)) return yield* notKept(saved.failure.message)
      yield* Events.emit({
        event: "replay",
        outcome: "recorded",
        entry: idOf(kept.key),
        site: place.site,
        route: place.route,
        target: steps.map((s) => describeTarget(s.target)).join(", "),
        resolvedBy
      })
    })

  const around = (call: ReplayCall, cascade: Effect.Effect<Routed<unknown>>) =>
    Effect.gen(function* () {
      const served = servedCall(call)
      const plain = cascade.pipe(Effect.map((routed): Replayed<unknown> => ({ ...routed, replayed: false })))
      if (!options.enabled || served === undefined) return yield* plain
      const location = yield* sandbox.location
      const place = Option.isSome(location) ? Keys.placeOf(location.value.url) : undefined
      if (place === undefined) return yield* plain
      const { tool, said } = served
      const instruction = said.text
      const keys = Keys.candidates(place, tool, instruction)
      const found = yield* find(keys)
      const event = { site: place.site, route: place.route }
      let before: { readonly selector: string; readonly element: Option.Option<AccessibilityTree.Element> } | undefined
      const learning = found.entry?.resolution.learning
      if (found.entry !== undefined && found.key !== undefined && learning !== undefined) {
        // Its target went with a navigation last time: named on the page now, before the cascade acts on it.
        const [element] = yield* identify([learning])
        before = { selector: learning, element: element! }
        yield* quietly(store.miss(found.key, "absent"), undefined)
        yield* Events.emit({
          event: "replay",
          outcome: "miss",
          reason: "learning: the target went with a navigation last time; it is named before the cascade acts",
          entry: found.entry.id,
          ...event,
          ...(Option.isSome(element!) ? { target: AccessibilityTree.describeIn(element!.value) } : {})
        })
      } else if (found.entry !== undefined && found.key !== undefined) {
        const started = yield* Clock.currentTimeMillis
        const tried = yield* replay(found.entry, tool, instruction)
        const replayMs = (yield* Clock.currentTimeMillis) - started
        if (tried._tag !== "miss") {
          const savedMs = Math.max(0, found.entry.costMs - replayMs)
          yield* quietly(store.hit(found.key, { replayMs }), undefined)
          yield* Events.emit({
            event: "replay",
            outcome: "hit",
            entry: found.entry.id,
            ...event,
            target: tried.target,
            durationMs: replayMs,
            savedMs,
            ...(tried._tag === "halt" ? { reason: `${tried.error.type}: ${tried.error.message}` } : {})
          })
          return {
            outcome: tried._tag === "hit" ? Result.succeed(tried.value) : Result.fail(tried.error),
            message: undefined,
            replayed: true
          }
        }
        yield* quietly(store.miss(found.key, "failed"), undefined)
        yield* Events.emit({
          event: "replay",
          outcome: "miss",
          reason: tried.reason,
          entry: found.entry.id,
          ...event,
          target: found.entry.resolution.steps.map((s) => describeTarget(s.target)).join(", "),
          durationMs: replayMs
        })
      } else {
        yield* quietly(store.miss(keys[0]!, "absent"), undefined)
        yield* Events.emit({
          event: "replay",
          outcome: "miss",
          reason:
            found.expired === undefined ? "nothing kept for this instruction on this page" : "the kept entry expired",
          entry: found.expired?.id ?? "",
          ...event
        })
      }
      const started = yield* Clock.currentTimeMillis
      const routed = yield* cascade
      const costMs = (yield* Clock.currentTimeMillis) - started
      if (Result.isFailure(routed.outcome)) return { ...routed, replayed: false }
      const { engine, mode } = yield* sandbox.status
      const resolvedBy = engine === null ? "unknown" : EngineId.label({ kind: engine, mode: mode ?? undefined })
      yield* record(place, tool, said, routed.outcome.success, { costMs, resolvedBy }, before).pipe(
        Effect.catchCause((cause) => Effect.logWarning(`replay: not kept: ${cause}`))
      )
      return { ...routed, replayed: false, ...(engine === null ? {} : { servedBy: { engine, mode } }) }
    }).pipe(Effect.withSpan("Replay.around", { attributes: { tool: call.tool } }))

  return Replay.of({ around })
})
