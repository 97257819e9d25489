/**
 * Line-delimited JSON-RPC 2.0 over stdio (the sidecar mode of seed 002): one request per line in, one response per
 * line out. Engine errors travel as code -32000 with `data: {type, message, retryable}`.
 */
import { createInterface } from "node:readline"
import { Data, Effect, FiberSet } from "effect"
import { type EngineError, isEngineError, toErrorInfo } from "../Engine/EngineError.ts"

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

export type Handler = (method: string, params: unknown) => Effect.Effect<unknown, RpcError | EngineError>

type Id = string | number | null

const response = (id: Id, body: { result: unknown } | { error: { code: number; message: string; data?: unknown } }) =>
  JSON.stringify({ jsonrpc: "2.0", id, ...body })

const toError = (error: RpcError | EngineError) =>
  isEngineError(error)
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
 * Serves stdin until it closes, then lets the calls already read finish and answer (a piped batch gets all its
 * answers). A signal interrupts instead: in-flight calls stop when the enclosing scope closes.
 */
export const serveStdio = (handler: Handler) =>
  Effect.gen(function* () {
    const inFlight = yield* FiberSet.make()
    const run = yield* FiberSet.runtime(inFlight)()
    const input = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
    yield* Effect.addFinalizer(() => Effect.sync(() => input.close()))
    yield* Effect.callback<void>((resume) => {
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
    yield* FiberSet.awaitEmpty(inFlight)
  })
