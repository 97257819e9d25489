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
    "any JSON value or request-shaped object gets an answer with the right id or a standard error code",
    [
      Schema.Union([
        Schema.Json,
        Schema.Struct({ jsonrpc: Schema.Json, id: Schema.Json, method: Schema.Json, params: Schema.Json })
      ])
    ],
    ([value]) =>
      Effect.gen(function* () {
        const line = JSON.stringify(value)
        const out = yield* handleLine(handler, line)
        if (isNotification(line)) return assert.isUndefined(out)
        const answer = Schema.decodeUnknownSync(Answer)(JSON.parse(out!))
        if (answer.error) {
          assert.include([-32700, -32600, -32601, -32602, -32000], answer.error.code)
          assert.isAbove(answer.error.message.length, 5)
        }
        const sent = value as { id?: unknown }
        if (answer.result !== undefined) assert.deepStrictEqual(answer.id, sent.id)
      })
  )
})
