/**
 * A deterministic stand-in for an LLM provider, so the bundled suite runs Stagehand for real in CI with no network:
 * an OpenAI-compatible `/v1/chat/completions` server on 127.0.0.1 answering Stagehand's DOM-mode act, observe and
 * extract requests from the accessibility-tree lines (`[0-53] button: Submit`) in their prompts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Redacted, Result } from "effect"
import * as Instruction from "../Engine/Instruction.ts"
import type * as Model from "../Engine/Model.ts"

// ---------------------------------------------------------------------------------------------------------------
// The page as the prompt shows it.

export interface Line {
  readonly id: string
  readonly role: string
  readonly name: string
  readonly depth: number
}

const lineRe = /^(\s*)\[(\d+-\d+)\] (.*)$/

/** Every `[frame-node] role: name` line of a prompt's accessibility tree, in order. */
export const parseTree = (text: string): ReadonlyArray<Line> =>
  text.split("\n").flatMap((raw) => {
    const match = lineRe.exec(raw)
    if (match === null) return []
    const rest = match[3]!.trim()
    const colon = rest.indexOf(": ")
    return [
      {
        id: match[2]!,
        depth: match[1]!.length,
        role: (colon < 0 ? rest : rest.slice(0, colon)).trim(),
        // States the tree appends (`option: Red [selected]`) are not part of the name.
        name:
          colon < 0
            ? ""
            : rest
                .slice(colon + 2)
                .replace(/(\s\[[a-z -]+\])+$/i, "")
                .trim()
      }
    ]
  })

const normalize = (s: string) =>
  s
    .toLowerCase()
    .replace(/[*:]+\s*$/g, "")
    .replace(/\s*\*\s*/g, " ")
    .replace(/\s+/g, " ")
    .trim()
const compact = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "")
const stopWords = new Set(["the", "a", "an", "on", "to", "in", "into", "of", "button", "link", "field", "box", "page"])
const words = (s: string) =>
  normalize(s)
    .split(/[^\p{L}\p{N}@.+-]+/u)
    .filter((w) => w !== "" && !stopWords.has(w))

/** How well an element's name matches the phrase an instruction gave: 0 (not at all) to 4 (equal). */
export const score = (name: string, target: string) => {
  const n = normalize(name)
  const t = normalize(target)
  if (n === "" || t === "") return 0
  if (n === t) return 4
  if (n.startsWith(t) || t.startsWith(n)) return 3
  if (n.includes(t)) return 2
  const wanted = words(t)
  const have = new Set(words(n))
  return wanted.length > 0 && wanted.every((w) => have.has(w)) ? 1 : 0
}

// ---------------------------------------------------------------------------------------------------------------
// Choosing an element.

const editable = ["textbox", "searchbox", "combobox", "spinbutton", "textarea"]
const clickable = [
  "button",
  "link",
  "checkbox",
  "radio",
  "switch",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "tab",
  "option",
  "combobox",
  "treeitem",
  "listitem",
  "cell",
  "gridcell",
  "image",
  "img"
]
const checkable = ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"]
const selectable = ["select", "combobox", "listbox"]

