/**
 * The scripted model's extract answer: the caller's JSON schema filled from `Label: value` lines of the page's tree;
 * what the page does not show is null.
 */
import { compact, type Line } from "./Tree.ts"

export type JsonSchema = {
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
