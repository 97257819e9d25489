/**
 * Line-delimited JSON-RPC 2.0 over stdio (the sidecar mode of seed 002): its methods, the tools under their dotted and
 * underscore names. Engine errors travel as code -32000 with `data: {type, message, retryable}`; lines, batches and
 * `$/cancelRequest` are JsonRpc/Protocol.ts's.
 */
import { Effect } from "effect"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { splitCommon } from "../Cascade/Tool.ts"
import { tools } from "../Cascade/Tools.ts"
import type { SwitchyardError } from "../Errors.ts"
import { ErrorCode, type Handler, RpcError, serveLoading } from "./JsonRpc/Protocol.ts"
import { sessionNameOf } from "./SessionName.ts"
import type { Sessions } from "./Sessions.ts"

export * from "./JsonRpc/Protocol.ts"

/** A sidecar method: what it does with the call's session, trace and step, and its own arguments. */
export type Method = (call: ReturnType<typeof splitCommon>) => Effect.Effect<unknown, RpcError | SwitchyardError>

/**
 * The sidecar's method table, derived from the tool list: each `browser.*` tool by its name on the Sessions (a
 * `session` param picks one), plus seed 002's `browserStatus` and `browserClose` (session names checked as for tools).
 */
export const methods = (sessions: Sessions["Service"]): ReadonlyMap<string, Method> =>
  new Map<string, Method>([
    // Each tool under seed 002's dotted name and its underscore spelling.
    ...tools.flatMap((tool) =>
      [tool.name, tool.underscoreName].map((name): [string, Method] => [
        name,
        ({ session, meta, args }) => sessions.call(session, tool.name, args, meta).pipe(Effect.flatMap(toRpc))
      ])
    ),
    ["browserStatus", ({ session }) => sessionNameOf(session).pipe(Effect.flatMap(sessions.status))],
    [
      "browserClose",
      ({ session }) => sessionNameOf(session).pipe(Effect.flatMap(sessions.close), Effect.as({ status: "ok" }))
    ]
  ])

/** The sidecar's methods (and `extra` ones) on `sessions`, as the protocol calls them; an unknown name is refused. */
export const handler = (sessions: Sessions["Service"], extra: ReadonlyMap<string, Method> = new Map()): Handler => {
  const table = new Map([...methods(sessions), ...extra])
  const known = [...table.keys()].join(", ")
  return (name, params) => {
    const method = table.get(name)
    return method === undefined
      ? Effect.fail(
          new RpcError({ code: ErrorCode.methodNotFound, message: `Method not found: ${name}; methods: ${known}` })
        )
      : method(splitCommon(params))
  }
}

/** Serves the sidecar's methods (and `extra` ones) on stdio until stdin closes or `stop` completes. */
export const serveSessions = (
  stop: Effect.Effect<void>,
  sessions: Sessions["Service"],
  extra: ReadonlyMap<string, Method> = new Map()
) => serveLoading(Effect.succeed(handler(sessions, extra)), stop, sessions.shutdown)

/** JSON-RPC's view of a tool answer: the result with its state, or an error whose `data` carries the same. */
const toRpc = (answer: ToolAnswer): Effect.Effect<unknown, RpcError> => {
  // Resources are MCP's: here the result carries what the caller needs (maxBytes, find, the data itself).
  const { ok, result, error, resources: _resources, ...rest } = answer
  if (ok) return Effect.succeed({ result, ...rest })
  const code = error?.field === "arguments" ? ErrorCode.invalidParams : ErrorCode.engineError
  // `data` is the error itself plus the call's context; the agent guidance rides beside it, never over its message.
  const { message: guidance, ...context } = rest
  return Effect.fail(
    new RpcError({
      code,
      message: error?.message ?? "failed",
      data: { ...context, ...error, ...(guidance === undefined ? {} : { guidance }) }
    })
  )
}