/** A small seeded generator (mulberry32): the same seed and phrase always break a tie the same way. */
const random = (seed: number, phrase: string) => {
  let state = seed >>> 0
  for (let i = 0; i < phrase.length; i++) state = Math.imul(state ^ phrase.charCodeAt(i), 2654435761) >>> 0
  state = (state + 0x6d2b79f5) >>> 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** The best-matching lines among `roles` (all roles when `roles` is undefined), best score first. */
const candidates = (lines: ReadonlyArray<Line>, target: string, roles: ReadonlyArray<string> | undefined) => {
  const scored = lines
    .filter((l) => roles === undefined || roles.includes(l.role.toLowerCase()))
    .map((line) => ({ line, score: score(line.name, target) }))
    .filter((c) => c.score > 0)
  const best = Math.max(0, ...scored.map((c) => c.score))
  return scored.filter((c) => c.score === best).map((c) => c.line)
}

/** One element for a phrase: preferred roles first, then (when `anyRole`) any named line; ties broken by seed. */
export const pick = (
  lines: ReadonlyArray<Line>,
  target: string,
  roles: ReadonlyArray<string>,
  seed: number,
  anyRole = false
): Line | undefined => {
  let found = candidates(lines, target, roles)
  if (found.length === 0 && anyRole) {
    found = candidates(
      lines.filter((l) => l.role !== "LabelText"),
      target,
      undefined
    )
  }
  if (found.length <= 1) return found[0]
  return found[Math.floor(random(seed, target) * found.length)]
}

export interface ScriptedAction {
  readonly elementId: string
  readonly description: string
  readonly method: string
  readonly arguments: ReadonlyArray<string>
}

const actionOf = (line: Line, method: string, args: ReadonlyArray<string>): ScriptedAction => ({
  elementId: line.id,
  description: `${line.role} ${line.name}`.trim(),
  method,
  arguments: args
})

const quotedRe = /"([^"]+)"|“([^”]+)”|'([^']+)'/g
const quoted = (text: string) => [...text.matchAll(quotedRe)].map((m) => (m[1] ?? m[2] ?? m[3])!)

/** Reads an instruction: the Playwright grammar, else its first word as the verb and its quoted phrases. */
const understand = (instruction: string): Instruction.Instruction | undefined => {
  const parsed = Instruction.parse(instruction)
  if (Result.isSuccess(parsed)) return parsed.success
  const phrases = quoted(instruction)
  const verb = instruction.trim().split(/\s+/)[0]?.toLowerCase() ?? ""
  const [first, second] = phrases
  if (first === undefined) return undefined
  switch (verb) {
    case "fill":
    case "enter":
      return second === undefined ? undefined : { kind: "fill", target: first, value: second }
    case "type":
      return second === undefined ? { kind: "type", text: first } : { kind: "type", text: first, target: second }
    case "select":
    case "choose":
      return second === undefined ? undefined : { kind: "select", option: first, target: second }
    case "check":
    case "tick":
      return { kind: "check", target: first, checked: true }
    case "uncheck":
      return { kind: "check", target: first, checked: false }
    default:
      return { kind: "click", target: first, double: false }
  }
}

/**
 * The act answer for an instruction on a page: an element and a method, or null when nothing fits. The instruction
 * is read with the Playwright engine's grammar (Instruction.ts), else from its quoted phrases; the target phrase is
 * scored against the names of the lines whose role suits the verb (text boxes for fill, buttons and links for
 * click, …); equal best scores are broken by the seed. No match answers null, as a real model does for a missing
 * element, so a page that has not rendered yet fails the way it fails in production.
 */
export const act = (instruction: string, lines: ReadonlyArray<Line>, seed: number): ScriptedAction | null => {
  const ins = understand(instruction)
  if (ins === undefined) return null
  const on = (target: string, roles: ReadonlyArray<string>, anyRole = false) =>
    pick(lines, target, roles, seed, anyRole)
  switch (ins.kind) {
    case "click": {
      const line = on(ins.target, clickable, true)
      return line ? actionOf(line, ins.double ? "doubleClick" : "click", []) : null
    }
    case "fill": {
      const line = on(ins.target, editable)
      return line ? actionOf(line, "fill", [ins.value]) : null
    }
    case "type": {
      const line = ins.target === undefined ? undefined : on(ins.target, editable)
      return line ? actionOf(line, "type", [ins.text]) : null
    }
    case "select": {
      const line = on(ins.target, selectable)
      return line ? actionOf(line, "selectOptionFromDropdown", [ins.option]) : null
    }
    case "check": {
      const line = on(ins.target, checkable)
      return line ? actionOf(line, "click", []) : null
    }
    case "press": {
      const line = ins.target === undefined ? undefined : on(ins.target, [...editable, ...clickable], true)
      return line ? actionOf(line, "press", [ins.key]) : null
    }
    case "hover": {
      const line = on(ins.target, clickable, true)
      return line ? actionOf(line, "hover", []) : null
    }
    case "scroll": {
      const line = lines.find((l) => l.role.startsWith("scrollable"))
      if (line === undefined) return null
      const [method, args] =
        ins.direction === "down"
          ? ["nextChunk", []]
          : ins.direction === "up"
            ? ["prevChunk", []]
            : ["scrollTo", [ins.direction === "top" ? "0%" : "100%"]]
      return actionOf(line, method, args)
    }
    default:
      // Going back or forward is not an element action: a model finds nothing to act on.
      return null
  }
}

