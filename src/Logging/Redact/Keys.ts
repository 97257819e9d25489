/**
 * Key rules for structured values: which object keys always hold a secret (by kind), which hold URLs, and which
 * objects are input fields, typing actions or cookies whose `value` is what a person typed or chose.
 */

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

/** Keys whose string values are URLs. */
export const urlKeyRe = /^(?:url|uri|href|src|link|location|referr?er|origin|endpoint|redirect)$|(?:url|uri|href)$/i

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

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The kind of secret a key always holds, if any. */
export type KeyKind = (key: string) => string | undefined

/**
 * The built-in key kinds plus `sensitiveKeys` (kind "secret"): a string matches the key ignoring case, `-`, `_`, `.`
 * and spaces; a RegExp is tested against the key as written.
 */
export const keyKind = (sensitiveKeys: ReadonlyArray<string | RegExp> = []): KeyKind => {
  const extraKeys = sensitiveKeys.map((k) => (typeof k === "string" ? new RegExp(`^${escapeRe(normalize(k))}$`) : k))
  const extraKeyNormalized = sensitiveKeys.map((k) => typeof k === "string")
  return (key) => {
    const n = normalize(key)
    for (const [re, kind] of keyKinds) if (re.test(n)) return kind
    for (let i = 0; i < extraKeys.length; i++) {
      if (extraKeys[i]!.test(extraKeyNormalized[i] ? n : key)) return "secret"
    }
    return undefined
  }
}

/** Which keys of an object hold what a person typed or chose, and under which kind; undefined for other objects. */
export const inputShape = (
  o: Record<string, unknown>,
  kindOfKey: KeyKind
): { keys: ReadonlySet<string>; kind: string } | undefined => {
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
  const named = kindOfKey(name)
  return named === undefined ? undefined : { keys: fieldValueKeys, kind: named }
}
