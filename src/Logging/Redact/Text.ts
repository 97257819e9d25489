/**
 * Free-text redaction: the built-in rules (Patterns.ts) in their order, extra patterns first, each skipped when a
 * cheap hint is absent, applied in passes until nothing changes. URLs in text go through URL redaction (Url.ts).
 */
import { type Marking, type Replacer, replacers } from "./Marking.ts"
import {
  apiKeyRe,
  ariaValueRe,
  bearerRe,
  digitCount,
  digitRunRe,
  emailRe,
  fillRe,
  headerRe,
  inputTagRe,
  inputTypeRe,
  inputValueRe,
  intlPhoneRe,
  jwtRe,
  labelledPhoneRe,
  nationalIdRe,
  passwordRe,
  redactCards,
  relativeUrlRe,
  ssnRe,
  textareaRe,
  tokenLabelRe,
  typeRe,
  ukNiRe,
  urlRe,
  usPhoneRe
} from "./Patterns.ts"
import type { UrlRedaction } from "./Url.ts"

interface Rule {
  /** A built-in's name (what `disable` lists) or an extra pattern's. */
  readonly name: string
  /** The rule cannot match text without this substring, so it is skipped. */
  readonly hint?: string
  readonly regex: RegExp
  readonly replace: Replacer
}

export interface TextOptions {
  /** Built-in rule names to skip. */
  readonly disabled: ReadonlySet<string>
  /** Extra patterns (global regexes), applied before the built-ins; the whole match is replaced. */
  readonly extra: ReadonlyArray<{ readonly name: string; readonly regex: RegExp }>
}

export const make = (marking: Marking, urls: UrlRedaction, options: TextOptions) => {
  const { mark, isMarker } = marking
  const { captured, labelled, whole } = replacers(marking)
  const embeddedUrl = urls.embedded

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
        content!.trim() === "" || isMarker(content!) ? m : open! + mark("input") + close!
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
  const enabled = builtin.filter((r) => !options.disabled.has(r.name))
  const custom: ReadonlyArray<Rule> = options.extra.map((p) => ({
    name: p.name,
    regex: p.regex,
    replace: whole(p.name)
  }))
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
  const url = (u: string) => (u === "" ? u : apply(urls.structure(u), withoutUrls))

  return { text, url }
}
