/**
 * The agent-facing tools: stable names and the Schema of each one's arguments. The list never changes at runtime;
 * which tools can serve a call is decided per call.
 */
import { Schema } from "effect"
import { Action } from "../Engine/Engine.ts"

export const Navigate = Schema.Struct({ url: Schema.String })
export const Act = Schema.Union([Schema.Struct({ instruction: Schema.String }), Schema.Struct({ action: Action })])
export const Extract = Schema.Struct({ instruction: Schema.String, schema: Schema.optional(Schema.Unknown) })
export const Observe = Schema.Struct({ instruction: Schema.String })
export const Screenshot = Schema.Struct({ fullPage: Schema.optional(Schema.Boolean) })
export const Empty = Schema.Struct({})

export const tools = {
  "browser.navigate": Navigate,
  "browser.act": Act,
  "browser.extract": Extract,
  "browser.observe": Observe,
  "browser.screenshot": Screenshot,
  "browser.status": Empty,
  "browser.close": Empty
} as const

export type ToolName = keyof typeof tools
export const isToolName = (name: string): name is ToolName => Object.hasOwn(tools, name)
