/**
 * Answers no open session gave (a call refused before any session ran it, a status of a session not open), in the
 * same shape as any other answer, so every surface reads them alike.
 */
import type { CallMeta, ToolAnswer, ToolError } from "../../Cascade/Router.ts"
import type { StateBlock } from "../../Cascade/StateBlock.ts"
import * as Tools from "../../Cascade/Tools.ts"
import { ShuttingDown } from "../../Errors/Service.ts"
import { type SwitchyardError, toErrorInfo } from "../../Errors.ts"

/** The state of no session: no engine, no page, every tool listed. */
export const emptyState: StateBlock = {
  engine: null,
  level: null,
  disabled: [],
  url: null,
  title: null,
  tabs: [],
  dialog: null,
  downloads: [],
  tools: { available: Tools.toolNames, masked: {} }
}

/** An answer no open session gave: the same shape as any other, with an empty state. */
export const sessionless = (
  outcome: { ok: true; result: unknown } | { ok: false; error: ToolError },
  meta: CallMeta
): ToolAnswer => {
  const traceId = meta.traceId ?? crypto.randomUUID()
  return {
    ...outcome,
    traceId,
    ...(meta.stepId === undefined ? {} : { stepId: meta.stepId }),
    attemptId: `${traceId}#0`,
    state: emptyState
  }
}

/** A call refused before any session ran it, answered like any other. */
export const refuse = (error: SwitchyardError, meta: CallMeta) =>
  sessionless({ ok: false, error: toErrorInfo(error) }, meta)

/** The service is stopping: a call that came, or (`action`) one stopped running or waiting. */
export const shuttingDown = (action?: string) =>
  new ShuttingDown({
    ...(action === undefined ? {} : { action }),
    message:
      action === undefined ? "the service is shutting down" : "the service is shutting down; the call was stopped"
  })
