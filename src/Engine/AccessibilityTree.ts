/**
 * Finds page elements by what a person sees: the elements of the page (Playwright/Elements.ts: roles, the name a
 * person reads, the group, card, row or landmark around them, a reference), ranked by how well a name matches a target
 * phrase and how well a role fits the verb.
 *
 * The fuzzy-match rule — a close name may be suggested, never acted on, unless it is clearly the same thing:
 * 1. An exact name (ignoring case, accents and punctuation; symbols and emoji count as written) is acted on. Among
 *    several exact names, the ones written in the same case as the quote win; a control nested in a same-named
 *    control counts once (the inner one).
 * 2. Otherwise a name that contains every word of the target as whole words ("Email" → "Email address", "Submit" →
 *    "Submit application") is acted on when it is the only such name for the verb. In scripts written without spaces
 *    (Japanese, Chinese, Thai) a name that starts with the target counts as holding it ("氏名" → "氏名必須").
 * 3. Anything looser — a shared word ("Middle name" ~ "Full name"), a word prefix ("Sub" ~ "Submit") — is only a
 *    suggestion: the call fails with `element_not_found` and lists the closest elements with their references.
 * A better-fitting role wins a tie (a button over a heading for `click`); a tie that remains is `ambiguous_target`.
 * A scope (`click "Apply" in "Data Engineer"`) keeps the elements whose context matches it by the same rule first.
 */

/** What the target is for; decides which roles fit. `any` is a bare target phrase (observe). */
export type Verb = "click" | "fill" | "select" | "check" | "press" | "hover" | "any"

/** A group, card, row, dialog or landmark an element sits in, as a person reads it: `group "Are you 18 or older?"`. */
export interface Around {
  /** `group`, `radiogroup`, `listbox`, `card`, `row`, `section`, `dialog`, `form`, `region`, `navigation`… */
  readonly kind: string
  /** Its legend, heading or accessible name; empty for an unnamed landmark (`navigation`). */
  readonly name: string
}

/** One element of the page as a person would name it, with the reference that acts on it. */
export interface Element {
  /** `e12`, `f2e5` (the frame's number, then the element's), `x3` (a rich-text editor). */
  readonly ref: string
  readonly role: string
  /** The name a person reads: accessible name, else placeholder, title, or the text beside or above it. */
  readonly name: string
  /** Other names a person may use for it: an untied label beside a placeholder-named field, the placeholder. */
  readonly also: ReadonlyArray<string>
  /** References of the interactive elements it is nested in, outermost first. */
  readonly within: ReadonlyArray<string>
  /** Whether a pointer cursor marks it as clickable though its role does not say so (div-soup buttons). */
  readonly clickable: boolean
  readonly disabled: boolean
  /** Current value or state a person sees: a field's text, a checkbox's checked state. */
  readonly value?: string
  readonly checked?: boolean | "mixed"
  /** The frame it is in (`iframe "Apply"`), absent for the main frame. */
  readonly frame?: string
  /** What it sits in, innermost first (its group, then its card, row or section, then its landmark or dialog). */
  readonly around?: ReadonlyArray<Around>
  /** `around` as a person reads it: `group "Are you 18 or older?" in form "Apply"`; absent when it sits in nothing. */
  readonly context?: string
  /** A file input (to the accessibility tree, a button): it takes files, not a click. */
  readonly upload?: boolean
  /** Where it is in its frame's viewport, in CSS pixels, when measured. */
  readonly box?: { readonly x: number; readonly y: number; readonly width: number; readonly height: number }
}

/** `group "Billing address"`, `navigation`: one part of a context. */
export const describeAround = (a: Around) => `${a.kind}${a.name === "" ? "" : ` "${a.name}"`}`

/** The context phrase of what an element sits in, innermost first; undefined when it sits in nothing. */
export const contextOf = (around: ReadonlyArray<Around>) =>
  around.length === 0 ? undefined : around.map(describeAround).join(" in ")

/** `textbox "Email"`: how elements appear in descriptions and errors. */
export const describe = (c: { readonly role: string; readonly name: string }) =>
  `${c.role}${c.name === "" ? "" : ` "${c.name}"`}`

