/**
 * The Chrome DevTools Protocol's names and types, from the `devtools-protocol` package: one source for every command's
 * parameters and result and every event's payload, so a raw-CDP call is checked where it is written.
 */
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping.js"

export type { Protocol } from "devtools-protocol/types/protocol.js"

/** A command name, e.g. `"Runtime.evaluate"`. */
export type Command = keyof ProtocolMapping.Commands

/** What a command answers with. */
export type Result<M extends Command> = ProtocolMapping.Commands[M]["returnType"]

type ParamsTuple<M extends Command> = ProtocolMapping.Commands[M]["paramsType"]

/**
 * What follows the name in `send(method, …)`: the parameters (required when the protocol requires them, `{}` for a
 * command that takes none) and the flat session to run on (absent: the browser target).
 */
export type Args<M extends Command> =
  ParamsTuple<M> extends [infer P]
    ? [params: P, sessionId?: string]
    : ParamsTuple<M> extends [(infer P)?]
      ? [params?: P, sessionId?: string]
      : [params?: Record<string, never>, sessionId?: string]

/** An event name, e.g. `"Target.targetCrashed"`. */
export type EventName = keyof ProtocolMapping.Events

/** An event's payload (`undefined` for the few events that carry none). */
export type EventParams<E extends EventName> = ProtocolMapping.Events[E] extends [infer P] ? P : undefined

/** One event as it arrives: its name, payload and the flat session it came from; `method` tells the payload apart. */
export type Event = {
  readonly [E in EventName]: { readonly method: E; readonly params: EventParams<E>; readonly sessionId?: string }
}[EventName]
