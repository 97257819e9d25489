/**
 * The state block every answer carries (seed 004): engine and level in use, engines disabled for the request, the
 * page, and which tools work now. Mask, don't remove: every tool stays listed, a masked one with the reason.
 */
import { Effect, Option } from "effect"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as EngineId from "../EngineId.ts"
import { type ErrorInfo, type SwitchyardError, toErrorInfo } from "../Errors.ts"
import type { Download, OpenDialog, Sandbox, SandboxStatus, Tab } from "../Sandbox/Sandbox.ts"
import type { Takeover } from "../Takeover/Handoff.ts"
import type { Engines } from "./Engines.ts"
import { type CascadeConfig, idOf, type Level } from "./Policy.ts"
import type * as Tool from "./Tool.ts"
import { type ToolName, toolNames, tools } from "./Tools.ts"

/** What every answer carries: enough for an LLM to see where it is and what it can do next. */
export interface StateBlock {
  readonly engine: string | null
  /** The cascade level that served the call, or `replay`: a kept resolution replayed in front of the cascade. */
  readonly level: number | "replay" | null
  readonly disabled: ReadonlyArray<string>
  readonly url: string | null
  readonly title: string | null
  /** The browser's tabs; the active one is the page every tool works on. */
  readonly tabs: ReadonlyArray<Tab>
  /** A dialog open on the active tab: answer it with browser.dialog before anything else. */
  readonly dialog: OpenDialog | null
  /** The session's downloads: name, bytes, where the file is. */
  readonly downloads: ReadonlyArray<Download>
  readonly tools: { readonly available: ReadonlyArray<ToolName>; readonly masked: Partial<Record<ToolName, string>> }
}

/** The state in a tool's answer: the tool list, the tabs and the downloads only when they changed since the
 * session's previous answer, the dialog only when one is open, the disabled engines only when there are some. */
export type AnswerState = Omit<StateBlock, "tools" | "tabs" | "downloads" | "dialog" | "disabled"> &
  Partial<Pick<StateBlock, "tools" | "tabs" | "downloads" | "dialog" | "disabled">>

export interface ToolError extends ErrorInfo {
  /** For a call the current engines cannot serve: which engines could. */
  readonly servableBy?: ReadonlyArray<string>
  /** For bad input: what was wrong (`tool` or `arguments`). */
  readonly field?: "tool" | "arguments"
}

export interface StateBlocks {
  /** The engine a level runs, when it is configured here. */
  readonly usable: (level: Level) => Effect.Effect<Option.Option<EngineSpec>>
  /** The state after a call, with Stagehand disabled or not for the call's request or step. */
  readonly block: (
    stagehandDisabled: boolean,
    status: SandboxStatus,
    config: CascadeConfig
  ) => Effect.Effect<StateBlock>
  /** A failure as the agent sees it: a call the engines in use cannot serve names the engines that could. */
  readonly explain: (
    error: SwitchyardError,
    call: Tool.Bound,
    stagehandDisabled: boolean,
    config: CascadeConfig
  ) => Effect.Effect<ToolError>
}

