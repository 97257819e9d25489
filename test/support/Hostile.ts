/**
 * Hostile input for the surfaces, as a Schema the property tests draw from: nesting thousands deep, big strings,
 * bytes that are not UTF-8, a BOM, NUL and lone surrogates, JSON of every type where a request wants another, and
 * requests right and wrong (ids of every type, `"id": null`, unknown methods, tool calls with hostile arguments).
 * Each drawn message becomes one line (or one HTTP body); the surface's rules say how many answers it is owed.
 */
import { Schema } from "effect"

/** The tools and methods a message names, known and not. */
const methods = [
  "browser.navigate",
  "browser.act",
  "browser.extract",
  "browser.status",
  "browserStatus",
  "tools/call",
  "tools/list",
  "ping",
  "nope",
  ""
] as const
const tools = ["browser_navigate", "browser_act", "browser.extract", "browser_status", "browser.close", "no_such_tool"]

/** Where a deep structure or a big value goes. */
const Where = Schema.Literals(["params", "arguments", "id", "session", "url", "method"])

export const Hostile = Schema.Union([
  Schema.TaggedStruct("nested", { depth: Schema.Int, array: Schema.Boolean, where: Where }),
  Schema.TaggedStruct("big", { kilobytes: Schema.Int, where: Where }),
  Schema.TaggedStruct("bytes", { bytes: Schema.Array(Schema.Int) }),
  Schema.TaggedStruct("text", { text: Schema.String }),
  Schema.TaggedStruct("json", { value: Schema.Json }),
  Schema.TaggedStruct("encoding", {
    text: Schema.String,
    form: Schema.Literals(["bom", "nul", "surrogate", "latin1", "overlong", "cut-utf8"])
  }),
  Schema.TaggedStruct("call", {
    method: Schema.Union([Schema.Literals(methods), Schema.String, Schema.Json]),
    tool: Schema.Union([Schema.Literals(tools), Schema.Json]),
    arguments: Schema.Json,
    id: Schema.Union([Schema.Literal("fresh"), Schema.Null, Schema.Json]),
    jsonrpc: Schema.Union([Schema.Literal("2.0"), Schema.Json])
  })
])
export type Hostile = typeof Hostile.Type

const nestedText = (depth: number, array: boolean) => {
  const d = 1 + (Math.abs(depth) % 8_000)
  return array ? `${"[".repeat(d)}1${"]".repeat(d)}` : `${'{"a":'.repeat(d)}1${"}".repeat(d)}`
}

/** The JSON text of a request whose `where` member holds `inner` (JSON text). */
const requestWith = (id: string, where: typeof Where.Type, inner: string, surface: "jsonrpc" | "mcp") => {
  const idText = where === "id" ? inner : JSON.stringify(id)
  const method = where === "method" ? inner : JSON.stringify(surface === "mcp" ? "tools/call" : "browser.navigate")
  const args =
    where === "arguments"
      ? `{"url":"about:blank","x":${inner}}`
      : where === "url"
        ? `{"url":${inner}}`
        : where === "session"
          ? `{"url":"about:blank","session":${inner}}`
          : `{"url":"about:blank"}`
  const params =
    where === "params" ? inner : surface === "mcp" ? `{"name":"browser_navigate","arguments":${args}}` : args
  return `{"jsonrpc":"2.0","id":${idText},"method":${method},"params":${params}}`
}

/** A request whose URL is `message.text`, with its bytes made wrong in the way `message.form` says. */
const encoded = (message: Extract<Hostile, { _tag: "encoding" }>, id: string, surface: "jsonrpc" | "mcp"): Buffer => {
  const request = Buffer.from(requestWith(id, "url", JSON.stringify(message.text.replaceAll("\n", " ")), surface))
  switch (message.form) {
    case "bom":
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), request])
    case "nul":
      return Buffer.concat([request.subarray(0, 10), Buffer.from([0]), request.subarray(10)])
    case "surrogate":
      return Buffer.from(requestWith(id, "url", '"\\ud800\\udfff\\udc00"', surface))
    case "latin1":
      return Buffer.from(requestWith(id, "url", '"caf\u00e9"', surface), "latin1")
    case "overlong":
      return Buffer.concat([request.subarray(0, 10), Buffer.from([0xc0, 0xaf]), request.subarray(10)])
    case "cut-utf8":
      return Buffer.concat([request.subarray(0, 10), Buffer.from([0xe2, 0x82]), request.subarray(10)])
  }
}

