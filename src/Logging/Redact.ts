/**
 * Redaction before anything is written (seed 003): secrets, personal data, typed input and URL query values become
 * `[redacted:kind]` markers in logs, summaries, snapshots and the system log. Pure, synchronous and idempotent.
 */

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

type Replacer = (match: string, ...groups: Array<string>) => string

interface Rule {
  readonly name: string
  /** The rule cannot match text without this substring, so it is skipped. */
  readonly hint?: string
  readonly regex: RegExp
  readonly replace: Replacer
}

// ---------------------------------------------------------------------------------------------------------------
// Patterns. Every regex is global and anchored on a lookbehind so that a scan stays linear on long runs.

// The scheme is bounded rather than anchored, so the match does not depend on what precedes it.
const urlRe = /[a-z][a-z0-9+.-]{0,30}:\/\/[^\s"'<>`\\]+/gi
/** Relative URLs with a query or fragment, as written in attributes and JSON: `href="/next?t=…"`. */
const relativeUrlRe = /(?<=^|[\s"'(=,[])\/[^\s"'<>`\\?#]*[?#][^\s"'<>`\\]+/g
const jwtRe = /(?<![\w-])eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*/g
const apiKeyRe = new RegExp(
  "(?<![\\w-])(?:" +
    [
      "sk-(?=[\\w-]*\\d)[\\w-]{20,}", // OpenAI (sk-, sk-proj-), Anthropic (sk-ant-)
      "(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", // Stripe
      "(?:AKIA|ASIA)[0-9A-Z]{16}", // AWS access key id
      "gh[pousr]_[A-Za-z0-9]{30,}", // GitHub
      "github_pat_[A-Za-z0-9_]{30,}",
      "glpat-[A-Za-z0-9_-]{20,}", // GitLab
      "xox[abposr]-[A-Za-z0-9-]{10,}", // Slack
      "AIza[0-9A-Za-z_-]{35}", // Google
      "npm_[A-Za-z0-9]{36}",
      "bb_(?:live|test)_[A-Za-z0-9_-]{16,}" // Browserbase
    ].join("|") +
    ")(?![\\w-])",
  "g"
)
const bearerRe = /\b(bearer\s+)(?=[A-Za-z._~+/-]*[0-9._~+/=-])([A-Za-z0-9._~+/-]{8,}=*)/gi
const quoted = String.raw`\\"(?:[^"\\]|\\[^"])*\\"|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'`
const passwordRe = new RegExp(
  String.raw`((?:password|passwd|passphrase|pwd)(?:[_-]?(?:confirm(?:ation)?|repeat|again|hash))?)(\\?["']?\s*[:=]\s*)(` +
    quoted +
    String.raw`|[^\s,;&"'<>{}()\[\]\\]+)`,
  "gi"
)
const headerRe = new RegExp(
  String.raw`\b((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|x-auth-token)(\\?["']?\s*:\s*)(` +
    quoted +
    String.raw`|[^\s"'\\][^\r\n"'\\}]*)`,
  "gi"
)
const tokenLabelRe = new RegExp(
  "((?:token|secret|api[_-]?key|access[_-]?key|private[_-]?key|signing[_-]?key|client[_-]?secret|credentials?)(?:[_-]?(?:value|string))?)" +
    String.raw`(\\?["']?\s*[:=]\s*)(\\"[^"\s\\]{8,}\\"|"[^"\s\\]{8,}"|'[^'\s\\]{8,}'|[A-Za-z0-9_\-./+=~%]{8,})`,
  "gi"
)
const inputTagRe = /<input\b[^<>]*>/gi
const inputValueRe = /(\svalue\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)/i
const inputTypeRe = /\stype\s*=\s*["']?([\w-]+)/i
const textareaRe = /(<textarea\b[^<>]*>)((?:[^<]|<(?!\/?textarea\b))*)(<\/textarea\s*>)/gi
const typedQuoted = `"[^"\\n]*"|'[^'\\n]*'|“[^”\\n]*”|‘[^’\\n]*’`
const fillRe = new RegExp(
  `(\\bfill(?:ed|ing|s)?(?:\\s+in)?\\s+(?:${typedQuoted}|[^\\n"']{0,200}?)\\s+with\\s+)(${typedQuoted}|[^\\s"'\\[][^\\n"',;)}\\]]*)`,
  "gi"
)
const typeRe = new RegExp(`(\\btyp(?:e|ed|es|ing)\\s+)(${typedQuoted})`, "gi")
const ariaValueRe =
  /^(\s*-\s+(?:textbox|searchbox|combobox|spinbutton)(?:\s+"(?:[^"\\\n]|\\.)*")?(?:\s+\[[^\]\n]*\])*:\s+)(\S[^\n]*)$/gim
const emailRe =
  /(?<![\w.%+-])[A-Za-z0-9._%+-]+(?:@|%40)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}/g
const digitRunRe = /(?<!\d[ -]?)\d(?:[ -]?\d){12,}(?![ -]?\d)/g
const ssnRe = /(?<![\d-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])/g
const ukNiRe = /\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g
const nationalIdRe =
  /\b((?:passport|national[ _-]?id(?:entity)?|identity[ _-]?card|id[ _-]?card|ssn|social[ _-]?security|tax[ _-]?id|nino|driver'?s?[ _-]?licen[cs]e|licen[cs]e)(?:[ _-]?(?:no|num|number|#))?\.?["']?\s*[:=#]?\s*["']?)((?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{4,19})(?![\w-])/gi
const intlPhoneRe = /(?<![\w+])\+\d+(?:[ .-]?\(\d+\)[ .-]?\d+|[ .-]\d+)*/g
const usPhoneRe = /(?<![\w.+-])(?:\+?1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![.-]?\d)/g
const labelledPhoneRe =
  /\b((?:phone|tel|telephone|mobile|cell|fax|whatsapp)(?:[ _-]?(?:no|num|number|#))?\.?["']?\s*[:=]\s*["']?)(\+?\d[\d ().-]{5,18}\d)/gi

const digitCount = (s: string) => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 48 && c <= 57) n++
  }
  return n
}

const luhn = (digits: string) => {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

/** Card numbers are written as one run, as 4-digit groups (the last 1–4 long), or as 4-6-5 / 4-6-4 (Amex, Diners). */
const cardShaped = (groups: ReadonlyArray<string>, from: number, to: number) => {
  if (from === to) return true
  if (to - from === 2 && groups[from]!.length === 4 && groups[from + 1]!.length === 6) {
    return groups[to]!.length === 4 || groups[to]!.length === 5
  }
  for (let k = from; k < to; k++) if (groups[k]!.length !== 4) return false
  return groups[to]!.length <= 4
}

/** Replaces every Luhn-valid, card-shaped window of a digit run (groups split by single spaces or dashes). */
const redactCards = (run: string, marker: string) => {
  const parts = run.split(/([ -])/)
  const groups = parts.filter((_, i) => i % 2 === 0)
  const seps = parts.filter((_, i) => i % 2 === 1)
  let out = ""
  let i = 0
  while (i < groups.length) {
    let digits = ""
    let end = -1
    for (let j = i; j < groups.length; j++) {
      digits += groups[j]
      if (digits.length > 19) break
      const first = digits.charCodeAt(0)
      if (digits.length >= 13 && first >= 50 && first <= 54 && cardShaped(groups, i, j) && luhn(digits)) {
        end = j
        break
      }
    }
    const last = end >= 0 ? end : i
    out += end >= 0 ? marker : groups[i]
    if (last + 1 < groups.length) out += seps[last]
    i = last + 1
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// Object keys and shapes.

const normalize = (key: string) => key.toLowerCase().replace(/[-_.\s]/g, "")

const keyKinds: ReadonlyArray<readonly [RegExp, string]> = [
  [/password|passwd|passphrase|^pwd$/, "password"],
  [/creditcard|cardnumber|cardnum|ccnum|cardcvc|cardcvv|securitycode|^(?:cvv2?|cvc2?|csc|cccsc|pan|ccexp)$/, "card"],
  [/^(?:iban|accountnumber|routingnumber|bankaccount)$/, "bank"],
  [/socialsecurity|nationalid|passport|^(?:ssn|sin|nino|taxid)$/, "national_id"],
  [/cookie/, "cookie"],
  [
    /secret|apikey|accesskey|privatekey|signingkey|encryptionkey|authorization|credential|bearer|token$|^(?:auth|authtoken|jwt|session|sessionkey|sessiontoken|sessionsecret|sid|otp|totp|mfacode|pin|csrf|xsrf)$/,
    "secret"
  ]
]

const urlKeyRe = /^(?:url|uri|href|src|link|location|referr?er|origin|endpoint|redirect)$|(?:url|uri|href)$/i

const inputTypes = new Set([
  ..."text password email tel number search url date datetime-local month week time".split(" "),
  ..."color range hidden file checkbox radio submit button reset image".split(" "),
  ..."textarea select-one select-multiple contenteditable".split(" ")
])
const fieldValueKeys = new Set(["value", "values", "defaultValue", "checkedValue"])
const elementValueKeys = new Set(["value", "values", "defaultValue", "text", "textContent", "innerText"])
const actionValueKeys = new Set(["value", "values", "text", "arguments", "args"])
const typingActions = new Set(["fill", "type", "typetext", "inserttext", "setvalue", "setinputvalue"])
const str = (u: unknown) => (typeof u === "string" ? u : undefined)

// ---------------------------------------------------------------------------------------------------------------

const closingQuote: Record<string, string> = { '"': '"', "'": "'", "“": "”", "‘": "’" }
const isQuoted = (raw: string) => raw.length >= 2 && closingQuote[raw[0]!] === raw[raw.length - 1]
const escapedQuotes = (raw: string) => raw.length >= 4 && raw.startsWith('\\"') && raw.endsWith('\\"')

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

export const make = (rules: RedactionRules = {}): Redactor => {
  const replacement = rules.replacement ?? ((kind: string) => `[redacted:${kind}]`)
  const mark = typeof replacement === "string" ? () => replacement : replacement
  const disabled = new Set<string>(rules.disable ?? [])
  const keep = new Set((rules.keepQueryParams ?? []).map((k) => k.toLowerCase()))
  const maxDepth = rules.maxDepth ?? 64
  const extraKeys = (rules.sensitiveKeys ?? []).map((k) =>
    typeof k === "string" ? new RegExp(`^${escapeRe(normalize(k))}$`) : k
  )
  const extraKeyNormalized = (rules.sensitiveKeys ?? []).map((k) => typeof k === "string")
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
  const unquote = (raw: string) => (escapedQuotes(raw) ? raw.slice(2, -2) : isQuoted(raw) ? raw.slice(1, -1) : raw)
  const requote = (raw: string, marker: string) =>
    escapedQuotes(raw) ? `\\"${marker}\\"` : isQuoted(raw) ? raw[0] + marker + raw[raw.length - 1] : marker
  /** Replaces a captured value (quotes kept); empty values and values already redacted stay as they are. */
  const captured =
    (kind: string): Replacer =>
    (match, label, value) => {
      const inner = unquote(value!)
      return inner === "" || markers.has(inner) ? match : label! + requote(value!, mark(kind))
    }
  const labelled =
    (kind: string): Replacer =>
    (match, label, sep, value) => {
      const inner = unquote(value!)
      return inner === "" || markers.has(inner) ? match : label! + sep! + requote(value!, mark(kind))
    }
  const whole =
    (kind: string): Replacer =>
    (match) =>
      match === "" || markers.has(match) ? match : mark(kind)

  // URLs -------------------------------------------------------------------------------------------------------

  const params = (query: string) =>
    query
      .split("&")
      .map((part) => {
        const eq = part.indexOf("=")
        if (eq < 0) return part
        const name = part.slice(0, eq)
        const value = part.slice(eq + 1)
        if (value === "" || markers.has(value)) return part
        let decoded = name
        try {
          decoded = decodeURIComponent(name.replace(/\+/g, " "))
        } catch {}
        return keep.has(decoded.toLowerCase()) ? part : `${name}=${mark("query")}`
      })
      .join("&")

  const urlStructure = (u: string) => {
    const hash = u.indexOf("#")
    const beforeHash = hash < 0 ? u : u.slice(0, hash)
    const q = beforeHash.indexOf("?")
    let base = q < 0 ? beforeHash : beforeHash.slice(0, q)
    const authority = /^((?:[a-z][a-z0-9+.-]*:)?\/\/)([^/?#]*)/i.exec(base)
    if (authority !== null) {
      const at = authority[2]!.lastIndexOf("@")
      const userinfo = at < 0 ? "" : authority[2]!.slice(0, at)
      if (userinfo !== "" && !markers.has(userinfo)) {
        base = authority[1] + mark("userinfo") + base.slice(authority[1]!.length + at)
      }
    }
    let out = base
    if (q >= 0) out += "?" + params(beforeHash.slice(q + 1))
    if (hash >= 0) {
      const fragment = u.slice(hash + 1)
      const fq = fragment.indexOf("?")
      out +=
        "#" +
        (!fragment.includes("=")
          ? fragment
          : fq >= 0
            ? fragment.slice(0, fq + 1) + params(fragment.slice(fq + 1))
            : params(fragment))
    }
    return out
  }

  const embeddedUrl: Replacer = (match) => {
    const trimmed = match.replace(/[.,;:!?)]+$/, "")
    return urlStructure(trimmed) + match.slice(trimmed.length)
  }

  // Rules ------------------------------------------------------------------------------------------------------

  const builtin: ReadonlyArray<Rule> = [
    { name: "url", hint: "://", regex: urlRe, replace: embeddedUrl },
    { name: "url", hint: "/", regex: relativeUrlRe, replace: embeddedUrl },
    { name: "jwt", hint: "eyJ", regex: jwtRe, replace: whole("jwt") },
    { name: "api_key", regex: apiKeyRe, replace: whole("api_key") },
    { name: "bearer", regex: bearerRe, replace: captured("bearer") },
    { name: "password", regex: passwordRe, replace: labelled("password") },
    { name: "secret", regex: headerRe, replace: labelled("secret") },
    { name: "secret", regex: tokenLabelRe, replace: labelled("secret") },
    {
      name: "html_input",
      hint: "<",
      regex: inputTagRe,
      replace: (tag) => {
        const type = inputTypeRe.exec(tag)?.[1]?.toLowerCase()
        if (type === "submit" || type === "button" || type === "reset" || type === "image") return tag
        return tag.replace(inputValueRe, (m: string, label: string, value: string) =>
          captured(type === "password" ? "password" : "input")(m, label, value)
        )
      }
    },
    {
      name: "html_input",
      hint: "<",
      regex: textareaRe,
      replace: (m, open, content, close) =>
        content!.trim() === "" || markers.has(content!) ? m : open! + mark("input") + close!
    },
    { name: "typed", regex: fillRe, replace: captured("typed") },
    { name: "typed", regex: typeRe, replace: captured("typed") },
    { name: "aria_value", hint: "- ", regex: ariaValueRe, replace: captured("input") },
    { name: "email", regex: emailRe, replace: whole("email") },
    { name: "card", regex: digitRunRe, replace: (run) => redactCards(run, mark("card")) },
    { name: "ssn", regex: ssnRe, replace: whole("ssn") },
    { name: "uk_ni", regex: ukNiRe, replace: whole("uk_ni") },
    { name: "national_id", regex: nationalIdRe, replace: captured("national_id") },
    {
      name: "phone",
      hint: "+",
      regex: intlPhoneRe,
      replace: (m) => {
        const n = digitCount(m)
        return n >= 8 && n <= 15 ? mark("phone") : m
      }
    },
    { name: "phone", regex: usPhoneRe, replace: whole("phone") },
    {
      name: "phone",
      regex: labelledPhoneRe,
      replace: (m, label, number) => (digitCount(number!) >= 7 ? label + mark("phone") : m)
    }
  ]
  const enabled = builtin.filter((r) => !disabled.has(r.name))
  const custom: ReadonlyArray<Rule> = extra.map((p) => ({ name: p.name, regex: p.regex, replace: whole(p.name) }))
  const urlRules = enabled.filter((r) => r.name === "url")
  const withoutUrls = [...custom, ...enabled.filter((r) => r.name !== "url")]
  const withUrls = [...urlRules, ...withoutUrls]

  const pass = (s: string, list: ReadonlyArray<Rule>) => {
    let out = s
    for (const rule of list) {
      if (rule.hint !== undefined && !out.includes(rule.hint)) continue
      out = out.replace(rule.regex, rule.replace)
    }
    return out
  }
  /** Passes until nothing changes: a marker can expose a match that a neighbour hid (`123-45-6789sk-…`). */
  const apply = (s: string, list: ReadonlyArray<Rule>) => {
    let out = s
    for (let i = 0; i < 4; i++) {
      const next = pass(out, list)
      if (next === out) break
      out = next
    }
    return out
  }

  const text = (s: string) => (s === "" ? s : apply(s, withUrls))
  const url = (u: string) => (u === "" ? u : apply(urlStructure(u), withoutUrls))

  // Values -----------------------------------------------------------------------------------------------------

  const keyKind = (key: string): string | undefined => {
    const n = normalize(key)
    for (const [re, kind] of keyKinds) if (re.test(n)) return kind
    for (let i = 0; i < extraKeys.length; i++) {
      if (extraKeys[i]!.test(extraKeyNormalized[i] ? n : key)) return "secret"
    }
    return undefined
  }

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

  /** Which keys of an object hold what a person typed or chose, and under which kind; undefined for other objects. */
  const inputShape = (o: Record<string, unknown>): { keys: ReadonlySet<string>; kind: string } | undefined => {
    const verb = str(o.kind) ?? str(o.method) ?? str(o.action)
    if (verb !== undefined && typingActions.has(verb.toLowerCase())) return { keys: actionValueKeys, kind: "typed" }
    const type = str(o.type)?.toLowerCase()
    const kind = type === "password" ? "password" : "input"
    const tag = (str(o.tagName) ?? str(o.tag) ?? str(o.nodeName) ?? str(o.localName))?.toLowerCase()
    if (tag === "input" || tag === "textarea" || tag === "select") return { keys: elementValueKeys, kind }
    if (!("value" in o || "values" in o || "defaultValue" in o)) return undefined
    if (type !== undefined && inputTypes.has(type)) return { keys: fieldValueKeys, kind }
    if (typeof o.label === "string") return { keys: fieldValueKeys, kind }
    if ("role" in o && ("nodeId" in o || "backendDOMNodeId" in o || "name" in o)) {
      return { keys: fieldValueKeys, kind: "input" }
    }
    const name = str(o.name)
    if (name === undefined) return undefined
    if ("domain" in o || "httpOnly" in o || "sameSite" in o || "expires" in o) {
      return { keys: fieldValueKeys, kind: "cookie" }
    }
    const named = keyKind(name)
    return named === undefined ? undefined : { keys: fieldValueKeys, kind: named }
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
        if (forced !== undefined) return x === "" || markers.has(x) ? x : mark(forced)
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
      const shape = forced === undefined ? inputShape(record) : undefined
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

  return { text, url, value }
}

export const defaultRedactor: Redactor = make()

// ---------------------------------------------------------------------------------------------------------------
// Screenshots: text inputs are masked in the page before capture, and unmasked after.

const maskId = "switchyard-mask"
const maskCss =
  'input:not([type=checkbox i]):not([type=radio i]):not([type=button i]):not([type=submit i]):not([type=reset i]):not([type=image i]):not([type=range i]):not([type=color i]):not([type=file i]), textarea, [contenteditable]:not([contenteditable="false" i]), [contenteditable] *, [role=textbox], [role=searchbox] { -webkit-text-security: disc !important; color: transparent !important; -webkit-text-fill-color: transparent !important; text-shadow: none !important; caret-color: transparent !important; }'

/** Collects the document and its open shadow roots, where a document stylesheet does not reach. */
const rootsSource = `const roots = [document];
    for (let i = 0; i < roots.length; i++) {
      for (const el of roots[i].querySelectorAll("*")) if (el.shadowRoot) roots.push(el.shadowRoot);
    }`

/** JS to evaluate in a page before a screenshot: hides the text of every text-like input. Idempotent; never throws. */
export const maskInputsScript = `(() => {
  try {
    const key = Symbol.for("${maskId}");
    let sheet = globalThis[key];
    if (sheet === undefined && typeof CSSStyleSheet === "function" && "replaceSync" in CSSStyleSheet.prototype) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(${JSON.stringify(maskCss)});
      Object.defineProperty(globalThis, key, { value: sheet, configurable: true });
    }
    ${rootsSource}
    for (const root of roots) {
      if (sheet && Array.isArray(root.adoptedStyleSheets) && !root.adoptedStyleSheets.includes(sheet)) {
        root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
      }
    }
    const parent = document.head || document.documentElement;
    if (parent && !document.getElementById("${maskId}")) {
      const style = document.createElement("style");
      style.id = "${maskId}";
      style.textContent = ${JSON.stringify(maskCss)};
      parent.appendChild(style);
    }
    return true;
  } catch (e) {
    return false;
  }
})()`

/** JS that undoes `maskInputsScript`. Idempotent; never throws. */
export const unmaskInputsScript = `(() => {
  try {
    const sheet = globalThis[Symbol.for("${maskId}")];
    ${rootsSource}
    for (const root of roots) {
      if (sheet && Array.isArray(root.adoptedStyleSheets) && root.adoptedStyleSheets.includes(sheet)) {
        root.adoptedStyleSheets = root.adoptedStyleSheets.filter((s) => s !== sheet);
      }
    }
    for (const style of document.querySelectorAll("style#${maskId}")) style.remove();
    return true;
  } catch (e) {
    return false;
  }
})()`
