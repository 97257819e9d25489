/**
 * JSON-RPC 2.0 on stdio without its method table: lines, batches, `$/cancelRequest` and the error codes. The sidecar's
 * methods are the tools' (JsonRpc.ts), so the surface reads requests from here while the tool list still loads.
 */
import { Cause, Data, Deferred, Effect, FiberSet } from "effect"
import { isSwitchyardError, type SwitchyardError, toErrorInfo } from "../../Errors.ts"
import * as Lines from "../Lines.ts"
import { defaultSession } from "../SessionName.ts"

export const ErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  engineError: -32000,
  /** As in LSP: the request was cancelled with `$/cancelRequest`. */
  requestCancelled: -32800
} as const

/** The method that cancels a request in flight, as in LSP: `params: {"id": <the request's id>}`. */
export const cancelMethod = "$/cancelRequest"

/** A request the handler refuses before running it. */
export class RpcError extends Data.TaggedError("RpcError")<{
  readonly code: number
  readonly message: string
  readonly data?: unknown
}> {}

export type Handler = (method: string, params: unknown) => Effect.Effect<unknown, RpcError | SwitchyardError>

/** Requests in flight by id (as JSON, so `1` and `"1"` differ), each with the signal that cancels it. */
export type InFlight = Map<string, Set<Deferred.Deferred<void>>>

type Id = string | number | null
type Failure = { readonly code: number; readonly message: string; readonly data?: unknown }
type Response = { readonly jsonrpc: "2.0"; readonly id: Id } & ({ result: unknown } | { error: Failure })

const response = (id: Id, body: { result: unknown } | { error: Failure }): Response => ({ jsonrpc: "2.0", id, ...body })

const invalid = (id: Id, message: string) =>
  response(id, { error: { code: ErrorCode.invalidRequest, message: `Invalid Request: ${message}` } })

const toError = (error: RpcError | SwitchyardError): Failure =>
  isSwitchyardError(error)
    ? { code: ErrorCode.engineError, message: error.message, data: toErrorInfo(error) }
    : { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) }

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const isId = (u: unknown): u is Id => u === null || typeof u === "string" || typeof u === "number"

/**
 * A defect (a thrown error, a stack overflow from input nested thousands deep) as the answer it still owes: -32603
 * with what went wrong, logged with its cause. A call is never left without an answer.
 */
export const internalError = (cause: Cause.Cause<unknown>, what: string) =>
  Effect.logError(`${what} failed with a defect`, cause).pipe(
    Effect.as({
      code: ErrorCode.internalError,
      message: `Internal error: ${Cause.prettyErrors(cause)[0]?.message ?? "unknown"}`.slice(0, 500)
    })
  )

/** Signals every request in flight with this id; whether there was one. */
const cancel = (inFlight: InFlight, id: Id) =>
  Effect.gen(function* () {
    const signals = [...(inFlight.get(JSON.stringify(id)) ?? [])]
    for (const signal of signals) yield* Deferred.succeed(signal, undefined)
    return signals.length > 0
  })

/** Runs a request with an id, answering `requestCancelled` (after stopping it) if a cancel for its id comes first. */
const cancellable = (inFlight: InFlight, id: Id, run: Effect.Effect<{ result: unknown } | { error: Failure }>) =>
  Effect.gen(function* () {
    const key = JSON.stringify(id)
    const signal = yield* Deferred.make<void>()
    const signals = inFlight.get(key) ?? new Set()
    inFlight.set(key, signals.add(signal))
    const cancelled = Deferred.await(signal).pipe(
      Effect.as({ error: { code: ErrorCode.requestCancelled, message: "Request cancelled" } })
    )
    return yield* run.pipe(
      Effect.raceFirst(cancelled),
      Effect.ensuring(
        Effect.sync(() => {
          signals.delete(signal)
          if (signals.size === 0 && inFlight.get(key) === signals) inFlight.delete(key)
        })
      )
    )
  })

/** Answers one request of a line or a batch; `undefined` for a notification (no id), which gets no answer. */
const handleRequest = (handler: Handler, inFlight: InFlight, request: unknown): Effect.Effect<Response | undefined> =>
  Effect.gen(function* () {
    if (!isRecord(request)) return invalid(null, "expected an object")
    const { jsonrpc, method, params, id } = request
    // A null id is no id a client can match an answer to: an invalid request (its answer has id null).
    const validId = id === undefined || (isId(id) && id !== null)
    if (jsonrpc !== "2.0" || typeof method !== "string" || !validId) {
      return invalid(isId(id) ? id : null, 'needs "jsonrpc": "2.0", a string "method" and a string or number "id"')
    }
    if (params !== undefined && (typeof params !== "object" || params === null)) {
      return invalid(id ?? null, '"params", when given, is an object or an array')
    }
    if (method === cancelMethod) {
      const target = isRecord(params) ? params.id : Array.isArray(params) ? params[0] : undefined
      if (!isId(target)) {
        return id === undefined
          ? undefined
          : response(id, {
              error: { code: ErrorCode.invalidParams, message: `Invalid params: ${cancelMethod} needs {"id": …}` }
            })
      }
      const found = yield* cancel(inFlight, target)
      return id === undefined ? undefined : response(id, { result: { cancelled: found } })
    }
    const run = Effect.suspend(() => handler(method, params ?? {})).pipe(
      Effect.map((result): { result: unknown } | { error: Failure } => ({ result })),
      Effect.catch((error) => Effect.succeed({ error: toError(error) })),
      Effect.catchDefect((defect) => internalError(Cause.die(defect), method).pipe(Effect.map((error) => ({ error }))))
    )
    if (id === undefined) return yield* run.pipe(Effect.as(undefined))
    return response(id, yield* cancellable(inFlight, id, run))
  })

