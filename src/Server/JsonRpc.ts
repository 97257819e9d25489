/**
 * Line-delimited JSON-RPC 2.0 over stdio (the sidecar mode of seed 002): one request per line in, one response per
 * line out. Engine errors travel as code -32000 with `data: {type, message, retryable}`.
 */
import { createInterface } from "node:readline"
import { Data, Effect, FiberSet } from "effect"
import type { ToolAnswer } from "../Cascade/Router.ts"
import { splitCommon } from "../Cascade/Tool.ts"
import { tools } from "../Cascade/Tools.ts"
import { isSwitchyardError, type SwitchyardError, toErrorInfo } from "../Errors.ts"
import { Sessions } from "./Sessions.ts"

export const ErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  engineError: -32000
} as const

/** A request the handler refuses before running it. */
export class RpcError extends Data.TaggedError("RpcError")<{
  readonly code: number
  readonly message: string
  readonly data?: unknown
}> {}

export type Handler = (method: string, params: unknown) => Effect.Effect<unknown, RpcError | SwitchyardError>

type Id = string | number | null

const response = (id: Id, body: { result: unknown } | { error: { code: number; message: string; data?: unknown } }) =>
  JSON.stringify({ jsonrpc: "2.0", id, ...body })

const toError = (error: RpcError | SwitchyardError) =>
  isSwitchyardError(error)
    ? { code: ErrorCode.engineError, message: error.message, data: toErrorInfo(error) }
    : { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) }

/** Answers one line; `undefined` for notifications (no id), which get no answer. */
export const handleLine = (handler: Handler, line: string): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    let request: unknown
    try {
      request = JSON.parse(line)
    } catch {
      return response(null, { error: { code: ErrorCode.parseError, message: "Parse error: the line is not JSON" } })
    }
    if (typeof request !== "object" || request === null || Array.isArray(request)) {
      return response(null, {
        error: { code: ErrorCode.invalidRequest, message: "Invalid Request: expected an object" }
      })
    }
    const { jsonrpc, method, params, id } = request as Record<string, unknown>
    const validId = id === undefined || id === null || typeof id === "string" || typeof id === "number"
    if (jsonrpc !== "2.0" || typeof method !== "string" || !validId) {
      return response(validId ? ((id as Id) ?? null) : null, {
        error: {
          code: ErrorCode.invalidRequest,
          message: 'Invalid Request: needs "jsonrpc": "2.0", a string "method" and a string or number "id"'
        }
      })
    }
    const answer = yield* handler(method, params ?? {}).pipe(
      Effect.map((result) => ({ result })),
      Effect.catch((error) => Effect.succeed({ error: toError(error) }))
    )
    return id === undefined ? undefined : response(id as Id, answer)
  })

/**
 * Serves stdin until it closes or `stop` completes; then `shutdown` runs (calls in flight answer `shutting_down`)
 * and the answers still owed are written before it returns.
 */
export const serveStdio = (handler: Handler, stop: Effect.Effect<void>, shutdown: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const inFlight = yield* FiberSet.make()
    const run = yield* FiberSet.runtime(inFlight)()
    const input = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
    yield* Effect.addFinalizer(() => Effect.sync(() => input.close()))
    const closed = Effect.callback<void>((resume) => {
      input.on("line", (line) => {
        if (line.trim() === "") return
        run(
          handleLine(handler, line).pipe(
            Effect.flatMap((out) =>
              out === undefined ? Effect.void : Effect.sync(() => process.stdout.write(`${out}\n`))
            )
          )
        )
      })
      input.once("close", () => resume(Effect.void))
    })
    yield* Effect.raceFirst(closed, stop)
    yield* shutdown
    yield* FiberSet.awaitEmpty(inFlight).pipe(Effect.timeoutOption(10_000))
  })

/** A sidecar method: what it does with the call's session, trace and step, and its own arguments. */
type Method = (call: ReturnType<typeof splitCommon>) => Effect.Effect<unknown, RpcError | SwitchyardError>

/**
 * The sidecar's method table, derived from the tool list: each `browser.*` tool by its name on the Sessions (a
 * `session` param picks one), plus seed 002's `browserStatus` and `browserClose`.
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
    ["browserStatus", ({ session }) => sessions.status(session)],
    ["browserClose", ({ session }) => sessions.close(session).pipe(Effect.as({ status: "ok" }))]
  ])

/** Serves the sidecar's methods on stdio until stdin closes or `stop` completes. */
export const serveSessions = (stop: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const table = methods(sessions)
    const known = [...table.keys()].join(", ")
    const handler: Handler = (name, params) => {
      const method = table.get(name)
      return method === undefined
        ? Effect.fail(
            new RpcError({ code: ErrorCode.methodNotFound, message: `Method not found: ${name}; methods: ${known}` })
          )
        : method(splitCommon(params))
    }
    process.stderr.write("switchyard: ready, JSON-RPC 2.0 on stdio (one request per line)\n")
    yield* serveStdio(handler, stop, sessions.shutdown)
  })

/** JSON-RPC's view of a tool answer: the result with its state, or an error whose `data` carries the same. */
const toRpc = (answer: ToolAnswer): Effect.Effect<unknown, RpcError> => {
  const { ok, result, error, ...rest } = answer
  if (ok) return Effect.succeed({ result, ...rest })
  const code = error?.field === "arguments" ? ErrorCode.invalidParams : ErrorCode.engineError
  return Effect.fail(new RpcError({ code, message: error?.message ?? "failed", data: { ...error, ...rest } }))
}
