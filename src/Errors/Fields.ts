/**
 * The fields every error carries besides its tag: what a person reads (`message`), where it happened (`engine`,
 * `action`) and, for errors that wrap a library's failure, that failure as `cause` (never sent to clients).
 */
import { Schema } from "effect"
import { EngineKind } from "../EngineId.ts"

/** Whether a failed call may already have changed the page (an `act` that may have clicked). */
export const SideEffect = Schema.Literals(["none", "possible"])
export type SideEffect = typeof SideEffect.Type

export const context = {
  message: Schema.String,
  engine: Schema.optional(EngineKind),
  action: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect())
}
