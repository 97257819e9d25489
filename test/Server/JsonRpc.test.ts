/**
 * The JSON-RPC line handler: as a property, whatever a line holds (a request, a batch, anything) it is answered once
 * and in shape; by example, batches (spec §6), `params` of the wrong type and `$/cancelRequest`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schema } from "effect"
import { ErrorCode, handleLine, type InFlight, RpcError } from "../../src/Server/JsonRpc.ts"

/** Recurses until the stack runs out, as a walk over input nested thousands deep does. */
const overflow = (n: number): number => overflow(n + 1) + 1

/**
 * A handler like the service's: one known method, bad params refused, anything else not found; and two with
 * defects, one that throws and one whose stack overflows.
 */
const handler = (method: string, params: unknown) =>
  method === "browserStatus"
    ? Effect.succeed({ active: false })
    : method === "browser.navigate"
      ? typeof (params as { url?: unknown })?.url === "string"
        ? Effect.succeed({ url: (params as { url: string }).url })
        : Effect.fail(new RpcError({ code: ErrorCode.invalidParams, message: "Invalid params: url" }))
      : method === "throws"
        ? Effect.sync(() => {
            throw new Error("a handler threw")
          })
        : method === "overflows"
          ? Effect.sync(() => overflow(0))
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
    Schema.Union([
      Schema.Literals(["browserStatus", "browser.navigate", "throws", "overflows"]),
      Schema.String,
      Schema.Json
    ])
  ),
  params: Schema.optionalKey(
    Schema.Union([Schema.Struct({ url: Schema.String }), Schema.Struct({ url: Schema.Json }), Schema.Json])
  ),
  id: Schema.optionalKey(AnyId)
})

/** Well-formed requests and notifications: known and unknown methods, good and bad params, readable ids. */
const Valid = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  method: Schema.Union([Schema.Literals(["browserStatus", "browser.navigate", "throws", "overflows"]), Schema.String]),
  params: Schema.optionalKey(Schema.Union([Schema.Struct({ url: Schema.String }), Schema.Json])),
  id: Schema.optionalKey(Schema.Union([Schema.String, Schema.Int, Schema.Finite, Schema.Null]))
})

/** A line as a client might send it: any text, any JSON value, a request right or wrong, a batch, or one cut short. */
const Line = Schema.Union([
  Schema.TaggedStruct("text", { text: Schema.String }),
  Schema.TaggedStruct("batch", { requests: Schema.Array(Schema.Union([Request, Valid, Schema.Json])) }),
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
    case "batch":
      return JSON.stringify(line.requests)
    case "cut": {
      const whole = JSON.stringify(line.request)
      return whole.slice(0, Math.abs(line.at) % whole.length)
    }
  }
}

type Expected = { readonly answered: false } | { readonly answered: true; readonly id: unknown }

/**
 * What JSON-RPC 2.0 asks of the answer to one request, worked out from it alone: none for a valid notification;
 * otherwise the request's id when it could be read (a string, a number or null), else null. A null id makes an
 * invalid request (answered with id null).
 */
const expectedFor = (value: unknown): Expected => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { answered: true, id: null }
  const request: Record<string, unknown> = { ...value }
  const hasId = Object.hasOwn(request, "id")
  const id = request.id
  const readable = typeof id === "string" || typeof id === "number" || id === null
  const params = request.params
  const valid =
    request.jsonrpc === "2.0" &&
    typeof request.method === "string" &&
    (!hasId || (readable && id !== null)) &&
    (params === undefined || (typeof params === "object" && params !== null))
  if (valid && !hasId) return { answered: false }
  return { answered: true, id: hasId && readable ? id : null }
}

/** What a line asks: a parse error, the answer to one request, or for a non-empty batch the answers to its members. */
const expected = (line: string): Expected | ReadonlyArray<Expected> => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return { answered: true, id: null }
  }
  return Array.isArray(value) && value.length > 0 ? value.map(expectedFor) : expectedFor(value)
}

