/**
 * Which engine: its kind and, for engines with several, its mode. One label (`stagehand:dom`) names it in logs,
 * answers, metrics and breakers.
 */
import { Schema } from "effect"

export const EngineKind = Schema.Literals(["playwright", "stagehand", "magnitude", "human"])
export type EngineKind = typeof EngineKind.Type

/** Stagehand's modes: the DOM and computer use (screenshots and coordinates). */
export const EngineMode = Schema.Literals(["dom", "cua"])
export type EngineMode = typeof EngineMode.Type

export const EngineId = Schema.Struct({ kind: EngineKind, mode: Schema.optional(EngineMode) })
export type EngineId = typeof EngineId.Type

/** `kind` or `kind:mode`: the one spelling of an engine everywhere it is written. */
export const label = (id: { readonly kind: EngineKind; readonly mode?: EngineMode | undefined }): string =>
  id.mode === undefined ? id.kind : `${id.kind}:${id.mode}`

/** Whether two ids name the same engine. */
export const same = (
  a: { readonly kind: EngineKind; readonly mode?: EngineMode | undefined },
  b: { readonly kind: EngineKind; readonly mode?: EngineMode | undefined }
): boolean => a.kind === b.kind && a.mode === b.mode
