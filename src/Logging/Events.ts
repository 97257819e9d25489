/**
 * Engine and cascade events (seed 001 §10): what the Sandbox and the Cascade report as they connect, switch, fail
 * and escalate. Emitted through the `Events` reference, which logs by default; the attempt log listens to it.
 */
import { Context, Effect } from "effect"

/** Which tool call an event belongs to: set by the Router for the duration of a call. */
export interface CallContext {
  readonly traceId: string
  readonly stepId?: string
  readonly attemptId?: string
  readonly action?: string
}

export const CurrentCall = Context.Reference<CallContext | undefined>("switchyard/CurrentCall", {
  defaultValue: () => undefined
})

interface EngineRef {
  readonly engine: string
  readonly mode?: string
}

export type EngineEvent =
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

export type Stamped = EngineEvent & CallContext & { readonly ts: string }

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
    yield* sink.emit({ ...call, ...event, ts: new Date().toISOString() } as Stamped)
  })

/** A sink that keeps events in memory, for tests and for the status of a running call. */
export const memory = () => {
  const events: Array<Stamped> = []
  const sink: EventSink = { emit: (event) => Effect.sync(() => void events.push(event)) }
  return { events, sink }
}
