/**
 * The automation engine contract. An engine is a Layer built inside a Sandbox lease: building it connects a client
 * to the session's running browser, releasing it disconnects that client and never stops the browser.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { EngineKind, EngineMode } from "../EngineId.ts"
import { ElementRef } from "../Errors/Page.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { Element as PageElement } from "./AccessibilityTree.ts"
import type * as Instruction from "./Instruction.ts"

export type { EngineKind } from "../EngineId.ts"
/** What `act` and `observe` take: `said('click "Submit"')` parses an instruction once, where it comes in. */
export { Said, said } from "./Instruction.ts"

/** A concrete page action in Stagehand's observe-result shape, so one engine's observe can drive another's act. */
export const Action = Schema.Struct({
  selector: Schema.String,
  method: Schema.String,
  arguments: Schema.Array(Schema.String),
  description: Schema.String
})
export type Action = typeof Action.Type

/** Where the session's page is: captured before an engine switch and restored after it. */
export interface PageState {
  readonly url: string
  readonly title: string
  readonly scrollX: number
  readonly scrollY: number
  readonly timestamp: string
}

/** What an engine can serve, so the cascade and the router can route or mask calls without trying them. */
export interface Capabilities {
  /** How `act`/`observe` understand a plain instruction: a fixed grammar, natural language via a model, or not. */
  readonly instructions: "grammar" | "natural-language" | "none"
  /** `act` accepts an `Action` and runs it without a model. */
  readonly actions: boolean
  /** `extract` fills any JSON schema, or only schemas made of page facts. */
  readonly extract: "any-schema" | "page-facts"
  readonly observe: boolean
  /** Works from screenshots (coordinates) rather than the DOM. */
  readonly vision: boolean
  /** `act` understands element references (`e12`) handed out by its own `observe` and `extract`. */
  readonly references?: boolean
}

export interface NavigateResult {
  readonly url: string
  readonly title: string
  readonly status: number | null
}

/**
 * What the page shows for the element an act acted on, read back after the act: `value` for text-like fields, dates,
 * numbers and ranges (in the input's own format), `checked` for checkboxes, radios and switches, `selected` (option
 * labels) for selects and listboxes. `ref` is the element's reference on the playwright level, else the selector
 * the engine acted through.
 */
export const ActTarget = Schema.Struct({
  ...ElementRef.fields,
  value: Schema.optional(Schema.String),
  checked: Schema.optional(Schema.Union([Schema.Boolean, Schema.Literal("mixed")])),
  selected: Schema.optional(Schema.Array(Schema.String))
})
export type ActTarget = typeof ActTarget.Type

export interface ActResult {
  readonly success: true
  /** What was done, in words a person reads in a log. */
  readonly description: string
  /** The concrete action that was run, when the engine knows it. */
  readonly action?: Action
  /** Where the page is after an action that navigated or changed the route, once it settled. */
  readonly navigated?: { readonly url: string; readonly title: string }
  /** What the page now shows for the element acted on. */
  readonly target?: ActTarget
}

export interface ExtractOptions {
  /** Where the page's text starts in the answer, in characters: the `nextOffset` of an answer whose text was cut. */
  readonly offset?: number
}

export interface ScreenshotOptions {
  readonly fullPage?: boolean
}

/** What `snapshot` reads: the whole page within a byte budget, what changed since the last one, or matching parts. */
export interface SnapshotOptions {
  /** The largest answer, in bytes of text; subtrees past it are collapsed into one line each. */
  readonly maxBytes: number
  /** `"last"`: only what changed since this connection's previous snapshot. */
  readonly since?: "last"
  /** A reference, a role or words: only the subtrees that match. */
  readonly find?: string
}

export interface SnapshotResult {
  readonly url: string
  readonly title: string
  /** The outline: one line per node, `- role "name" [ref=e12]: value`, indented by depth. */
  readonly snapshot: string
  /** What the budget left out, and how to get it. */
  readonly truncated?: {
    readonly totalBytes: number
    readonly collapsed: number
    readonly hiddenLines: number
    readonly how: string
  }
  /** With `since`: what changed, or why the whole page came instead. */
  readonly changes?: { readonly added: number; readonly removed: number; readonly changed: number } | string
  /** With `find`: how many subtrees matched. */
  readonly found?: number
  /** The whole outline when the budget cut it: handed to clients as a resource, never in the answer itself. */
  readonly whole?: string
}

/** What `waitFor` waits for: text to appear or go, an element (by name) to appear, or a time to pass. */
export type WaitCondition =
  | { readonly text: string; readonly timeoutMs: number }
  | { readonly textGone: string; readonly timeoutMs: number }
  | { readonly target: string; readonly timeoutMs: number }
  | { readonly timeMs: number }

export interface WaitResult {
  readonly waitedMs: number
  /** What the page showed when the wait ended. */
  readonly description: string
}

/** What `evaluate` answers: the expression's value as JSON, or where it was cut. */
export interface EvaluateResult {
  readonly value: unknown
  /** The frame it ran in, when not the page itself. */
  readonly frame?: string
  /** The value's JSON was longer than the answer holds: `value` is its start, as text. */
  readonly truncated?: { readonly bytes: number }
}

export class Engine extends Context.Service<
  Engine,
  {
    readonly kind: EngineKind
    /** The engine's mode (`dom` or `cua` for Stagehand); absent when an engine has one mode. */
    readonly mode?: EngineMode
    readonly capabilities: Capabilities
    readonly navigate: (url: string) => Effect.Effect<NavigateResult, SwitchyardError>
    /** One action: an instruction, parsed once where it came in, or an exact Action. */
    readonly act: (input: Instruction.Said | Action) => Effect.Effect<ActResult, SwitchyardError>
    readonly extract: (
      instruction: string,
      jsonSchema?: unknown,
      options?: ExtractOptions
    ) => Effect.Effect<unknown, SwitchyardError>
    /** The elements that match what is intended: a target phrase or a sentence, parsed once where it came in. */
    readonly observe: (instruction: Instruction.Said) => Effect.Effect<ReadonlyArray<Action>, SwitchyardError>
    readonly screenshot: (options?: ScreenshotOptions) => Effect.Effect<Uint8Array, SwitchyardError>
    readonly pageState: () => Effect.Effect<PageState, SwitchyardError>
    /** The page as an accessibility outline with references `act` accepts (engines with `references` only). */
    readonly snapshot?: (options: SnapshotOptions) => Effect.Effect<SnapshotResult, SwitchyardError>
    /** Waits, reading the page every moment, until the condition holds (engines with `references` only). */
    readonly waitFor?: (condition: WaitCondition) => Effect.Effect<WaitResult, SwitchyardError>
    /** The page's elements as a person names them, with their references, read now (engines with `references`). */
    readonly elements?: () => Effect.Effect<ReadonlyArray<PageElement>, SwitchyardError>
    /** Which of the page's elements a selector (XPath, CSS) or reference names, as `elements` names it; none when
     * it names no element, several, or one the element model does not list (engines with `references`). */
    readonly identify?: (selector: string) => Effect.Effect<Option.Option<PageElement>>
    /** Runs JavaScript in the page or one of its frames and answers its JSON value (engines with `references`). */
    readonly evaluate?: (expression: string, frame?: string) => Effect.Effect<EvaluateResult, SwitchyardError>
    /** Whether the engine's client is still connected; checked before each operation. */
    readonly connected: () => Effect.Effect<boolean>
  }
>()("switchyard/Engine") {}
