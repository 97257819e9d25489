/** The JSON-RPC line handler as a property: whatever a line holds, the service answers it once, in shape. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ErrorCode, handleLine, RpcError } from "../../src/Server/JsonRpc.ts"

/** A handler like the service's: one known method, bad params refused, anything else not found. */
const handler = (method: string, params: unknown) =>
  method === "browserStatus"
    ? Effect.succeed({ active: false })
    : method === "browser.navigate"
      ? typeof (params as { url?: unknown })?.url === "string"
        ? Effect.succeed({ url: (params as { url: string }).url })
        : Effect.fail(new RpcError({ code: ErrorCode.invalidParams, message: "Invalid params: url" }))
      : Effect.fail(new RpcError({ code: ErrorCode.methodNotFound, message: `Method not found: ${method}` }))

const Answer = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.NullOr(Schema.Union([Schema.String, Schema.Number])),
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(
    Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Schema.Unknown) })
  )
})

/** Ids of every JSON type, the valid ones (string, number, null) more often. */
const AnyId = Schema.Union([Schema.String, Schema.Int, Schema.Finite, Schema.Null, Schema.Json])

/** Requests right and wrong: each member may be missing, of the right type or of any other JSON type. */
const Request = Schema.Struct({
  jsonrpc: Schema.optionalKey(Schema.Union([Schema.Literal("2.0"), Schema.Literal("1.0"), Schema.Json])),
  method: Schema.optionalKey(
    Schema.Union([Schema.Literals(["browserStatus", "browser.navigate"]), Schema.String, Schema.Json])
  ),
  params: Schema.optionalKey(
    Schema.Union([Schema.Struct({ url: Schema.String }), Schema.Struct({ url: Schema.Json }), Schema.Json])
  ),
  id: Schema.optionalKey(AnyId)
})

/** Well-formed requests and notifications: known and unknown methods, good and bad params, readable ids. */
const Valid = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  method: Schema.Union([Schema.Literals(["browserStatus", "browser.navigate"]), Schema.String]),
  params: Schema.optionalKey(Schema.Union([Schema.Struct({ url: Schema.String }), Schema.Json])),
  id: Schema.optionalKey(Schema.Union([Schema.String, Schema.Int, Schema.Finite, Schema.Null]))
})

/** A line as a client might send it: any text, any JSON value, a request right or wrong, or one cut short. */
const Line = Schema.Union([
  Schema.TaggedStruct("text", { text: Schema.String }),
  Schema.TaggedStruct("json", { value: Schema.Json }),
  Schema.TaggedStruct("request", { request: Request }),
  Schema.TaggedStruct("valid", { request: Valid }),
  Schema.TaggedStruct("cut", { request: Request, at: Schema.Int })
])

const lineOf = (line: typeof Line.Type): string => {
  switch (line._tag) {
    case "text":
      return line.text
    case "json":
      return JSON.stringify(line.value)
    case "request":
    case "valid":
      return JSON.stringify(line.request)
    case "cut": {
      const whole = JSON.stringify(line.request)
      return whole.slice(0, Math.abs(line.at) % whole.length)
    }
  }
}

/**
 * What JSON-RPC 2.0 asks of the answer to a line, worked out from the line alone: none for a valid notification;
 * otherwise the request's id when it could be read (a string, a number or null), else null.
 */
const expected = (line: string): { readonly answered: false } | { readonly answered: true; readonly id: unknown } => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return { answered: true, id: null }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { answered: true, id: null }
  const request: Record<string, unknown> = { ...value }
  const hasId = Object.hasOwn(request, "id")
  const id = request.id
  const readable = typeof id === "string" || typeof id === "number" || id === null
  const valid = request.jsonrpc === "2.0" && typeof request.method === "string" && (!hasId || readable)
  if (valid && !hasId) return { answered: false }
  return { answered: true, id: hasId && readable ? id : null }
}

const isNotification = (line: string) => {
  try {
    const v = JSON.parse(line)
    return (
      typeof v === "object" &&
      v !== null &&
      !Array.isArray(v) &&
      v.jsonrpc === "2.0" &&
      typeof v.method === "string" &&
      v.id === undefined
    )
  } catch {
    return false
  }
}

describe("JSON-RPC lines", () => {
  it.effect.prop(
    "any string gets exactly one well-formed answer (none for a valid notification)",
    [Schema.String],
    ([line]) =>
      Effect.gen(function* () {
        const out = yield* handleLine(handler, line)
        if (isNotification(line)) return assert.isUndefined(out)
        const answer = Schema.decodeUnknownSync(Answer)(JSON.parse(out!))
        assert.isTrue((answer.result === undefined) !== (answer.error === undefined), out)
      })
  )

  it.effect.prop(
    "every answer carries the request's id when it could be read, else null; notifications get none",
    [Line],
    ([line]) =>
      Effect.gen(function* () {
        const text = lineOf(line)
        const out = yield* handleLine(handler, text)
        const want = expected(text)
        if (!want.answered) return assert.isUndefined(out, `a notification got an answer: ${text}`)
        assert.isDefined(out, `no answer to ${text}`)
        const answer = Schema.decodeUnknownSync(Answer)(JSON.parse(out!))
        assert.deepStrictEqual(answer.id, want.id, `${text} → ${out}`)
        assert.isTrue((answer.result === undefined) !== (answer.error === undefined), out)
        if (answer.error) {
          assert.include([-32700, -32600, -32601, -32602, -32000], answer.error.code)
          assert.isAbove(answer.error.message.length, 5)
        }
      }),
    { arbitrary: { runs: 400 } }
  )
})