/** `radio "Yes" in group "Are you 18 or older?"`: an element with what it sits in, for lists and errors. */
export const describeIn = (c: {
  readonly role: string
  readonly name: string
  readonly context?: string | undefined
}) => `${describe(c)}${c.context === undefined ? "" : ` in ${c.context}`}`

/** `textbox "Email" [ref=e12]`: an element (and what it sits in) with the reference that acts on it, for messages. */
export const describeRef = (c: {
  readonly role: string
  readonly name: string
  readonly ref: string
  readonly context?: string | undefined
}) => `${describeIn(c)} [ref=${c.ref}]`

const clickableRoles = [
  "button",
  "link",
  "checkbox",
  "radio",
  "switch",
  "tab",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "option",
  "treeitem"
]
const textEntry = ["textbox", "searchbox", "combobox", "spinbutton"]
export const interactiveRoles = [...clickableRoles, ...textEntry, "listbox", "slider", "gridcell"]

interface Fit {
  readonly primary: ReadonlyArray<string>
  readonly secondary: ReadonlyArray<string>
  /** Whether plain text (headings, paragraphs, text) may match when nothing better does. */
  readonly text: boolean
  /** How a miss is worded: `no ${what} named "X"`. */
  readonly what: string
}

const fits: Record<Verb, Fit> = {
  click: { primary: clickableRoles, secondary: interactiveRoles, text: true, what: "button or link" },
  fill: {
    primary: ["textbox", "searchbox", "spinbutton"],
    // A slider is filled with its value (`fill "Salary" with "95"`, `set "Salary" to 95`).
    secondary: ["combobox", "slider"],
    text: false,
    what: "text field"
  },
  select: { primary: ["combobox", "listbox"], secondary: [], text: false, what: "dropdown" },
  check: {
    primary: ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"],
    secondary: [],
    text: false,
    what: "checkbox or radio button"
  },
  press: { primary: textEntry, secondary: interactiveRoles, text: false, what: "focusable element" },
  hover: { primary: [...clickableRoles, "menu", "menubar"], secondary: interactiveRoles, text: true, what: "element" },
  any: { primary: interactiveRoles, secondary: [], text: true, what: "element" }
}

/** How a miss is worded, e.g. `button or link named "Submit"`. */
export const lookingFor = (verb: Verb, target: string) => `${fits[verb].what} named "${target}"`

/** Whether an element is something a person operates (not just text), as listed by observe and extract. */
export const isInteractive = (e: Element) => e.clickable || interactiveRoles.includes(e.role)

const roleWords: Record<string, ReadonlyArray<string>> = {
  button: ["button"],
  link: ["link"],
  field: textEntry,
  input: textEntry,
  box: textEntry,
  textbox: textEntry,
  checkbox: ["checkbox"],
  radio: ["radio"],
  option: ["radio", "option", "checkbox", "menuitemradio"],
  choice: ["radio", "option", "checkbox", "menuitemradio"],
  dropdown: ["combobox", "listbox"],
  combobox: ["combobox"],
  select: ["combobox", "listbox"],
  tab: ["tab"]
}

const stopWords = new Set(["the", "a", "an", "to", "of", "on", "in", "for", "and", "or"])

/** Letters, digits and symbols (♥, €, +, emoji) are what a name is compared on; punctuation and spaces separate. */
export const normalize = (s: string) =>
  s
    .normalize("NFKD")
    .replace(/[\u0300-\u036f\ufe0e\ufe0f\u200d]/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{S}]+/gu, " ")
    .trim()

/** Scripts written without spaces between words: a name that starts with the target holds it. */
const spaceless =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u

/** A target phrase with its articles and a trailing role word ("the email field") taken off as a hint. */
export const parseTarget = (phrase: string) => {
  const words = normalize(phrase)
    .split(" ")
    .filter((w) => w !== "")
  while (words.length > 1 && ["the", "a", "an"].includes(words[0]!)) words.shift()
  const last = words[words.length - 1]
  const hint = last !== undefined && words.length > 1 ? roleWords[last] : undefined
  if (hint !== undefined) {
    words.pop()
    if (words.length > 1 && words[words.length - 1] === "text") words.pop()
  }
  return { full: normalize(phrase), name: words.join(" "), hint }
}

