/**
 * The JSON schema an `extract` caller passes, as the zod 4 schema Stagehand takes. Objects that do not say otherwise
 * get `additionalProperties: false`: strict structured outputs (OpenAI) require it and extraction wants no extras.
 */
import { Result } from "effect"
import { z } from "zod"
import { InvalidInput } from "../../Errors/Page.ts"

type Json = { readonly [key: string]: unknown }

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const nested = ["items", "additionalItems", "not", "if", "then", "else", "contains"] as const
const lists = ["anyOf", "oneOf", "allOf", "prefixItems"] as const
const maps = ["properties", "$defs", "definitions", "patternProperties"] as const

/** A copy of `schema` with closed objects. */
export const closeObjects = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(closeObjects)
  if (!isObject(schema)) return schema
  const out: Record<string, unknown> = { ...schema }
  for (const key of nested) if (key in out) out[key] = closeObjects(out[key])
  for (const key of lists) if (Array.isArray(out[key])) out[key] = (out[key] as Array<unknown>).map(closeObjects)
  for (const key of maps) {
    const map = out[key]
    if (isObject(map)) out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, closeObjects(v)]))
  }
  const isObjectType = out.type === "object" || (Array.isArray(out.type) && out.type.includes("object"))
  if ((isObjectType || isObject(out.properties)) && !("additionalProperties" in out)) out.additionalProperties = false
  return out
}

export const toZod = (jsonSchema: unknown): Result.Result<z.ZodType, InvalidInput> => {
  if (!isObject(jsonSchema)) {
    return Result.fail(
      new InvalidInput({
        engine: "stagehand",
        action: "extract",
        field: "jsonSchema",
        message: `extract takes a JSON schema object, not ${JSON.stringify(jsonSchema)}`
      })
    )
  }
  try {
    return Result.succeed(z.fromJSONSchema(closeObjects(jsonSchema) as z.core.JSONSchema.JSONSchema))
  } catch (error) {
    return Result.fail(
      new InvalidInput({
        engine: "stagehand",
        action: "extract",
        field: "jsonSchema",
        cause: error,
        message: `the JSON schema cannot be used for extraction: ${error instanceof Error ? error.message : String(error)}`
      })
    )
  }
}