/** The observe answer: every element matching the instruction's phrases (or its words), with a fitting method. */
export const observe = (instruction: string, lines: ReadonlyArray<Line>): ReadonlyArray<ScriptedAction> => {
  const phrases = quoted(instruction)
  const wanted = phrases.length > 0 ? phrases : [words(instruction).join(" ")]
  const out: Array<ScriptedAction> = []
  for (const phrase of wanted) {
    let found = candidates(lines, phrase, [...editable, ...clickable])
    if (found.length === 0) found = candidates(lines, phrase, undefined)
    for (const line of found) {
      if (out.some((a) => a.elementId === line.id)) continue
      out.push(actionOf(line, editable.includes(line.role.toLowerCase()) ? "fill" : "click", []))
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// Extract: a caller's JSON schema filled from `Label: value` lines.

type JsonSchema = {
  readonly type?: string | ReadonlyArray<string>
  readonly description?: string
  readonly properties?: Record<string, JsonSchema>
  readonly items?: JsonSchema
  readonly anyOf?: ReadonlyArray<JsonSchema>
}

const typeOf = (schema: JsonSchema | undefined): string => {
  if (schema === undefined) return "string"
  if (typeof schema.type === "string") return schema.type
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null") ?? "string"
  const alternative = schema.anyOf?.find((s) => s.type !== "null")
  return alternative ? typeOf(alternative) : schema.properties ? "object" : "string"
}

/** `orderTotal` → `order total`. */
const spaced = (key: string) =>
  key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .toLowerCase()

/** The text after the label that names `key` (or `description`), from `Label: value` or a label line and its next. */
export const findValue = (lines: ReadonlyArray<Line>, key: string, description?: string): string | undefined => {
  const labels = [description, spaced(key)].filter((l): l is string => l !== undefined && l.trim() !== "")
  for (const label of labels) {
    const want = compact(label)
    for (const [i, line] of lines.entries()) {
      const colon = line.name.indexOf(": ")
      if (colon > 0 && compact(line.name.slice(0, colon)) === want) return line.name.slice(colon + 2).trim()
      if (compact(line.name) === want && line.role !== "button") {
        const next = lines[i + 1]
        if (next !== undefined && next.name !== "") return next.name
      }
    }
    for (const line of lines) {
      const colon = line.name.indexOf(": ")
      if (colon > 0 && compact(line.name.slice(0, colon)).includes(want)) return line.name.slice(colon + 2).trim()
    }
  }
  return undefined
}

const coerce = (raw: string | undefined, schema: JsonSchema | undefined): unknown => {
  if (raw === undefined) return null
  switch (typeOf(schema)) {
    case "number":
    case "integer": {
      const match = /-?\d[\d,]*(\.\d+)?/.exec(raw)
      return match === null ? null : Number(match[0].replaceAll(",", ""))
    }
    case "boolean":
      return /^(yes|true|on|checked)\b/i.test(raw)
    case "array":
      return raw.split(/\s*,\s*/).map((item) => coerce(item, schema?.items))
    default:
      return raw
  }
}

/** Fills `schema` from the page's lines; what is not on the page is null. */
export const extract = (schema: JsonSchema, lines: ReadonlyArray<Line>): unknown => {
  const properties = schema.properties ?? {}
  const keys = Object.keys(properties)
  // Stagehand's own schema for an extract without one.
  if (keys.length === 1 && keys[0] === "extraction") {
    return {
      extraction: lines
        .filter((l) => l.role === "StaticText" || l.role === "heading")
        .map((l) => l.name)
        .join("\n")
    }
  }
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    const property = properties[key]
    out[key] =
      typeOf(property) === "object" && property?.properties
        ? extract(property, lines)
        : coerce(findValue(lines, key, property?.description), property)
  }
  return out
}

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
