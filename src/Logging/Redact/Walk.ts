/**
 * The structural walker behind `Redactor.value`: a deep copy for writing in which sensitive keys and input values
 * become markers, strings go through text or URL redaction, and binaries, cycles and depth are cut short.
 */
import { inputShape, type KeyKind, urlKeyRe } from "./Keys.ts"
import type { Marking } from "./Marking.ts"

export interface WalkOptions {
  readonly marking: Marking
  readonly text: (s: string) => string
  readonly url: (u: string) => string
  readonly keyKind: KeyKind
  /** Objects nested deeper than this become `"[truncated]"`. */
  readonly maxDepth: number
}

export const make = ({ marking, text, url, keyKind, maxDepth }: WalkOptions) => {
  const { mark, isMarker } = marking

  const keyCache = new Map<string, string>()
  const redactKey = (key: string) => {
    let out = keyCache.get(key)
    if (out === undefined) {
      out = text(key)
      if (keyCache.size > 10_000) keyCache.clear()
      keyCache.set(key, out)
    }
    return out
  }

  const define = (out: Record<string, unknown>, key: string, v: unknown) => {
    if (key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true })
    else out[key] = v
  }

  const walk = (
    x: unknown,
    key: string | undefined,
    depth: number,
    path: Set<object>,
    forced: string | undefined
  ): unknown => {
    switch (typeof x) {
      case "string":
        if (forced !== undefined) return x === "" || isMarker(x) ? x : mark(forced)
        if (!/\s/.test(x) && ((key !== undefined && urlKeyRe.test(key)) || x.startsWith("/"))) return url(x)
        return text(x)
      case "number":
        return forced !== undefined && Number.isFinite(x) ? mark(forced) : x
      case "bigint":
        return forced !== undefined ? mark(forced) : text(x.toString())
      case "boolean":
      case "undefined":
        return x
      case "symbol":
      case "function":
        return undefined
    }
    if (x === null) return null
    const o = x as object
    if (ArrayBuffer.isView(o)) return `[binary ${o.byteLength} bytes]`
    if (o instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && o instanceof SharedArrayBuffer)) {
      return `[binary ${o.byteLength} bytes]`
    }
    if (path.has(o)) return "[circular]"
    if (depth >= maxDepth) return "[truncated]"
    if (o instanceof Date) return new Date(o.getTime())
    path.add(o)
    try {
      const next = (v: unknown, k: string | undefined, f: string | undefined = forced) => walk(v, k, depth + 1, path, f)
      const toJSON = (o as { toJSON?: unknown }).toJSON
      if (typeof toJSON === "function") {
        let json: unknown = o
        try {
          json = toJSON.call(o, key ?? "")
        } catch {}
        if (json !== o) return next(json, key)
      }
      if (Array.isArray(o)) return o.map((v) => next(v, undefined))
      if (o instanceof Map) {
        const out: Record<string, unknown> = {}
        for (const [k, v] of o) {
          const name = String(k)
          define(out, redactKey(name), next(v, name, forced ?? keyKind(name)))
        }
        return out
      }
      if (o instanceof Set) return Array.from(o, (v) => next(v, undefined))
      const record = o as Record<string, unknown>
      const out: Record<string, unknown> = {}
      if (o instanceof Error) {
        define(out, "name", o.name)
        define(out, "message", next(o.message, "message"))
        if (o.stack !== undefined) define(out, "stack", next(o.stack, "stack"))
        if (o.cause !== undefined) define(out, "cause", next(o.cause, "cause"))
      }
      const shape = forced === undefined ? inputShape(record, keyKind) : undefined
      for (const k of Object.keys(o)) {
        let v: unknown
        try {
          v = record[k]
        } catch {
          define(out, redactKey(k), "[unreadable]")
          continue
        }
        if (forced !== undefined && k === "type" && typeof v === "string") {
          define(out, k, v)
          continue
        }
        const kind = forced ?? keyKind(k) ?? (shape?.keys.has(k) ? shape.kind : undefined)
        define(out, redactKey(k), next(v, k, kind))
      }
      return out
    } finally {
      path.delete(o)
    }
  }

  const value = (u: unknown) => walk(u, undefined, 0, new Set(), undefined)

  return value
}
