/**
 * Engine and cascade events (seed 001 §10) and the attempt lifecycle (seed 003), declared once as Schemas: what the
 * Sandbox and the Cascade emit through the `Events` reference (which logs by default; the attempt log listens to it),
 * and what readers of an attempt log decode its lines with.
 */
import { Clock, Context, Effect, type Option, type Ref, Schema, Struct } from "effect"
import { EngineKind, EngineMode } from "../EngineId.ts"

/** Which tool call an event belongs to: set by the Router for the duration of a call. */
export interface CallContext {
  readonly traceId: string
  readonly stepId?: string
  /** The call's id; engine attempts within it are numbered `<attemptId>.<n>`. */
  readonly attemptId?: string
  readonly action?: string
  /** Hash of the tool arguments, to group identical calls without logging their values. */
  readonly toolArgsHash?: string
  /** The site's platform (`greenhouse`, `workday`, … or `unknown`): the dashboard groups engine results by it. */
  readonly platform?: string
  /** The Router's per-request/step state, read when each event is stamped. */
  readonly flags?: Effect.Effect<{ readonly stagehandRetryUsed: boolean; readonly stagehandDisabled: boolean }>
  /** Engine attempts made so far in this call, across every cascade run the call makes. */
  readonly attempts?: Ref.Ref<number>
  /** The call's arguments (redacted when written), logged once, on each attempt's `start`. */
  readonly toolArgs?: unknown
}

export const CurrentCall = Context.Reference<CallContext | undefined>("switchyard/CurrentCall", {
  defaultValue: () => undefined
})

// ---------------------------------------------------------------------------------------------------------------
// The events.

const EngineRef = { engine: EngineKind, mode: Schema.optionalKey(EngineMode) }

const AttemptRef = {
  attemptId: Schema.String,
  /** The engine as seed 003 names it: `stagehand`, `magnitude`, `playwright`, `human`. */
  provider: EngineKind,
  ...EngineRef,
  level: Schema.Number,
  attempt: Schema.Number
}

/** An engine attempt begins (seed 003). */
export const Start = Schema.Struct({ event: Schema.tag("start"), ...AttemptRef })

export const Success = Schema.Struct({
  event: Schema.tag("success"),
  ...AttemptRef,
  durationMs: Schema.Number,
  outcome: Schema.Literal("success")
})

export const Failure = Schema.Struct({
  event: Schema.tag("failure"),
  ...AttemptRef,
  durationMs: Schema.Number,
  outcome: Schema.Literal("failure"),
  reason: Schema.String,
  errorType: Schema.String,
  retryable: Schema.Boolean
})

/** A cascade level or the Router gives up on an engine: `from`/`to` are engine labels (`to` may list several). */
export const Fallback = Schema.Struct({
  event: Schema.tag("fallback"),
  from: Schema.String,
  to: Schema.NullOr(Schema.String),
  reason: Schema.String
})

/** An engine is disabled for the rest of a request/step (Stagehand after its second failure). */
export const Disabled = Schema.Struct({ event: Schema.tag("disabled"), provider: EngineKind, reason: Schema.String })

export const EngineConnected = Schema.Struct({ event: Schema.tag("engine_connected"), ...EngineRef })

export const EngineDisconnected = Schema.Struct({
  event: Schema.tag("engine_disconnected"),
  ...EngineRef,
  reason: Schema.String
})

/** The session's client changed: `from`/`to` are engine labels (`stagehand:dom`), `from` is `none` at first. */
export const EngineSwitch = Schema.Struct({
  event: Schema.tag("engine_switch"),
  from: Schema.String,
  to: Schema.String,
  reason: Schema.String,
  durationMs: Schema.Number,
  success: Schema.Boolean,
  url: Schema.String
})

export const EngineOperation = Schema.Struct({
  event: Schema.tag("engine_operation"),
  ...EngineRef,
  level: Schema.Number,
  attempt: Schema.Number,
  durationMs: Schema.Number,
  outcome: Schema.Literals(["success", "failure"]),
  errorType: Schema.optionalKey(Schema.String)
})

