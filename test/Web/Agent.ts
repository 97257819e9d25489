/**
 * An agent on the real service (`node src/Main.ts serve --jsonrpc`): each pattern on its own session, by tool name,
 * checking answers against what the page itself recorded and counting the successes the page contradicts.
 */
import { isDeepStrictEqual } from "node:util"
import type { Service } from "../support/Service.ts"
import type { Agent, Answer, FalseSuccess, ToolError, WebPattern } from "./Pattern.ts"
import type { PatternServer } from "./Server.ts"

/** Calls that claim something about the page: what they answer is what the page's record is held against. */
const claims = new Set(["browser.act", "browser.upload", "browser.extract", "browser.screenshot", "browser.dialog"])

/** An answer in a line, for failure messages: what it said, not the whole state block. */
const said = (answer: Answer) =>
  (answer.ok
    ? `success: ${JSON.stringify(answer.result?.description ?? answer.result)}`
    : `${answer.error?.type}: ${answer.error?.message}`
  ).slice(0, 400)

const isState = (r: Record<string, unknown>) => "state" in r && "seq" in r

export const agentFor = (service: Service, server: PatternServer, p: WebPattern): Agent => {
  const before = server.recorded(p.name).length
  const posted = () => server.recorded(p.name).slice(before)
  // The state as the agent knows it: an answer says the tabs, downloads and tools only when they changed, a dialog
  // and disabled engines only when there are some.
  let known: Record<string, any> = {}
  const learn = (state: Record<string, any> | undefined) => {
    known = { ...known, ...state, dialog: state?.dialog ?? null, disabled: state?.disabled ?? [] }
    return known
  }
  // The last call that claimed something about the page, and whether it said success.
  let lastClaim: { readonly call: string; readonly ok: boolean; readonly answer: string } | undefined
  const falseSuccesses: Array<FalseSuccess> = []
  const call = async (tool: string, args: Record<string, unknown> = {}): Promise<Answer> => {
    const answer = await send(tool, args)
    if (claims.has(tool)) lastClaim = { call: `${tool} ${JSON.stringify(args)}`, ok: answer.ok, answer: said(answer) }
    return { ...answer, state: learn(answer.state) }
  }
  const send = async (tool: string, args: Record<string, unknown>): Promise<Answer> => {
    const reply = await service.call(tool, { ...args, session: p.name })
    // JSON-RPC carries a tool failure as an error whose data is the typed error and the state block.
    if (reply.error !== undefined) {
      const { code, message, data } = reply.error as { code: number; message: string; data?: Record<string, any> }
      if (data?.type === undefined)
        return { ok: false, error: { type: `rpc_${code}`, message, retryable: false }, state: {} }
      const { state, guidance, pageEvents, traceId: _t, stepId: _s, attemptId: _a, ...error } = data
      return { ok: false, error: error as ToolError, message: guidance, state: state ?? {}, pageEvents }
    }
    const { result, state, message, pageEvents } = reply.result as Record<string, any>
    return { ok: true, result, state, message, pageEvents }
  }
  // Pages post after an event (a click's fetch, a state report 40 ms after typing): wait for 250 ms of quiet, at most 3 s.
  const settle = async () => {
    const deadline = Date.now() + 3_000
    let count = posted().length
    let quietSince = Date.now()
    while (Date.now() < deadline && Date.now() - quietSince < 250) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      const now = posted().length
      if (now !== count) {
        count = now
        quietSince = Date.now()
      }
    }
  }
  const recorded = () => posted().filter((r) => !isState(r))
  const pageState = async () => {
    await settle()
    const states = posted().filter(isState) as Array<{ state: Record<string, unknown>; seq: number }>
    // Reports may arrive out of order: the page numbers them.
    return states.reduce<(typeof states)[number] | undefined>(
      (a, b) => (a === undefined || b.seq > a.seq ? b : a),
      undefined
    )?.state
  }
  const expectPage = (actual: unknown, expected: unknown, label = "what the page recorded") => {
    const claim = lastClaim
    if (isDeepStrictEqual(actual, expected)) return
    const falseSuccess = claim?.ok === true
    if (falseSuccess) falseSuccesses.push({ label, call: claim.call, expected, actual })
    throw new Error(
      `${falseSuccess ? "false success: " : ""}${label}: the page shows ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}${claim === undefined ? "" : ` (last answer: ${claim.call} → ${claim.answer})`}`
    )
  }
  return {
    url: (path) => server.url(p.name, path),
    call,
    ok: async (tool, args) => {
      const answer = await call(tool, args)
      if (!answer.ok) {
        throw new Error(`${tool} ${JSON.stringify(args ?? {})} failed: ${JSON.stringify(answer.error)}`)
      }
      return answer
    },
    // What the pages posted during this run only: the bench runs each pattern several times on one server.
    recorded,
    settle,
    pageState,
    expectPage,
    expectRecorded: async (expected, label) => {
      await settle()
      expectPage(recorded(), expected, label)
    },
    expectState: async (expected, label = "what the page shows") => expectPage(await pageState(), expected, label),
    falseSuccesses: () => falseSuccesses
  }
}
