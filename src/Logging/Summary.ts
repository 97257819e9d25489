/**
 * A trace's `summary.json` (seed 003): totals, per-provider success rates, per-error-type counts and the final
 * decision, folded from its events. Declared as a Schema so that readers of any log root decode it, never cast it.
 */
import { Schema } from "effect"
import type { Stamped } from "./Events.ts"

export const ProviderTotals = Schema.Struct({
  attempts: Schema.Number,
  successes: Schema.Number,
  failures: Schema.Number,
  /** successes / attempts, as of the last terminal event. */
  successRate: Schema.Number
})
export type ProviderTotals = typeof ProviderTotals.Type

export const Summary = Schema.Struct({
  traceId: Schema.String,
  startedAt: Schema.String,
  updatedAt: Schema.String,
  totals: Schema.Struct({
    events: Schema.Number,
    attempts: Schema.Number,
    successes: Schema.Number,
    failures: Schema.Number,
    fallbacks: Schema.Number,
    disabled: Schema.Number
  }),
  providers: Schema.Record(Schema.String, ProviderTotals),
  errorTypes: Schema.Record(Schema.String, Schema.Number),
  finalDecision: Schema.NullOr(
    Schema.Struct({
      outcome: Schema.Literals(["success", "failure"]),
      provider: Schema.String,
      action: Schema.NullOr(Schema.String),
      attemptId: Schema.String,
      errorType: Schema.NullOr(Schema.String)
    })
  )
})
export type Summary = typeof Summary.Type

/** A `summary.json`'s text as a summary of this version, or none (not JSON, or another shape). */
export const fromText = Schema.decodeUnknownOption(Schema.fromJsonString(Summary))

/** The summary of a trace with no events yet. */
export const empty = (traceId: string, ts: string): Summary => ({
  traceId,
  startedAt: ts,
  updatedAt: ts,
  totals: { events: 0, attempts: 0, successes: 0, failures: 0, fallbacks: 0, disabled: 0 },
  providers: {},
  errorTypes: {},
  finalDecision: null
})

const noAttempts: ProviderTotals = { attempts: 0, successes: 0, failures: 0, successRate: 0 }

/** Folds one event into a trace's summary: the summary is a function of the lines written so far. */
export const fold = (summary: Summary, event: Stamped): Summary => {
  const counted = { ...summary, updatedAt: event.ts, totals: { ...summary.totals, events: summary.totals.events + 1 } }
  const { totals } = counted
  const provider = (name: string, change: (p: ProviderTotals) => ProviderTotals) => {
    const p = change(summary.providers[name] ?? noAttempts)
    return { ...summary.providers, [name]: p }
  }
  const rated = (p: ProviderTotals) => ({ ...p, successRate: p.successes / Math.max(p.attempts, 1) })
  switch (event.event) {
    case "start":
      return {
        ...counted,
        totals: { ...totals, attempts: totals.attempts + 1 },
        providers: provider(event.provider, (p) => ({ ...p, attempts: p.attempts + 1 }))
      }
    case "success":
      return {
        ...counted,
        totals: { ...totals, successes: totals.successes + 1 },
        providers: provider(event.provider, (p) => rated({ ...p, successes: p.successes + 1 })),
        finalDecision: {
          outcome: "success",
          provider: event.provider,
          action: event.action ?? null,
          attemptId: event.attemptId,
          errorType: null
        }
      }
    case "failure":
      return {
        ...counted,
        totals: { ...totals, failures: totals.failures + 1 },
        providers: provider(event.provider, (p) => rated({ ...p, failures: p.failures + 1 })),
        errorTypes: { ...summary.errorTypes, [event.errorType]: (summary.errorTypes[event.errorType] ?? 0) + 1 },
        finalDecision: {
          outcome: "failure",
          provider: event.provider,
          action: event.action ?? null,
          attemptId: event.attemptId,
          errorType: event.errorType
        }
      }
    case "fallback":
      return { ...counted, totals: { ...totals, fallbacks: totals.fallbacks + 1 } }
    case "disabled":
      return { ...counted, totals: { ...totals, disabled: totals.disabled + 1 } }
    default:
      return counted
  }
}
