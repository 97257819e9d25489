/**
 * MCP's stdio transport, answering what the SDK's drops: one JSON-RPC message per line; a line that is not JSON (or
 * not UTF-8) is answered -32700, one that is not a JSON-RPC message (`[]`, `7`, a batch, `"id": null`) -32600, each
 * with id null unless the message had a usable id; a line over the size limit is refused with an error and reading
 * goes on at the next line, so the service and its sessions go on. The SDK's own transport answers none of these and
 * closes (ending the service) on an oversized line.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Lines from "../Lines.ts"

type Id = string | number | null

const idOf = (value: unknown): Id => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null
  const id = (value as { id?: unknown }).id
  return typeof id === "string" || typeof id === "number" ? id : null
}

/** Why a line gets an error answer instead of being served, or the message it carries. */
export const read = (
  line: Lines.Line
):
  | { readonly message: JSONRPCMessage }
  | { readonly ignored: true }
  | { readonly id: Id; readonly code: number; readonly error: string } => {
  switch (line._tag) {
    case "TooLong":
      return {
        id: null,
        code: -32600,
        error: `Invalid Request: a message of ${line.bytes} bytes is over the stdio limit of ${Lines.maxLineBytes} bytes and was refused; the service goes on`
      }
    case "NotUtf8":
      return { id: null, code: -32700, error: "Parse error: the line is not UTF-8" }
  }
  let value: unknown
  try {
    value = JSON.parse(line.text)
  } catch {
    return { id: null, code: -32700, error: "Parse error: the line is not JSON" }
  }
  if (Array.isArray(value)) {
    return { id: null, code: -32600, error: "Invalid Request: one JSON-RPC message per line (MCP takes no batches)" }
  }
  const id = idOf(value)
  const record = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {}
  // A response is never answered, not even a malformed one (the client's error about a line of ours).
  if (!("method" in record) && ("result" in record || "error" in record)) {
    const parsed = JSONRPCMessageSchema.safeParse(value)
    return parsed.success ? { message: parsed.data } : { ignored: true }
  }
  if ("id" in record && record.id === null) {
    return { id: null, code: -32600, error: 'Invalid Request: "id" is null' }
  }
  const parsed = JSONRPCMessageSchema.safeParse(value)
  if (!parsed.success) {
    return {
      id,
      code: -32600,
      error: 'Invalid Request: not a JSON-RPC 2.0 message (needs "jsonrpc": "2.0" and a "method", or a response)'
    }
  }
  return { message: parsed.data }
}

export class StdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private readonly lines = Lines.reader()
  private started = false

  private readonly stdin: NodeJS.ReadableStream
  private readonly stdout: NodeJS.WritableStream

  constructor(stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout) {
    this.stdin = stdin
    this.stdout = stdout
  }

  private readonly ondata = (chunk: Buffer | string) => {
    for (const line of this.lines.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)) this.serve(line)
  }

  private readonly onstreamerror = (error: Error) => this.onerror?.(error)

  private serve(line: Lines.Line) {
    // A blank line is no message (as on the JSON-RPC surface).
    if (line._tag === "Line" && line.text.trim() === "") return
    let outcome: ReturnType<typeof read>
    try {
      outcome = read(line)
    } catch (error) {
      // A message the checks themselves cannot take (nested past the stack): still one answer.
      outcome = { id: null, code: -32603, error: `Internal error: ${(error as Error).message}` }
    }
    if ("message" in outcome) {
      this.onmessage?.(outcome.message)
      return
    }
    if ("ignored" in outcome) return
    void this.send({ jsonrpc: "2.0", id: outcome.id, error: { code: outcome.code, message: outcome.error } } as never)
  }

  async start() {
    if (this.started) throw new Error("the stdio transport is already started")
    this.started = true
    this.stdin.on("data", this.ondata)
    this.stdin.on("error", this.onstreamerror)
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.stdout.once("drain", resolve)
    })
  }

  async close() {
    this.stdin.off("data", this.ondata)
    this.stdin.off("error", this.onstreamerror)
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause()
    this.onclose?.()
  }
}