/** Checks one answer against what its request asked. */
const checkAnswer = (answer: unknown, id: unknown, context: string) => {
  const decoded = Schema.decodeUnknownSync(Answer)(answer)
  assert.deepStrictEqual(decoded.id, id, context)
  assert.isTrue((decoded.result === undefined) !== (decoded.error === undefined), context)
  if (decoded.error) {
    assert.include([-32700, -32600, -32601, -32602, -32603, -32000], decoded.error.code, context)
    assert.isAbove(decoded.error.message.length, 5, context)
  }
}

/** Checks a line's output: nothing when nothing is owed, else one answer or an array of the answers owed, in order. */
const checkLine = (text: string, out: string | undefined) => {
  const want = expected(text)
  const context = `${text} → ${out}`
  if (!Array.isArray(want)) {
    const single = want as Expected
    if (!single.answered) return assert.isUndefined(out, `a notification got an answer: ${context}`)
    assert.isDefined(out, `no answer to ${text}`)
    return checkAnswer(JSON.parse(out!), single.id, context)
  }
  const owed = want.filter((w): w is Expected & { answered: true } => w.answered)
  if (owed.length === 0) return assert.isUndefined(out, `a batch of notifications got an answer: ${context}`)
  assert.isDefined(out, `no answer to ${text}`)
  const answers: unknown = JSON.parse(out!)
  assert.isTrue(Array.isArray(answers), context)
  assert.strictEqual((answers as Array<unknown>).length, owed.length, context)
  owed.forEach((w, i) => {
    checkAnswer((answers as Array<unknown>)[i], w.id, context)
  })
}

describe("JSON-RPC lines", () => {
  it.effect.prop(
    "any string gets exactly one well-formed answer (none for a valid notification)",
    [Schema.String],
    ([line]) =>
      Effect.gen(function* () {
        checkLine(line, yield* handleLine(handler, line))
      })
  )

  it.effect.prop(
    "every answer carries the request's id when it could be read, else null; notifications get none",
    [Line],
    ([line]) =>
      Effect.gen(function* () {
        const text = lineOf(line)
        checkLine(text, yield* handleLine(handler, text))
      }),
    { arbitrary: { runs: 400 } }
  )
})

const request = (id: number | undefined, method: string, params?: unknown) =>
  JSON.stringify({
    jsonrpc: "2.0",
    method,
    ...(params === undefined ? {} : { params }),
    ...(id === undefined ? {} : { id })
  })

type Reply = { readonly id: unknown; readonly result?: unknown; readonly error?: { code: number; message: string } }

const parse = (out: string | undefined): unknown => JSON.parse(out ?? "null")

describe("JSON-RPC defects", () => {
  it.effect("a handler that throws or overflows its stack answers -32603 with a message, once", () =>
    Effect.gen(function* () {
      for (const method of ["throws", "overflows"]) {
        const answer = parse(yield* handleLine(handler, request(4, method))) as Reply
        assert.strictEqual(answer.id, 4)
        assert.strictEqual(answer.error?.code, ErrorCode.internalError)
        assert.match(answer.error?.message ?? "", /^Internal error: /)
      }
      assert.include(
        (parse(yield* handleLine(handler, request(5, "throws"))) as Reply).error?.message,
        "a handler threw"
      )
    })
  )

  it.effect('"id": null is an invalid request, answered with id null and not run', () =>
    Effect.gen(function* () {
      const answer = parse(
        yield* handleLine(handler, JSON.stringify({ jsonrpc: "2.0", id: null, method: "browserStatus" }))
      ) as Reply
      assert.strictEqual(answer.id, null)
      assert.strictEqual(answer.error?.code, ErrorCode.invalidRequest)
      assert.isUndefined(answer.result)
    })
  )
})

