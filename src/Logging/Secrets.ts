/**
 * Secrets by reference: values the agent must type (passwords, one-time codes) are configured once
 * (`SWITCHYARD_SECRET_<NAME>`, or a JSON file of name → value) and named in tool arguments as `{{secret:NAME}}`.
 * Only the engine that types resolves a reference (`reveal`), at the moment of typing; everything that leaves the
 * service — answers, logs, snapshots, the prompts sent to a model — has each value replaced by its reference
 * (`scrub`), so a page that echoes a secret does not leak it either.
 *
 * One registry per process: the secrets are the service's configuration, like the redaction rules that learn them.
 */

/** `{{secret:NAME}}`: letters, digits and `_`, starting with a letter; names are case-insensitive. */
export const referencePattern = /\{\{\s*secret:([A-Za-z][A-Za-z0-9_]*)\s*\}\}/g

/** Shorter values are not scrubbed from free text: they would match too much that is not the secret. */
const minimumScrubbed = 4

const registry = new Map<string, string>()

const canonical = (name: string) => name.toUpperCase()

export const reference = (name: string) => `{{secret:${canonical(name)}}}`

/** Replaces the configured secrets (name → value). */
export const register = (secrets: ReadonlyMap<string, string> | Record<string, string>) => {
  registry.clear()
  for (const [name, value] of secrets instanceof Map ? secrets : Object.entries(secrets))
    if (value !== "") registry.set(canonical(name), value)
}

export const names = (): ReadonlyArray<string> => [...registry.keys()]

/** The names `text` refers to. */
export const referenced = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(referencePattern)].map((m) => canonical(m[1] ?? ""))

/** Whether any string inside `value` refers to a secret. */
export const refersToSecret = (value: unknown): boolean => {
  if (typeof value === "string") return referenced(value).length > 0
  if (Array.isArray(value)) return value.some(refersToSecret)
  if (typeof value === "object" && value !== null) return Object.values(value).some(refersToSecret)
  return false
}

export class UnknownSecret extends Error {
  readonly secret: string
  constructor(secret: string) {
    super(`no secret named ${secret} is configured (set SWITCHYARD_SECRET_${secret}, or add it to the secrets file)`)
    this.secret = secret
  }
}

/** `text` with each reference replaced by its value, for the engine call that types it; throws `UnknownSecret`. */
export const reveal = (text: string): string =>
  text.replace(referencePattern, (_whole, name: string) => {
    const value = registry.get(canonical(name))
    if (value === undefined) throw new UnknownSecret(canonical(name))
    return value
  })

const byLength = () =>
  [...registry.entries()].filter(([, v]) => v.length >= minimumScrubbed).sort((a, b) => b[1].length - a[1].length)

/** `text` with each configured value replaced by `replacement(name)` (default the reference itself). */
export const scrub = (text: string, replacement: (name: string) => string = reference): string => {
  if (registry.size === 0) return text
  let out = text
  for (const [name, value] of byLength()) if (out.includes(value)) out = out.split(value).join(replacement(name))
  return out
}

/** A deep copy of `value` with every string scrubbed (plain objects and arrays; anything else as is). */
export const scrubDeep = <A>(value: A, replacement?: (name: string) => string): A => {
  if (registry.size === 0) return value
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return scrub(v, replacement)
    if (Array.isArray(v)) return v.map(walk)
    if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  return walk(value) as A
}

/** The configured values, for masking them in a page before a screenshot. */
export const values = (): ReadonlyArray<string> => byLength().map(([, v]) => v)

/** Secrets from the environment: every `SWITCHYARD_SECRET_<NAME>`. */
export const fromEnvironment = (env: Record<string, string | undefined>): Map<string, string> => {
  const found = new Map<string, string>()
  for (const [key, value] of Object.entries(env))
    if (key.startsWith("SWITCHYARD_SECRET_") && key.length > 18 && value !== undefined && value !== "")
      found.set(canonical(key.slice(18)), value)
  return found
}
