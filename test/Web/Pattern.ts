/**
 * A web pattern: pages shaped the way real sites build something (an unnamed field, a tab opened by a link, a form in
 * an iframe, a confirm on submit…) and what an agent does there through the public tools only, with what it must see.
 * The suite (Patterns.integration.test.ts) and the bench (`npm run bench -- --only web`) run every pattern.
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

export interface Agent {
  /** The URL of one of this pattern's pages, e.g. `agent.url("/form.html")`. */
  readonly url: (path: string) => string
  /** Calls a public tool on the pattern's own session and returns its answer, whatever it is. */
  readonly call: (tool: string, args?: Record<string, unknown>) => Promise<Answer>
  /** Calls a tool and throws, with the answer, unless it succeeded; returns the answer. */
  readonly ok: (tool: string, args?: Record<string, unknown>) => Promise<Answer>
  /** Reads back what the pattern's pages posted to `/<pattern>/record` (form submissions, clicks the page reports). */
  readonly recorded: () => ReadonlyArray<Record<string, unknown>>
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

/** The snippet a page uses to report something to the pattern's record: `record({field: value})`. */
export const recordScript = `<script>
function record(data) { return fetch("record", { method: "POST", body: JSON.stringify(data) }) }
</script>`