describe("JSON-RPC batches", () => {
  it.effect("a batch gets an array of the answers owed, notifications left out, each member checked alone", () =>
    Effect.gen(function* () {
      const line = `[${request(1, "browserStatus")}, ${request(undefined, "browserStatus")}, 7, ${request(2, "browser.navigate", { url: "http://x.test/" })}, ${request(3, "nope")}]`
      const answers = parse(yield* handleLine(handler, line)) as Array<Reply>
      assert.deepStrictEqual(
        answers.map((a) => [a.id, a.result ?? a.error?.code]),
        [
          [1, { active: false }],
          [null, ErrorCode.invalidRequest],
          [2, { url: "http://x.test/" }],
          [3, ErrorCode.methodNotFound]
        ]
      )
    })
  )

  it.effect("an empty batch is one Invalid Request; a batch of notifications gets no answer", () =>
    Effect.gen(function* () {
      const empty = parse(yield* handleLine(handler, "[]")) as Reply
      assert.isFalse(Array.isArray(empty))
      assert.strictEqual(empty.error?.code, ErrorCode.invalidRequest)
      assert.strictEqual(empty.id, null)
      assert.isUndefined(
        yield* handleLine(handler, `[${request(undefined, "browserStatus")},${request(undefined, "x")}]`)
      )
    })
  )

  it.effect("members on one session run in batch order, members on different sessions at once", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const done: Array<string> = []
      const gated = (method: string) =>
        Effect.gen(function* () {
          // Waits for a member on another session: would never end if sessions ran one after another.
          if (method === "gated") yield* Deferred.await(gate)
          done.push(method)
          if (method === "opens") yield* Deferred.succeed(gate, undefined)
          return method
        })
      const line = `[${request(1, "gated", { session: "a" })},${request(2, "after", { session: "a" })},${request(3, "opens", { session: "b" })}]`
      const answers = parse(yield* handleLine(gated, line)) as Array<Reply>
      assert.deepStrictEqual(
        answers.map((a) => a.result),
        ["gated", "after", "opens"]
      )
      assert.deepStrictEqual(done, ["opens", "gated", "after"])
    })
  )
})

describe("JSON-RPC params", () => {
  it.effect("params that are neither an object nor an array make an Invalid Request", () =>
    Effect.gen(function* () {
      for (const params of [5, "x", true, null]) {
        const line = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "browserStatus", params })
        const answer = parse(yield* handleLine(handler, line)) as Reply
        assert.strictEqual(answer.error?.code, ErrorCode.invalidRequest, JSON.stringify(params))
        assert.strictEqual(answer.id, 9)
      }
      const byPosition = parse(yield* handleLine(handler, request(10, "browserStatus", []))) as Reply
      assert.deepStrictEqual(byPosition.result, { active: false })
    })
  )
})

describe("JSON-RPC $/cancelRequest", () => {
  it.effect("cancels the request in flight with that id: it stops and answers Request cancelled, once", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      let stopped = false
      const slow = (method: string) =>
        method === "slow"
          ? Deferred.succeed(started, undefined).pipe(
              Effect.andThen(Effect.never),
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  stopped = true
                })
              )
            )
          : Effect.succeed("fast")
      const inFlight: InFlight = new Map()
      const call = yield* Effect.forkChild(handleLine(slow, request(1, "slow"), inFlight))
      yield* Deferred.await(started)
      const ack = parse(yield* handleLine(slow, request(2, "$/cancelRequest", { id: 1 }), inFlight))
      assert.deepStrictEqual(ack, { jsonrpc: "2.0", id: 2, result: { cancelled: true } })
      const answer = parse(yield* Fiber.join(call)) as Reply
      assert.strictEqual(answer.id, 1)
      assert.strictEqual(answer.error?.code, ErrorCode.requestCancelled)
      assert.strictEqual(answer.error?.message, "Request cancelled")
      assert.isTrue(stopped)
      assert.strictEqual(inFlight.size, 0)
      // Nothing in flight by that id any more: the cancel says so, and a cancel sent as a notification gets no answer.
      const late = parse(yield* handleLine(slow, request(3, "$/cancelRequest", { id: 1 }), inFlight))
      assert.deepStrictEqual(late, { jsonrpc: "2.0", id: 3, result: { cancelled: false } })
      assert.isUndefined(yield* handleLine(slow, request(undefined, "$/cancelRequest", { id: 1 }), inFlight))
      const bad = parse(yield* handleLine(slow, request(4, "$/cancelRequest", { id: {} }), inFlight)) as Reply
      assert.strictEqual(bad.error?.code, ErrorCode.invalidParams)
    })
  )
})