export const make = (session: {
  readonly sandbox: Sandbox["Service"]
  readonly engines: Engines["Service"]
  readonly takeover: Effect.Effect<Option.Option<Takeover>>
  readonly features: Tool.Features
}): StateBlocks => {
  const { sandbox, engines } = session

  const usable = (level: Level) =>
    engines.specFor(level).pipe(
      Effect.map((spec) => Option.some(spec)),
      Effect.orElseSucceed(() => Option.none())
    )

  /** Which tools cannot serve now and why: each tool's own mask, then the engine tools while none can run. */
  const masks = (now: Tool.Availability) => {
    const masked: Partial<Record<ToolName, string>> = {}
    for (const tool of tools) {
      const reason = tool.mask(now)
      if (reason !== undefined) masked[tool.name] = reason
    }
    // A tool the operator turned off stays masked for that reason, whatever else holds.
    const engineTools = tools.filter((tool) => tool.kind === "engine" && tool.offered(now.features) === undefined)
    if (Option.isSome(now.takeover)) {
      for (const tool of engineTools) {
        masked[tool.name] =
          `a person has the browser (${now.takeover.value.url}); wait for them, check browser.status, or call browser.resume when they are done`
      }
    }
    if (Option.isSome(now.dialog)) {
      const dialog = now.dialog.value
      for (const tool of engineTools) {
        masked[tool.name] =
          `a ${dialog.type} dialog is open on the page (${JSON.stringify(dialog.message.slice(0, 120))}); answer it with browser.dialog first`
      }
    }
    if (now.engines.length === 0) {
      for (const tool of engineTools) masked[tool.name] = "no engine is configured"
    }
    return masked
  }

  const block = (stagehandDisabled: boolean, status: SandboxStatus, config: CascadeConfig) =>
    Effect.gen(function* () {
      const page = status.active ? yield* sandbox.location : Option.none()
      const view = status.active ? yield* sandbox.page : { tabs: [], dialog: null, downloads: [] }
      const levels = config.levels.filter((l) => !(stagehandDisabled && l.engine === "stagehand"))
      const specs = (yield* Effect.forEach(levels, usable)).flatMap((o) => (Option.isSome(o) ? [o.value] : []))
      const masked = masks({
        engines: specs,
        takeover: yield* session.takeover,
        dialog: Option.fromNullishOr(view.dialog),
        features: session.features
      })
      return {
        engine: status.engine === null ? null : EngineId.label({ kind: status.engine, mode: status.mode ?? undefined }),
        level: ((i) => (i >= 0 ? i : null))(
          config.levels.findIndex((l) => l.engine === status.engine && (l.mode ?? null) === status.mode)
        ),
        disabled: stagehandDisabled ? ["stagehand"] : [],
        url: Option.isSome(page) ? page.value.url : null,
        title: Option.isSome(page) ? page.value.title : null,
        tabs: view.tabs,
        dialog: view.dialog,
        downloads: view.downloads,
        tools: { available: toolNames.filter((t) => masked[t] === undefined), masked }
      } satisfies StateBlock
    })

  const explain = (error: SwitchyardError, call: Tool.Bound, stagehandDisabled: boolean, config: CascadeConfig) =>
    Effect.gen(function* () {
      const info: ToolError = toErrorInfo(error)
      if (error.type !== "unsupported" || call._tag !== "engine") return info
      const could: Array<string> = []
      for (const level of config.levels) {
        const spec = yield* usable(level)
        if (Option.isNone(spec) || !call.serves(spec.value.capabilities)) continue
        could.push(
          stagehandDisabled && level.engine === "stagehand"
            ? `${EngineId.label(idOf(level))} (disabled for this request after two failures)`
            : EngineId.label(idOf(level))
        )
      }
      return could.length > 0 ? { ...info, servableBy: could } : info
    })

  return { usable, block, explain }
}

/** What the session's answers last carried of what rarely changes (tools, tabs, downloads), by key. */
export type Sent = Readonly<Record<string, string>>

/**
 * What rarely changes would be most of every answer's text: the tool list, the tabs (which there are, which is
 * active) and the downloads are sent when they change since `before`, an empty dialog or disabled list not at all;
 * `full` (browser.status) sends it all. Returns the state to send and what has now been sent.
 */
export const changedOnly = (state: AnswerState, before: Sent, full: boolean): readonly [AnswerState, Sent] => {
  const after: Record<string, string> = { ...before }
  const { tools, tabs, downloads, dialog, disabled, ...always } = state
  const keys = {
    tools: tools === undefined ? undefined : JSON.stringify(tools),
    tabs: tabs === undefined ? undefined : JSON.stringify(tabs.map((t) => [t.id, t.active])),
    downloads: downloads === undefined ? undefined : JSON.stringify(downloads)
  }
  const fresh = (key: keyof typeof keys) => {
    const now = keys[key]
    if (now === undefined) return false
    const changed = full || before[key] !== now
    after[key] = now
    return changed
  }
  return [
    {
      ...always,
      ...(disabled !== undefined && (full || disabled.length > 0) ? { disabled } : {}),
      ...(dialog !== undefined && (full || dialog !== null) ? { dialog } : {}),
      ...(fresh("tabs") ? { tabs } : {}),
      ...(fresh("downloads") ? { downloads } : {}),
      ...(fresh("tools") ? { tools } : {})
    },
    after
  ]
}
