/**
 * JSON Schema to a zod 3 schema for magnitude-core's `extract`, which takes zod 3 (its own nested copy): zod 4 schemas
 * fail its `instanceof ZodObject` check. Magnitude turns the zod schema back into JSON Schema with zod-to-json-schema
 * and then into BAML types, so only shapes that survive that round trip are accepted; the rest are InvalidSchema.
 */
import type { z as Z3 } from "zod/v3"

/** The zod 3 namespace magnitude-core loads: pass that one, so `instanceof` checks inside magnitude hold. */
export type Zod3 = typeof Z3

export class InvalidSchema extends Error {
  override readonly name = "InvalidSchema"
  readonly path: string
  constructor(path: string, message: string) {
    super(`${path}: ${message}`)
    this.path = path
  }
}

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const describe = <T extends Z3.ZodTypeAny>(type: T, schema: Json): T =>
  typeof schema.description === "string" ? (type.describe(schema.description) as T) : type

/** Drops `null` from a type list or union: a property that may be null becomes an optional one instead. */
const withoutNull = (schema: Json): { readonly schema: Json; readonly nullable: boolean } => {
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t) => t !== "null")
    const nullable = types.length < schema.type.length
    return { schema: { ...schema, type: types.length === 1 ? types[0] : types }, nullable }
  }
  const union = Array.isArray(schema.anyOf) ? "anyOf" : Array.isArray(schema.oneOf) ? "oneOf" : undefined
  if (union !== undefined) {
    const options = (schema[union] as Array<unknown>).filter((o) => !(isObject(o) && o.type === "null"))
    const nullable = options.length < (schema[union] as Array<unknown>).length
    if (options.length === 1 && isObject(options[0])) {
      const { [union]: _dropped, ...rest } = schema
      return { schema: { ...rest, ...options[0] }, nullable }
    }
    return { schema: { ...schema, [union]: options }, nullable }
  }
  return { schema, nullable: false }
}

const literalOf = (z: Zod3, value: unknown, path: string): Z3.ZodTypeAny => {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return z.literal(value)
  if (value === null) return z.null()
  throw new InvalidSchema(path, `const/enum value ${JSON.stringify(value)} is not a string, number, boolean or null`)
}

const convert = (z: Zod3, input: unknown, path: string): Z3.ZodTypeAny => {
  if (input === true || (isObject(input) && Object.keys(input).length === 0)) return z.string()
  if (!isObject(input)) throw new InvalidSchema(path, "a schema must be an object")
  const { schema } = withoutNull(input)
  if (schema.$ref !== undefined) throw new InvalidSchema(path, "$ref is not supported; inline the definition")
  if (schema.allOf !== undefined) throw new InvalidSchema(path, "allOf is not supported; merge the schemas")
  if (schema.const !== undefined) return describe(literalOf(z, schema.const, path), schema)
  if (Array.isArray(schema.enum)) {
    const values = schema.enum
    if (values.length > 0 && values.every((v): v is string => typeof v === "string")) {
      return describe(z.enum(values as [string, ...Array<string>]), schema)
    }
    throw new InvalidSchema(path, "only enums of strings are supported")
  }
  const union = (schema.anyOf ?? schema.oneOf) as unknown
  if (Array.isArray(union)) {
    const options = union.map((o, i) => convert(z, o, `${path}.anyOf[${i}]`))
    if (options.length === 0) throw new InvalidSchema(path, "an empty anyOf matches nothing")
    if (options.length === 1) return describe(options[0]!, schema)
    // zod-to-json-schema writes a union of plain primitives as `type: [...]`, which magnitude cannot read back.
    if (union.every((o) => isObject(o) && ["string", "number", "integer", "boolean"].includes(o.type as string))) {
      throw new InvalidSchema(path, "a union of primitive types is not supported; use one type or a string enum")
    }
    return describe(z.union(options as unknown as [Z3.ZodTypeAny, Z3.ZodTypeAny, ...Array<Z3.ZodTypeAny>]), schema)
  }
  const type = schema.type ?? (isObject(schema.properties) ? "object" : undefined)
  if (Array.isArray(type)) throw new InvalidSchema(path, "a union of primitive types is not supported")
  switch (type) {
    case undefined:
    case "string":
      return describe(z.string(), schema)
    case "number":
      return describe(z.number(), schema)
    case "integer":
      return describe(z.number().int(), schema)
    case "boolean":
      return describe(z.boolean(), schema)
    case "null":
      return describe(z.null(), schema)
    case "array": {
      if (Array.isArray(schema.items)) throw new InvalidSchema(path, "tuple items are not supported")
      return describe(z.array(convert(z, schema.items ?? {}, `${path}.items`)), schema)
    }
    case "object": {
      const properties = isObject(schema.properties) ? schema.properties : {}
      const required = new Set(Array.isArray(schema.required) ? schema.required : [])
      const shape: Record<string, Z3.ZodTypeAny> = {}
      for (const [key, value] of Object.entries(properties)) {
        const nullable = isObject(value) && withoutNull(value).nullable
        const field = convert(z, value, `${path}.${key}`)
        shape[key] = required.has(key) && !nullable ? field : field.optional()
      }
      if (Object.keys(shape).length === 0) {
        throw new InvalidSchema(path, "an object needs named properties (maps of any key are not supported)")
      }
      return describe(z.object(shape), schema)
    }
    default:
      throw new InvalidSchema(path, `unknown type ${JSON.stringify(type)}`)
  }
}

/**
 * The zod 3 schema to hand magnitude's `extract` for a JSON Schema; throws InvalidSchema naming what it cannot express.
 * Magnitude converts a top-level object one property at a time, which loses which ones are optional (an optional
 * property becomes a required string); an object with optional properties is therefore wrapped in `z.lazy`, which
 * magnitude converts whole, under a `data` key it unwraps again.
 */
export const toZod = (z: Zod3, jsonSchema: unknown): Z3.ZodTypeAny => {
  const schema = convert(z, jsonSchema, "schema")
  const optional =
    schema instanceof z.ZodObject && Object.values<Z3.ZodTypeAny>(schema.shape).some((field) => field.isOptional())
  return optional ? z.lazy(() => schema) : schema
}
