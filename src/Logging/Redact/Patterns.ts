/**
 * The value patterns redaction looks for in free text: URLs, tokens and keys, labelled secrets, typed input, personal
 * data (email, cards, national ids, phones). Every regex is global and anchored on a lookbehind so a scan stays linear.
 */

// The scheme is bounded rather than anchored, so the match does not depend on what precedes it.
export const urlRe = /[a-z][a-z0-9+.-]{0,30}:\/\/[^\s"'<>`\\]+/gi
/** Relative URLs with a query or fragment, as written in attributes and JSON: `href="/next?t=…"`. */
export const relativeUrlRe = /(?<=^|[\s"'(=,[])\/[^\s"'<>`\\?#]*[?#][^\s"'<>`\\]+/g
export const jwtRe = /(?<![\w-])eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*/g
export const apiKeyRe = new RegExp(
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
export const bearerRe = /\b(bearer\s+)(?=[A-Za-z._~+/-]*[0-9._~+/=-])([A-Za-z0-9._~+/-]{8,}=*)/gi
const quoted = String.raw`\\"(?:[^"\\]|\\[^"])*\\"|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'`
export const passwordRe = new RegExp(
  String.raw`((?:password|passwd|passphrase|pwd)(?:[_-]?(?:confirm(?:ation)?|repeat|again|hash))?)(\\?["']?\s*[:=]\s*)(` +
    quoted +
    String.raw`|[^\s,;&"'<>{}()\[\]\\]+)`,
  "gi"
)
export const headerRe = new RegExp(
  String.raw`\b((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|x-auth-token)(\\?["']?\s*:\s*)(` +
    quoted +
    String.raw`|[^\s"'\\][^\r\n"'\\}]*)`,
  "gi"
)
export const tokenLabelRe = new RegExp(
  "((?:token|secret|api[_-]?key|access[_-]?key|private[_-]?key|signing[_-]?key|client[_-]?secret|credentials?)(?:[_-]?(?:value|string))?)" +
    String.raw`(\\?["']?\s*[:=]\s*)(\\"[^"\s\\]{8,}\\"|"[^"\s\\]{8,}"|'[^'\s\\]{8,}'|[A-Za-z0-9_\-./+=~%]{8,})`,
  "gi"
)
export const inputTagRe = /<input\b[^<>]*>/gi
export const inputValueRe = /(\svalue\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)/i
export const inputTypeRe = /\stype\s*=\s*["']?([\w-]+)/i
export const textareaRe = /(<textarea\b[^<>]*>)((?:[^<]|<(?!\/?textarea\b))*)(<\/textarea\s*>)/gi
const typedQuoted = `"[^"\\n]*"|'[^'\\n]*'|“[^”\\n]*”|‘[^’\\n]*’`
export const fillRe = new RegExp(
  `(\\bfill(?:ed|ing|s)?(?:\\s+in)?\\s+(?:${typedQuoted}|[^\\n"']{0,200}?)\\s+with\\s+)(${typedQuoted}|[^\\s"'\\[][^\\n"',;)}\\]]*)`,
  "gi"
)
export const typeRe = new RegExp(`(\\btyp(?:e|ed|es|ing)\\s+)(${typedQuoted})`, "gi")
export const ariaValueRe =
  /^(\s*-\s+(?:textbox|searchbox|combobox|spinbutton)(?:\s+"(?:[^"\\\n]|\\.)*")?(?:\s+\[[^\]\n]*\])*:\s+)(\S[^\n]*)$/gim
export const emailRe =
  /(?<![\w.%+-])[A-Za-z0-9._%+-]+(?:@|%40)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}/g
export const digitRunRe = /(?<!\d[ -]?)\d(?:[ -]?\d){12,}(?![ -]?\d)/g
export const ssnRe = /(?<![\d-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])/g
export const ukNiRe = /\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g
export const nationalIdRe =
  /\b((?:passport|national[ _-]?id(?:entity)?|identity[ _-]?card|id[ _-]?card|ssn|social[ _-]?security|tax[ _-]?id|nino|driver'?s?[ _-]?licen[cs]e|licen[cs]e)(?:[ _-]?(?:no|num|number|#))?\.?["']?\s*[:=#]?\s*["']?)((?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{4,19})(?![\w-])/gi
export const intlPhoneRe = /(?<![\w+])\+\d+(?:[ .-]?\(\d+\)[ .-]?\d+|[ .-]\d+)*/g
export const usPhoneRe = /(?<![\w.+-])(?:\+?1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![.-]?\d)/g
export const labelledPhoneRe =
  /\b((?:phone|tel|telephone|mobile|cell|fax|whatsapp)(?:[ _-]?(?:no|num|number|#))?\.?["']?\s*[:=]\s*["']?)(\+?\d[\d ().-]{5,18}\d)/gi

export const digitCount = (s: string) => {
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
export const redactCards = (run: string, marker: string) => {
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