/**
 * The lane a batch member runs in: members on one session run one after another in batch order, members on
 * different sessions (and cancels) at once.
 */
const laneOf = (request: unknown, index: number): string => {
  if (!isRecord(request)) return `#${index}`
  if (request.method === cancelMethod) return `#${index}`
  const session = isRecord(request.params) ? request.params.session : undefined
  return `session:${session === undefined ? defaultSession : String(session)}`
}

/** Answers a batch (spec §6): an array of the answers owed, in batch order, or none when all were notifications. */
const handleBatch = (handler: Handler, inFlight: InFlight, batch: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    if (batch.length === 0) return invalid(null, "an empty batch")
    const lanes = new Map<string, Array<number>>()
    batch.forEach((request, index) => {
      const lane = laneOf(request, index)
      lanes.set(lane, [...(lanes.get(lane) ?? []), index])
    })
    const answered = yield* Effect.forEach(
      lanes.values(),
      (indexes) =>
        Effect.forEach(indexes, (index) =>
          handleRequest(handler, inFlight, batch[index]).pipe(Effect.map((answer) => [index, answer] as const))
        ),
      { concurrency: "unbounded" }
    )
    const owed = answered
      .flat()
      .sort(([a], [b]) => a - b)
      .flatMap(([, answer]) => (answer === undefined ? [] : [answer]))
    return owed.length === 0 ? undefined : owed
  })

/**
 * Answers one line: a request, a notification (no answer) or a batch. `inFlight` is shared by the lines of one
 * connection, so a `$/cancelRequest` finds the request it names.
 */
export const handleLine = (
  handler: Handler,
  line: string,
  inFlight: InFlight = new Map()
): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      return JSON.stringify(
        response(null, { error: { code: ErrorCode.parseError, message: "Parse error: the line is not JSON" } })
      )
    }
    const answer = Array.isArray(message)
      ? yield* handleBatch(handler, inFlight, message)
      : yield* handleRequest(handler, inFlight, message)
    return answer === undefined ? undefined : JSON.stringify(answer)
  }).pipe(
    // Whatever else breaks on the way (an answer that cannot be written as JSON) is still one answer.
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : internalError(cause, "a JSON-RPC line").pipe(
            Effect.map((error) => JSON.stringify(response(idOf(line), { error })))
          )
    )
  )

/** The id of a line's request, when it has a usable one, for an answer that could not be made otherwise. */
const idOf = (line: string): Id => {
  try {
    const { id } = JSON.parse(line) as { id?: unknown }
    return isId(id) ? id : null
  } catch {
    return null
  }
}

/**
 * The answer to one line a stdio reader handed over (Lines.ts): a request's, or the refusal of a line over the limit
 * (never read whole) or not in UTF-8 (which cannot be read); undefined for a notification or a blank line.
 */
export const answerLine = (
  handler: Handler,
  line: Lines.Line,
  inFlight: InFlight
): Effect.Effect<string | undefined> => {
  if (line._tag === "Line")
    return line.text.trim() === "" ? Effect.void.pipe(Effect.as(undefined)) : handleLine(handler, line.text, inFlight)
  const error =
    line._tag === "TooLong"
      ? {
          code: ErrorCode.invalidRequest,
          message: `Invalid Request: a line of ${line.bytes} bytes is over the limit of ${Lines.maxLineBytes} bytes and was refused`
        }
      : { code: ErrorCode.parseError, message: "Parse error: the line is not UTF-8" }
  return Effect.succeed(JSON.stringify(response(null, { error })))
}

/**
 * Serves stdin until it closes or `stop` completes; then `shutdown` runs (calls in flight answer `shutting_down`)
 * and the answers still owed are written before it returns.
 */
export const serveStdio = (handler: Handler, stop: Effect.Effect<void>, shutdown: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const inFlight: InFlight = new Map()
    const running = yield* FiberSet.make()
    const run = yield* FiberSet.runtime(running)()
    const lines = Lines.reader()
    const write = (out: string | undefined) =>
      out === undefined ? Effect.void : Effect.sync(() => process.stdout.write(`${out}\n`))
    const serve = (line: Lines.Line) => {
      if (line._tag !== "Line" || line.text.trim() !== "")
        run(answerLine(handler, line, inFlight).pipe(Effect.flatMap(write)))
    }
    const ondata = (chunk: Buffer) => {
      for (const line of lines.push(chunk)) serve(line)
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        process.stdin.off("data", ondata)
        process.stdin.pause()
      })
    )
    const closed = Effect.callback<void>((resume) => {
      process.stdin.on("data", ondata)
      process.stdin.once("end", () => {
        for (const line of lines.end()) serve(line)
        resume(Effect.void)
      })
      process.stdin.once("close", () => resume(Effect.void))
    })
    yield* Effect.raceFirst(closed, stop)
    yield* shutdown
    yield* FiberSet.awaitEmpty(running).pipe(Effect.timeoutOption(10_000))
  })

/**
 * Serves stdin with the handler `load` gives, reading requests at once: the ready line comes before the handler (the
 * method table and the tool list behind it) has loaded, and each request waits for it.
 */
export const serveLoading = (load: Effect.Effect<Handler>, stop: Effect.Effect<void>, shutdown: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const loaded = yield* Effect.cached(load)
    process.stderr.write("switchyard: ready, JSON-RPC 2.0 on stdio (one request per line)\n")
    yield* serveStdio((method, params) => Effect.flatMap(loaded, (handler) => handler(method, params)), stop, shutdown)
  })
