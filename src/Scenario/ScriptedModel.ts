/**
 * A deterministic stand-in for an LLM provider, so the bundled suite runs Stagehand for real in CI with no network:
 * an OpenAI-compatible `/v1/chat/completions` server on 127.0.0.1 answering Stagehand's DOM-mode act, observe and
 * extract requests; what it answers is decided in `ScriptedModel/` from the tree lines of their prompts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Redacted } from "effect"
import type * as Model from "../Engine/Model.ts"
import { act, observe } from "./ScriptedModel/Act.ts"
import { extract, type JsonSchema } from "./ScriptedModel/Extract.ts"
import { parseTree } from "./ScriptedModel/Tree.ts"

// ---------------------------------------------------------------------------------------------------------------
// Requests and answers.

export type Kind = "act" | "observe" | "extract" | "extract-metadata" | "unknown"

interface ChatBody {
  readonly model?: unknown
  readonly messages?: ReadonlyArray<{ readonly content?: unknown }>
  readonly response_format?: { readonly json_schema?: { readonly schema?: JsonSchema } }
}

export const kindOf = (body: ChatBody): Kind => {
  const schema = body.response_format?.json_schema?.schema
  if (schema === undefined) return "unknown"
  const properties = Object.keys(schema.properties ?? {})
  if (properties.includes("action") && properties.includes("twoStep")) return "act"
  if (properties.length === 1 && properties[0] === "elements") return "observe"
  if (properties.length === 2 && properties.includes("progress") && properties.includes("completed")) {
    return "extract-metadata"
  }
  return "extract"
}

export const promptText = (body: ChatBody): string =>
  (body.messages ?? [])
    .map((m) =>
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p: { text?: unknown }) => (typeof p.text === "string" ? p.text : "")).join("\n")
          : ""
    )
    .join("\n")

const between = (text: string, patterns: ReadonlyArray<RegExp>) => {
  for (const pattern of patterns) {
    const match = pattern.exec(text)
    if (match?.[1] !== undefined) return match[1].trim()
  }
  return ""
}

export type Answer = { readonly ok: true; readonly content: unknown } | { readonly ok: false; readonly error: string }

/** The answer to one chat request: what the message content (a JSON string) should hold, or why there is none. */
export const answer = (body: ChatBody, seed: number): Answer => {
  const text = promptText(body)
  const lines = parseTree(text)
  switch (kindOf(body)) {
    case "act": {
      const instruction = between(text, [
        /given the following action: ([\s\S]*?)\.\s+IF AND ONLY IF/,
        /given the following action: ([\s\S]*?)\.\s/
      ])
      return { ok: true, content: { action: act(instruction, lines, seed), twoStep: false } }
    }
    case "observe": {
      const instruction = between(text, [/instruction: ([\s\S]*?)\n\s*Accessibility Tree:/])
      return { ok: true, content: { elements: observe(instruction, lines) } }
    }
    case "extract-metadata":
      return { ok: true, content: { progress: "read what the page shows", completed: true } }
    case "extract":
      return { ok: true, content: extract(body.response_format!.json_schema!.schema!, lines) }
    default:
      return {
        ok: false,
        error:
          "the scripted model answers Stagehand DOM requests (act, observe, extract) only; use a real provider for computer-use and Magnitude"
      }
  }
}

/** A model named `scripted-seed-<n>` carries its run's seed, so runs in parallel each get their own. */
const seedOf = (body: ChatBody): number | undefined => {
  const match = /seed-(-?\d+)$/.exec(typeof body.model === "string" ? body.model : "")
  return match === null ? undefined : Number(match[1])
}

/** The model configuration for runs with `seed`: Stagehand's DOM mode pointed at this server. */
export const configFor = (origin: string, seed: number): Model.ModelConfig => ({
  model: `openai/scripted-seed-${seed}`,
  apiKeys: { openai: Redacted.make("scripted-model") },
  baseURLs: { openai: `${origin}/v1` }
})

const completion = (content: string) => ({
  id: `chatcmpl-scripted-${Math.random().toString(36).slice(2, 10)}`,
  object: "chat.completion",
  created: Math.floor(Date.now() / 1000),
  model: "scripted",
  choices: [
    { index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop", logprobs: null }
  ],
  usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }
})

// ---------------------------------------------------------------------------------------------------------------
// The server.

export interface ScriptedModel {
  /** `http://127.0.0.1:P`. */
  readonly origin: string
  /** The seed that breaks ties for requests whose model name carries none. */
  readonly setSeed: (seed: number) => void
  /** Requests answered so far, by kind. */
  readonly counts: () => Readonly<Record<Kind, number>>
  /** The last requests (up to 100): their kind, prompt and answer, for debugging a scenario. */
  readonly recent: () => ReadonlyArray<{ readonly kind: Kind; readonly prompt: string; readonly answer: Answer }>
  /** Model configuration that points Stagehand's DOM mode at this server, for a run with `seed`. */
  readonly modelConfig: (seed?: number) => Model.ModelConfig
}

const sendJson = (res: ServerResponse, status: number, value: unknown) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))

export const start = Effect.acquireRelease(
  Effect.promise(async () => {
    let seed = 0
    const counts: Record<Kind, number> = { act: 0, observe: 0, extract: 0, "extract-metadata": 0, unknown: 0 }
    const recent: Array<{ kind: Kind; prompt: string; answer: Answer }> = []
    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      if (req.method !== "POST" || !(req.url ?? "").startsWith("/v1/chat/completions")) {
        return sendJson(res, 404, {
          error: { message: `no such endpoint: ${req.method} ${req.url}`, type: "scripted" }
        })
      }
      let body: ChatBody
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatBody
      } catch {
        return sendJson(res, 400, { error: { message: "the request body is not JSON", type: "scripted" } })
      }
      const kind = kindOf(body)
      counts[kind]++
      const reply = answer(body, seedOf(body) ?? seed)
      recent.push({ kind, prompt: promptText(body), answer: reply })
      if (recent.length > 100) recent.shift()
      if (!reply.ok) return sendJson(res, 400, { error: { message: reply.error, type: "scripted" } })
      return sendJson(res, 200, completion(JSON.stringify(reply.content)))
    }
    const server: Server = createServer((req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: "scripted model failed", type: "scripted" } })
      })
    })
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const model: ScriptedModel = {
      origin,
      setSeed: (s) => {
        seed = s
      },
      counts: () => ({ ...counts }),
      recent: () => [...recent],
      modelConfig: (s = seed) => configFor(origin, s)
    }
    return { server, model }
  }),
  ({ server }) =>
    Effect.promise(
      () =>
        new Promise<void>((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
    )
).pipe(Effect.map(({ model }) => model))