export const EngineFailure = Schema.Struct({
  event: Schema.tag("engine_failure"),
  ...EngineRef,
  level: Schema.Number,
  attempt: Schema.Number,
  errorType: Schema.String,
  message: Schema.String,
  retryable: Schema.Boolean
})

export const CascadeEscalation = Schema.Struct({
  event: Schema.tag("cascade_escalation"),
  fromLevel: Schema.Number,
  from: Schema.String,
  toLevel: Schema.NullOr(Schema.Number),
  to: Schema.NullOr(Schema.String),
  reason: Schema.String
})

export const LevelSkipped = Schema.Struct({
  event: Schema.tag("level_skipped"),
  ...EngineRef,
  level: Schema.Number,
  reason: Schema.String
})

export const HumanTakeover = Schema.Struct({
  event: Schema.tag("human_takeover"),
  url: Schema.String,
  reason: Schema.String
})

/**
 * The replay level: a kept resolution replayed (`hit`), not replayed and why (`miss`: none kept, expired, its target
 * not found or not one, its check failed), or what a level resolved kept for next time (`recorded`, or
 * `not_recorded` and why). `target` is the element as a person names it; instructions' values are never logged.
 */
export const Replay = Schema.Struct({
  event: Schema.tag("replay"),
  outcome: Schema.Literals(["hit", "miss", "recorded", "not_recorded"]),
  reason: Schema.optionalKey(Schema.String),
  /** The kept entry's id (`switchyard cache list` shows it). */
  entry: Schema.String,
  site: Schema.String,
  route: Schema.String,
  target: Schema.optionalKey(Schema.String),
  /** The level that resolved what was kept, on `recorded`. */
  resolvedBy: Schema.optionalKey(Schema.String),
  durationMs: Schema.optionalKey(Schema.Number),
  /** On a hit: what the level that resolved it took, less what the replay took. */
  savedMs: Schema.optionalKey(Schema.Number)
})

/**
 * An attempt's screenshot is the one stored for an earlier attempt: nothing could have changed the page in between,
 * so the same picture was neither taken nor stored again. `file` is under the trace directory of `sameAsTrace`.
 */
export const ScreenshotShared = Schema.Struct({
  event: Schema.tag("screenshot_shared"),
  attemptId: Schema.String,
  /** The attempt whose screenshot it is. */
  sameAs: Schema.String,
  sameAsTrace: Schema.String,
  file: Schema.String
})

/** An attempt keeps no screenshot: the page it showed was gone before its frame could be taken (`reason` says how). */
export const ScreenshotLost = Schema.Struct({
  event: Schema.tag("screenshot_lost"),
  attemptId: Schema.String,
  reason: Schema.String
})

/** Attempt lifecycle (seed 003) and engine events (seed 001 §10): what `emit` takes. */
export const EngineEvent = Schema.Union([
  Start,
  Success,
  Failure,
  Fallback,
  Disabled,
  EngineConnected,
  EngineDisconnected,
  EngineSwitch,
  EngineOperation,
  EngineFailure,
  CascadeEscalation,
  LevelSkipped,
  HumanTakeover,
  Replay,
  ScreenshotShared,
  ScreenshotLost
]).pipe(Schema.toTaggedUnion("event"))
export type EngineEvent = typeof EngineEvent.Type

/**
 * A scenario run's step as its scenario wrote it (`site:` URLs kept), recorded by the scenario runner before the
 * step's calls, so that a trace can be turned back into a scenario.
 */
export const ScenarioStep = Schema.Struct({
  event: Schema.tag("scenario_step"),
  scenario: Schema.String,
  seed: Schema.optionalKey(Schema.Number)
})

// ---------------------------------------------------------------------------------------------------------------
// Stamped: a line of an attempt log.

