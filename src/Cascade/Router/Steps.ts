/**
 * What the Router keeps per request or step (Stagehand's retry and disable flags, the calls that number its attempts),
 * for the most recently used traces only, as plain values: nothing of the call that made an entry stays with it.
 */
import { Effect, Option, Ref } from "effect"
import type * as StagehandFallback from "../StagehandFallback.ts"

/** Per request or step: Stagehand's flags, and the calls made, which number the attempts. */
export interface StepState {
  readonly flags: Ref.Ref<StagehandFallback.Flags>
  readonly calls: Ref.Ref<number>
}

/** Traces kept; past this the least recently used is dropped, so a long-lived service stays bounded. */
export const maxTraces = 2_000

const key = (traceId: string, stepId: string | undefined) => `${traceId}\u0000${stepId ?? ""}`

export interface Steps {
  /** The state of a request or step, made on its first call. */
  readonly get: (traceId: string, stepId: string | undefined) => Effect.Effect<StepState>
  /** The state of a request or step that has made a call. */
  readonly find: (traceId: string, stepId: string | undefined) => Effect.Effect<Option.Option<StepState>>
}

// A plain Map, not an Effect Cache: a Cache entry holds the fiber of its lookup, and with it the calling span and the
// stack frames of the call that made it (several KiB a trace, thousands of traces when calls carry no traceId).
export const make = (capacity: number = maxTraces): Effect.Effect<Steps> =>
  Effect.sync(() => {
    // Insertion order is recency: a used entry is moved to the end, the first one is the least recently used.
    const held = new Map<string, StepState>()
    const touch = (k: string) => {
      const state = held.get(k)
      if (state !== undefined) {
        held.delete(k)
        held.set(k, state)
      }
      return state
    }
    return {
      get: (traceId, stepId) =>
        Effect.sync(() => {
          const k = key(traceId, stepId)
          const found = touch(k)
          if (found !== undefined) return found
          const made: StepState = {
            flags: Ref.makeUnsafe<StagehandFallback.Flags>({ stagehandRetryUsed: false, stagehandDisabled: false }),
            calls: Ref.makeUnsafe(0)
          }
          held.set(k, made)
          if (held.size > capacity) held.delete(held.keys().next().value as string)
          return made
        }),
      find: (traceId, stepId) => Effect.sync(() => Option.fromUndefinedOr(touch(key(traceId, stepId))))
    }
  })
