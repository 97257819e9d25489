/**
 * Engine and cascade events (seed 001 §10): what the Sandbox and the Cascade report as they connect, switch, fail
 * and escalate. Emitted through the `Events` reference, which logs by default; the attempt log listens to it.
 */
import { Context, Effect } from "effect"

/** Which tool call an event belongs to: set by the Router for the duration of a call. */
export interface CallContext {
  readonly traceId: string
  readonly stepId?: string
  /** The call's id; engine attempts within it are numbered `<attemptId>.<n>`. */
  readonly attemptId?: string
  readonly action?: string
  /** Hash of the tool arguments, to group identical calls without logging their values. */
  readonly toolArgsHash?: string
  /** The Router's per-request/step state, read when each event is stamped. */
  readonly flags?: { readonly stagehandRetryUsed: boolean; readonly stagehandDisabled: boolean }
  /** Engine attempts made so far in this call, across every cascade run the call makes. */
  readonly attempts?: { n: number }
  /** The call's arguments (redacted when written), logged once, on each attempt's `start`. */
  readonly toolArgs?: unknown
}

export const CurrentCall = Context.Reference<CallContext | undefined>("switchyard/CurrentCall", {
  defaultValue: () => undefined
})

interface EngineRef {
  readonly engine: string
  readonly mode?: string
}

interface AttemptRef extends EngineRef {
  readonly attemptId: string
  /** The engine as seed 003 names it: `stagehand`, `magnitude`, `playwright`, `human`. */
  readonly provider: string
  readonly level: number
  readonly attempt: number
}

/** Attempt lifecycle (seed 003) and engine events (seed 001 §10). */
export type EngineEvent =
  | ({ readonly event: "start" } & AttemptRef)
  | ({ readonly event: "success"; readonly outcome: "success"; readonly durationMs: number } & AttemptRef)
  | ({
      readonly event: "failure"
      readonly outcome: "failure"
      readonly durationMs: number
      readonly reason: string
      readonly errorType: string
      readonly retryable: boolean
    } & AttemptRef)
  | { readonly event: "fallback"; readonly reason: string; readonly from: string; readonly to: string | null }
  | { readonly event: "disabled"; readonly provider: string; readonly reason: string }
  | ({ readonly event: "engine_connected" } & EngineRef)
  | ({ readonly event: "engine_disconnected"; readonly reason: string } & EngineRef)
  | {
      readonly event: "engine_switch"
      readonly from: string
      readonly to: string
      readonly reason: string
      readonly durationMs: number
      readonly success: boolean
      readonly url: string
    }
  | ({
      readonly event: "engine_operation"
      readonly level: number
      readonly attempt: number
      readonly durationMs: number
      readonly outcome: "success" | "failure"
      readonly errorType?: string
    } & EngineRef)
  | ({
      readonly event: "engine_failure"
      readonly level: number
      readonly attempt: number
      readonly errorType: string
      readonly message: string
      readonly retryable: boolean
    } & EngineRef)
  | {
      readonly event: "cascade_escalation"
      readonly fromLevel: number
      readonly from: string
      readonly toLevel: number | null
      readonly to: string | null
      readonly reason: string
    }
  | ({ readonly event: "level_skipped"; readonly level: number; readonly reason: string } & EngineRef)
  | { readonly event: "human_takeover"; readonly url: string; readonly reason: string }

export type Stamped = EngineEvent &
  Omit<CallContext, "flags" | "attempts"> & {
    readonly ts: string
    readonly retryUsed?: boolean
    readonly stagehandDisabled?: boolean
  }

export interface EventSink {
  readonly emit: (event: Stamped) => Effect.Effect<void>
}

/** Where events go; the default writes them to the Effect log at debug level. */
export const Events = Context.Reference<EventSink>("switchyard/Events", {
  defaultValue: () => ({ emit: (event) => Effect.logDebug(event.event, event) })
})

/** Emits an event stamped with the time and the current call's ids. */
export const emit = (event: EngineEvent) =>
  Effect.gen(function* () {
    const sink = yield* Events
    const call = yield* CurrentCall
    const { flags, attempts: _, toolArgs, ...ids } = call ?? ({} as Partial<CallContext>)
    yield* sink.emit({
      ts: new Date().toISOString(),
      ...ids,
      ...(flags ? { retryUsed: flags.stagehandRetryUsed, stagehandDisabled: flags.stagehandDisabled } : {}),
      ...(event.event === "start" && toolArgs !== undefined ? { toolArgs } : {}),
      ...event
    } as Stamped)
  })

/** A sink that keeps events in memory, for tests and for the status of a running call. */
export const memory = () => {
  const events: Array<Stamped> = []
  const sink: EventSink = { emit: (event) => Effect.sync(() => void events.push(event)) }
  return { events, sink }
}
