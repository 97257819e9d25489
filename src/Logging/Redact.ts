/**
 * Redaction before anything is written (seed 003): secrets, personal data, typed input and URL query values become
 * `[redacted:kind]` markers in logs, summaries, snapshots and the system log. Pure, synchronous and idempotent.
 * The parts are in Redact/: value patterns, key rules, URL and text redaction, the structural walker, input masking.
 */
import * as Keys from "./Redact/Keys.ts"
import type { Marking } from "./Redact/Marking.ts"
import * as Text from "./Redact/Text.ts"
import * as Url from "./Redact/Url.ts"
import * as Walk from "./Redact/Walk.ts"
import * as Secrets from "./Secrets.ts"

export {
  maskIfTypedScript,
  maskInputsScript,
  nothingTypedScript,
  typedBoxesScript,
  unmaskInputsScript
} from "./Redact/Mask.ts"

/** The built-in rules, in the order `text` applies them; any of them can be disabled by name. */
export const builtinNames = [
  "url",
  "jwt",
  "api_key",
  "bearer",
  "password",
  "secret",
  "html_input",
  "typed",
  "aria_value",
  "email",
  "card",
  "ssn",
  "uk_ni",
  "national_id",
  "phone"
] as const
export type BuiltinName = (typeof builtinNames)[number]

export interface RedactionRules {
  /** Extra patterns, applied before the built-ins; the whole match is replaced (use lookbehind to keep a label). */
  readonly patterns?: ReadonlyArray<{ readonly name: string; readonly regex: RegExp }>
  /** Built-ins to skip. `"url"` stops `text` from rewriting the URLs it finds; `url` itself still does. */
  readonly disable?: ReadonlyArray<BuiltinName>
  /** Extra object keys whose values are always redacted: a string matches the key ignoring case, `-`, `_`, `.` and
   * spaces (`"employee_no"` matches `employeeNo`); a RegExp is tested against the key as written. */
  readonly sensitiveKeys?: ReadonlyArray<string | RegExp>
  /** Query and fragment parameters whose values pass (still through the patterns), e.g. `"page"`. Case-insensitive. */
  readonly keepQueryParams?: ReadonlyArray<string>
  /** The marker for a kind of secret; default `[redacted:kind]`. A custom marker loses the idempotence guarantee
   * when it could itself match a pattern. */
  readonly replacement?: string | ((kind: string) => string)
  /** Objects nested deeper than this become `"[truncated]"`; default 64. */
  readonly maxDepth?: number
}

export interface Redactor {
  /** Free text: every enabled pattern, and the query, fragment and userinfo of the URLs in it (`scheme://…`, and
   * `/path?…` after a space, quote, `(`, `=`, `,` or `[`). */
  readonly text: (s: string) => string
  /** One URL (absolute or relative): parameter values, fragment parameters and userinfo, then the patterns. */
  readonly url: (u: string) => string
  /** A deep copy for writing: sensitive keys, input-field values, strings through `text`, URLs through `url`. */
  readonly value: (u: unknown) => unknown
}

export const make = (rules: RedactionRules = {}): Redactor => {
  const replacement = rules.replacement ?? ((kind: string) => `[redacted:${kind}]`)
  const mark = typeof replacement === "string" ? () => replacement : replacement
  const extra = (rules.patterns ?? []).map(({ name, regex }) => ({
    name,
    regex: regex.global ? regex : new RegExp(regex.source, regex.flags + "g")
  }))

  const kinds = [
    ...builtinNames,
    ...extra.map((p) => p.name),
    ...["query", "userinfo", "input", "card", "bank", "national_id", "cookie", "secret", "password", "typed"]
  ]
  const markers = new Set(kinds.map(mark))
  const marking: Marking = { mark, isMarker: (s) => markers.has(s) }

  const urls = Url.make(marking, new Set((rules.keepQueryParams ?? []).map((k) => k.toLowerCase())))
  const patterns = Text.make(marking, urls, { disabled: new Set<string>(rules.disable ?? []), extra })
  // The configured secrets (Secrets.ts) are masked wherever they appear, before any pattern sees them.
  const secretMark = () => mark("secret")
  const text = (s: string) => patterns.text(Secrets.scrub(s, secretMark))
  const url = (u: string) => patterns.url(Secrets.scrub(u, secretMark))
  const value = Walk.make({
    marking,
    text,
    url,
    keyKind: Keys.keyKind(rules.sensitiveKeys),
    maxDepth: rules.maxDepth ?? 64
  })
  return { text, url, value }
}

export const defaultRedactor: Redactor = make()