/** What every logged event carries besides its own fields: the time and the ids of the call it belongs to. */
const Stamp = {
  ts: Schema.String,
  /** Absent outside a tool call; the attempt log keeps only events with one. */
  traceId: Schema.optionalKey(Schema.String),
  stepId: Schema.optionalKey(Schema.String),
  attemptId: Schema.optionalKey(Schema.String),
  action: Schema.optionalKey(Schema.String),
  toolArgsHash: Schema.optionalKey(Schema.String),
  platform: Schema.optionalKey(Schema.String),
  /** The Router's Stagehand flags for the request/step when the event was stamped. */
  retryUsed: Schema.optionalKey(Schema.Boolean),
  stagehandDisabled: Schema.optionalKey(Schema.Boolean),
  /** The call's arguments, redacted: on each `start`, and on a scenario step as written. */
  toolArgs: Schema.optionalKey(Schema.Unknown)
}

/** An event with the stamp; the event's own fields win (a lifecycle event's `attemptId` is the attempt's). */
const stamped = <const Fields extends Schema.Struct.Fields>(event: Schema.Struct<Fields>) =>
  Schema.Struct(Struct.assign(Stamp, event.fields))

/** An attempt log's line: an engine event or a scenario step, stamped. Readers decode lines with it. */
export const Stamped = Schema.Union([
  stamped(Start),
  stamped(Success),
  stamped(Failure),
  stamped(Fallback),
  stamped(Disabled),
  stamped(EngineConnected),
  stamped(EngineDisconnected),
  stamped(EngineSwitch),
  stamped(EngineOperation),
  stamped(EngineFailure),
  stamped(CascadeEscalation),
  stamped(LevelSkipped),
  stamped(HumanTakeover),
  stamped(Replay),
  stamped(ScreenshotShared),
  stamped(ScreenshotLost),
  stamped(ScenarioStep)
]).pipe(Schema.toTaggedUnion("event"))
export type Stamped = typeof Stamped.Type

/** An attempt log's line (parsed JSON) as an event; none for an older, foreign or damaged line. */
export const decode: (line: unknown) => Option.Option<Stamped> = Schema.decodeUnknownOption(Stamped)

// ---------------------------------------------------------------------------------------------------------------
// Emitting.

export interface EventSink {
  readonly emit: (event: Stamped) => Effect.Effect<void>
}

/** Where events go; the default writes them to the Effect log at debug level. */
export const Events = Context.Reference<EventSink>("switchyard/Events", {
  defaultValue: () => ({ emit: (event) => Effect.logDebug(event.event, event) })
})

/** Who else hears the current call's events as they happen (a client's progress notifications); none by default. */
export const Watcher = Context.Reference<((event: Stamped) => void) | undefined>("switchyard/EventWatcher", {
  defaultValue: () => undefined
})

/** Emits an event stamped with the time and the current call's ids. */
export const emit = (event: EngineEvent) =>
  Effect.gen(function* () {
    const sink = yield* Events
    const call: Partial<CallContext> = (yield* CurrentCall) ?? {}
    const { flags: readFlags, attempts: _, toolArgs, ...ids } = call
    const flags = readFlags === undefined ? undefined : yield* readFlags
    const stampedEvent: Stamped = {
      ts: new Date(yield* Clock.currentTimeMillis).toISOString(),
      ...ids,
      ...(flags ? { retryUsed: flags.stagehandRetryUsed, stagehandDisabled: flags.stagehandDisabled } : {}),
      ...(event.event === "start" && toolArgs !== undefined ? { toolArgs } : {}),
      ...event
    }
    yield* sink.emit(stampedEvent)
    const watcher = yield* Watcher
    if (watcher !== undefined) watcher(stampedEvent)
  })

/** A sink that keeps events in memory, for tests and for the status of a running call. */
export const memory = () => {
  const events: Array<Stamped> = []
  const sink: EventSink = { emit: (event) => Effect.sync(() => void events.push(event)) }
  return { events, sink }
}