/** exact 100 > word prefix 70 > prefix 60 > word contained 50 > contained 40 > token overlap 20–40 > 0. */
export const nameScore = (name: string, query: string) => {
  const n = normalize(name)
  const q = normalize(query)
  if (n === "" || q === "") return 0
  if (n === q) return 100
  if (n.startsWith(`${q} `)) return 70
  if (n.startsWith(q)) return 60
  if (` ${n} `.includes(` ${q} `)) return 50
  if (n.includes(q)) return 40
  const wanted = q.split(" ").filter((w) => !stopWords.has(w))
  if (wanted.length === 0) return 0
  const have = new Set(n.split(" "))
  const overlap = wanted.filter((w) => have.has(w)).length / wanted.length
  return overlap >= 0.5 ? Math.round(20 + 20 * overlap) : 0
}

/** How sure a match is: the rule in the module header. */
export type Match = "exact" | "words" | "loose"

const matchOf = (name: string, query: string): Match | undefined => {
  const n = normalize(name)
  const q = normalize(query)
  if (n === "" || q === "") return undefined
  if (n === q) return "exact"
  const wanted = q.split(" ").filter((w) => !stopWords.has(w))
  const have = new Set(n.split(" "))
  if (wanted.length > 0 && wanted.every((w) => have.has(w))) return "words"
  if (spaceless.test(q) && n.startsWith(q)) return "words"
  return nameScore(name, query) > 0 ? "loose" : undefined
}

/**
 * How well an element's context matches a scope phrase ("Are you legally authorized to work", "the Data Engineer
 * card"): `exact` when a part's name is the phrase, `words` when a part holds every word of it (its kind counts, so
 * "Data Engineer card" holds for `card "Data Engineer"`), else undefined.
 */
export const scopeMatch = (e: Element, scope: string): Match | undefined => {
  let best: Match | undefined
  const words = normalize(scope)
    .split(" ")
    .filter((w, i) => w !== "" && !(i === 0 && ["the", "a", "an"].includes(w)))
  for (const part of e.around ?? []) {
    // "the Data Engineer card" is the card named "Data Engineer".
    const named = words[words.length - 1] === part.kind ? words.slice(0, -1).join(" ") : words.join(" ")
    const byName = matchOf(part.name, named)
    if (byName === "exact") return "exact"
    if (byName === "words" || matchOf(`${part.kind} ${part.name}`, scope) === "words") best = "words"
  }
  return best
}

/** Words a phrase uses for what something sits in, not for which one it is ("the sponsorship question"). */
const kindWords = new Set(
  "question questions job role position card section group row form field item listing dialog popup modal box area panel part block".split(
    " "
  )
)

/** Whether a phrase names what an element sits in, loosely, as observe reads a description: by the scope rule, or
 * because every word of a part's name is in the phrase ("the Data Engineer job" names `card "Data Engineer"`). */
export const mentions = (e: Element, phrase: string) => {
  const said = new Set(normalize(phrase).split(" "))
  const meant = normalize([...said].filter((w) => !kindWords.has(w)).join(" "))
  if (meant !== "" && scopeMatch(e, meant) !== undefined) return true
  return (e.around ?? []).some((part) => {
    const words = normalize(part.name)
      .split(" ")
      .filter((w) => w !== "" && !stopWords.has(w))
    return words.length > 0 && words.every((w) => said.has(w))
  })
}

/** The elements inside a scope: those whose context names it exactly, else those whose context holds its words. */
export const inScope = (elements: ReadonlyArray<Element>, scope: string): Array<Element> => {
  const matched = elements.map((e) => [e, scopeMatch(e, scope)] as const).filter(([, m]) => m !== undefined)
  const exact = matched.filter(([, m]) => m === "exact")
  return (exact.length > 0 ? exact : matched).map(([e]) => e)
}

