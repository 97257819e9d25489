/**
 * A web pattern: pages shaped the way real sites build something (an unnamed field, a tab opened by a link, a form in
 * an iframe, a confirm on submit…) and what an agent does there through the public tools only, with what it must see.
 * The suite (Suite.ts, run in parts by Patterns<k>.integration.test.ts) and the bench (`npm run bench -- --only web`)
 * run every pattern.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

/** The classes the bench reports a success rate for. */
export type PatternClass =
  | "unnamed"
  | "ambiguity"
  | "fuzzy"
  | "tabs"
  | "frames"
  | "shadow"
  | "late"
  | "dialogs"
  | "uploads"
  | "downloads"
  | "pointer"
  | "extract"
  | "widgets"
  | "navigation"
  | "errors"
  /** Custom checkboxes, radios, switches and handles built from hidden inputs, ARIA roles or bare tabindex. */
  | "checkables"
  /** Dates, times, numbers, ranges and multi-selects given as people write them. */
  | "values"
  /** Where a label sits: a row above, laid over the input, under it, beside a file input. */
  | "labels"
  /** Same-named controls told apart by their group, card, row or section. */
  | "context"
  /** Where typed text goes: focus traps, re-rendering inputs, pages that format or copy what is typed. */
  | "focus"
  /** Disabled controls, by attribute, by aria-disabled, by a disabled fieldset. */
  | "disabled"
  /** Names as written: symbols, emoji, scripts without spaces, text-only clickables. */
  | "names"
  /** Targets partly covered, or covered by something on its way out. */
  | "covers"
  /** Reading whole: tables, a label and its value, a long page, links side by side. */
  | "reading"
  /** Images a model accepts. */
  | "screenshots"

/** A page: its HTML, or a handler for what HTML cannot say (redirects, status codes, slow bodies, downloads, posts). */
export type Page = string | ((req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>)

export type ToolError = { readonly type: string; readonly message: string; readonly retryable: boolean } & Record<
  string,
  any
>

/** One tool answer as the service sends it (JSON-RPC `result`), or the protocol error. */
export interface Answer {
  readonly ok: boolean
  readonly result?: any
  readonly error?: ToolError | undefined
  readonly message?: string | undefined
  readonly state: Record<string, any>
  /** What happened on the pages besides the call: a tab opened, a dialog, files chosen, a download. */
  readonly pageEvents?: ReadonlyArray<Record<string, any>> | undefined
}

/** An answer that said success while the page's own record disagreed with it. */
export interface FalseSuccess {
  /** What was checked on the page. */
  readonly label: string
  /** The call that answered success last before the check, as sent. */
  readonly call: string
  readonly expected: unknown
  readonly actual: unknown
}

export interface Agent {
  /** The URL of one of this pattern's pages, e.g. `agent.url("/form.html")`. */
  readonly url: (path: string) => string
  /** Calls a public tool on the pattern's own session and returns its answer, whatever it is. */
  readonly call: (tool: string, args?: Record<string, unknown>) => Promise<Answer>
  /** Calls a tool and throws, with the answer, unless it succeeded; returns the answer. */
  readonly ok: (tool: string, args?: Record<string, unknown>) => Promise<Answer>
  /**
   * What the pattern's pages posted to `/<pattern>/record` during this run (form posts, clicks the page reports), in
   * order; the states pages report through `reportState` are left out (see `pageState`).
   */
  readonly recorded: () => ReadonlyArray<Record<string, unknown>>
  /** Waits until the pages have posted nothing for a moment (bounded), so what they send after a call has arrived. */
  readonly settle: () => Promise<void>
  /** The last state the page reported through `reportState`, once it has settled; undefined if it reported none. */
  readonly pageState: () => Promise<Record<string, unknown> | undefined>
  /**
   * The truth check: throws unless `actual` (read from the page's own record) deep-equals `expected` (what the page
   * would show if the answers were true). When it differs and the last page-changing or page-reading call before it
   * (act, upload, extract, screenshot, dialog) answered success, that answer counts as a false success.
   */
  readonly expectPage: (actual: unknown, expected: unknown, label?: string) => void
  /** `expectPage` on what the pages posted, once they have settled. */
  readonly expectRecorded: (expected: ReadonlyArray<Record<string, unknown>>, label?: string) => Promise<void>
  /** `expectPage` on the state the page reported last, once it has settled. */
  readonly expectState: (expected: Record<string, unknown>, label?: string) => Promise<void>
  /** The false successes this run counted. */
  readonly falseSuccesses: () => ReadonlyArray<FalseSuccess>
}

export interface WebPattern {
  /** Unique, kebab-case: also the pattern's URL prefix and session name. */
  readonly name: string
  readonly class: PatternClass
  /** Paths (starting with `/`) to pages, served under `/<name>`. */
  readonly pages: Readonly<Record<string, Page>>
  /** What the agent does; throws (e.g. node:assert) when it does not get what a person would. */
  readonly run: (agent: Agent) => Promise<void>
}

export const pattern = (p: WebPattern): WebPattern => p

/**
 * The snippet a page uses to report something to the pattern's record: `record({field: value})`. A form may also post
 * to `record` itself (`<form method="post" action="record">`): the server keeps its fields, repeated ones as a list.
 */
export const recordScript = `<script>
function record(data) { return fetch("record", { method: "POST", body: JSON.stringify(data) }) }
</script>`

/**
 * The snippet by which a page reports its own state: the page defines `state()` (what a person would see: field values,
 * ticks, selections) and it is posted when the page loads and shortly after every input, change, click or key.
 */
export const reportState = `${recordScript}<script>
let stateSeq = 0, stateTimer
function reportState() { const s = state(); return record({ state: s, seq: ++stateSeq }) }
function reportSoon() { clearTimeout(stateTimer); stateTimer = setTimeout(reportState, 40) }
for (const type of ["input", "change", "click", "keyup", "focusin"]) addEventListener(type, reportSoon, true)
addEventListener("load", reportState)
</script>`