/** A message as the bytes of one line (without its newline); `id` is a fresh id the message may use. */
export const lineOf = (message: Hostile, id: string, surface: "jsonrpc" | "mcp"): Buffer => {
  switch (message._tag) {
    case "nested":
      return Buffer.from(requestWith(id, message.where, nestedText(message.depth, message.array), surface))
    case "big":
      return Buffer.from(
        requestWith(
          id,
          message.where,
          JSON.stringify("x".repeat(1 + (Math.abs(message.kilobytes) % 400) * 1024)),
          surface
        )
      )
    case "bytes":
      return Buffer.from(message.bytes.map((b) => Math.abs(b) % 256).filter((b) => b !== 0x0a))
    case "text":
      return Buffer.from(message.text.replaceAll("\n", " "))
    case "json":
      return Buffer.from(JSON.stringify(message.value))
    case "encoding":
      return encoded(message, id, surface)
    case "call": {
      const request: Record<string, unknown> = {
        jsonrpc: message.jsonrpc,
        method: message.method,
        params:
          surface === "mcp"
            ? { name: message.tool, arguments: message.arguments }
            : typeof message.arguments === "object" && message.arguments !== null
              ? message.arguments
              : { value: message.arguments }
      }
      if (message.id === "fresh") request.id = id
      else if (message.id !== undefined) request.id = message.id
      return Buffer.from(JSON.stringify(request))
    }
  }
}

/**
 * How many answers a line is owed on a surface: one for anything but a valid notification and a blank line (and, on
 * MCP, a response), whatever else it holds; `id` is the id that answer must carry when it can carry one.
 */
export const owed = (
  line: Buffer,
  surface: "jsonrpc" | "mcp",
  maxBytes: number
): { readonly answers: 0 | 1; readonly id: string | number | null } => {
  if (line.length > maxBytes) return { answers: 1, id: null }
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(line)
  } catch {
    return { answers: 1, id: null }
  }
  if (text.trim() === "") return { answers: 0, id: null }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { answers: 1, id: null }
  }
  const isRecord = typeof value === "object" && value !== null && !Array.isArray(value)
  if (Array.isArray(value)) {
    if (surface === "mcp" || value.length === 0) return { answers: 1, id: null }
    const members = value.map((member) => owedBy(member, surface))
    return { answers: members.some((m) => m.answers === 1) ? 1 : 0, id: null }
  }
  return isRecord ? owedBy(value, surface) : { answers: 1, id: null }
}

const owedBy = (value: unknown, surface: "jsonrpc" | "mcp"): { answers: 0 | 1; id: string | number | null } => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { answers: 1, id: null }
  const r = value as Record<string, unknown>
  const usable =
    typeof r.id === "string" || (typeof r.id === "number" && (surface === "jsonrpc" || Number.isInteger(r.id)))
  const params = r.params
  const goodParams =
    params === undefined ||
    (typeof params === "object" && params !== null && (surface === "jsonrpc" || !Array.isArray(params)))
  const request = r.jsonrpc === "2.0" && typeof r.method === "string" && (surface === "jsonrpc" || goodParams)
  // The answer carries the id of a well-formed request; an invalid one may be answered with id null (spec §5).
  const id = usable && request ? (r.id as string | number) : null
  if (surface === "mcp" && !("method" in r) && ("result" in r || "error" in r)) return { answers: 0, id: null }
  if (r.jsonrpc === "2.0" && typeof r.method === "string" && !("id" in r)) {
    // A notification with params of the wrong type is an invalid request; a good one is never answered.
    return { answers: goodParams ? 0 : 1, id: null }
  }
  return { answers: 1, id }
}