export interface Scored {
  readonly element: Element
  readonly score: number
  readonly match: Match
  /** The name matched is written exactly as quoted (same case). */
  readonly sameCase: boolean
  /** 2 primary role for the verb, 1 secondary, 0 text. */
  readonly tier: number
}

const collapse = (s: string) => s.replace(/\s+/g, " ").trim()

/** Scores every element for a verb and a target phrase; best first, non-matches dropped. */
export const rank = (elements: ReadonlyArray<Element>, verb: Verb, target: string): Array<Scored> => {
  const fit = fits[verb]
  const { full, name: stripped, hint } = parseTarget(target)
  const raw = collapse(target)
  const scored: Array<Scored> = []
  for (const element of elements) {
    const role = element.role
    const tier = fit.primary.includes(role)
      ? 2
      : fit.secondary.includes(role) || (element.clickable && (verb === "click" || verb === "hover"))
        ? 1
        : fit.text && !interactiveRoles.includes(role)
          ? 0
          : undefined
    if (tier === undefined) continue
    let best: { score: number; match: Match; sameCase: boolean } | undefined
    for (const name of [element.name, ...element.also]) {
      if (name.trim() === "") continue
      for (const query of [full, stripped]) {
        const match = matchOf(name, query)
        if (match === undefined) continue
        const score = nameScore(name, query)
        const sameCase = collapse(name) === raw
        if (best === undefined || score > best.score || (score === best.score && sameCase && !best.sameCase)) {
          best = { score, match, sameCase }
        }
      }
    }
    if (best === undefined) continue
    const hinted = hint?.includes(role) ? 10 : 0
    const disabled = element.disabled ? -20 : 0
    const roleScore = [0, 15, 35][tier]!
    scored.push({
      element,
      score: best.score + roleScore + hinted + disabled,
      match: best.match,
      sameCase: best.sameCase,
      tier
    })
  }
  return scored.sort((a, b) => b.score - a.score)
}

export type Choice =
  | { readonly _tag: "one"; readonly chosen: Scored }
  | { readonly _tag: "ambiguous"; readonly tied: ReadonlyArray<Scored> }
  | { readonly _tag: "none"; readonly closest: ReadonlyArray<Scored> }

/** Drops an element when a same-named element nested in it is also in the list: the pair is one target. */
const nestedOnce = (list: ReadonlyArray<Scored>) =>
  list.filter(
    (outer) =>
      !list.some(
        (inner) =>
          inner !== outer &&
          inner.element.within.includes(outer.element.ref) &&
          normalize(inner.element.name) === normalize(outer.element.name)
      )
  )

/** Among sure matches: the best-fitting role, then exact names over whole-word ones, enabled, then same case. */
const narrowed = (list: ReadonlyArray<Scored>) => {
  const once = nestedOnce(list)
  const tier = Math.max(...once.map((s) => s.tier))
  const fitting = once.filter((s) => s.tier === tier)
  const exact = fitting.filter((s) => s.match === "exact")
  const closest = exact.length > 0 ? exact : fitting
  const enabled = closest.some((s) => !s.element.disabled) ? closest.filter((s) => !s.element.disabled) : closest
  const sameCase = enabled.filter((s) => s.sameCase)
  return sameCase.length > 0 ? sameCase : enabled
}

/** Applies the fuzzy-match rule (module header) to ranked elements. */
export const choose = (ranked: ReadonlyArray<Scored>, limit = 5): Choice => {
  const sure = ranked.filter((s) => s.match !== "loose")
  if (sure.length === 0) return { _tag: "none", closest: ranked.slice(0, limit) }
  const left = narrowed(sure)
  return left.length === 1 ? { _tag: "one", chosen: left[0]! } : { _tag: "ambiguous", tied: left }
}

/** Elements whose role fits the verb: shown in a miss when nothing came close. */
export const available = (elements: ReadonlyArray<Element>, verb: Verb, limit = 10) => {
  const fit = fits[verb]
  return elements
    .filter((e) => fit.primary.includes(e.role) || fit.secondary.includes(e.role) || (e.clickable && verb === "click"))
    .slice(0, limit)
}
