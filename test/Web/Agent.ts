/** An agent on the real service (`node src/Main.ts serve --jsonrpc`): each pattern on its own session, by tool name. */
import type { Service } from "../support/Service.ts"
import type { Agent, Answer, ToolError, WebPattern } from "./Pattern.ts"
import type { PatternServer } from "./Server.ts"

export const agentFor = (service: Service, server: PatternServer, p: WebPattern): Agent => {
  const before = server.recorded(p.name).length
  // The state as the agent knows it: an answer says the tabs, downloads and tools only when they changed, a dialog
  // and disabled engines only when there are some.
  let known: Record<string, any> = {}
  const learn = (state: Record<string, any> | undefined) => {
    known = { ...known, ...state, dialog: state?.dialog ?? null, disabled: state?.disabled ?? [] }
    return known
  }
  const call = async (tool: string, args: Record<string, unknown> = {}): Promise<Answer> => {
    const answer = await send(tool, args)
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
    recorded: () => server.recorded(p.name).slice(before)
  }
}
