/**
 * Finds page elements by what a person sees: the browser's accessibility tree (roles, accessible names, labels),
 * ranked by how well a name matches a target phrase and how well a role fits the verb, each with an XPath to act on.
 */
import type { CDPSession } from "playwright-core"

/** What the target is for; decides which roles fit. `any` is a bare target phrase (observe). */
export type Verb = "click" | "fill" | "select" | "check" | "press" | "hover" | "any"

export interface Candidate {
  readonly role: string
  readonly name: string
  readonly score: number
  /** Absolute XPath of the element (a text match resolves to its parent element). */
  readonly xpath: string
}

/** `button "Submit"`: how candidates appear in descriptions and errors. */
export const describe = (c: { readonly role: string; readonly name: string }) =>
  `${c.role === "StaticText" ? "text" : c.role} "${c.name}"`

const clickable = [
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
const interactive = [...clickable, ...textEntry, "listbox", "slider", "gridcell"]
const text = ["StaticText", "image", "heading", "paragraph", "listitem", "cell", "columnheader", "generic", "label"]

interface Fit {
  readonly primary: ReadonlyArray<string>
  readonly secondary: ReadonlyArray<string>
  /** Whether plain text (headings, paragraphs, text nodes) may match when nothing better does. */
  readonly text: boolean
  /** How a miss is worded: `no ${what} named "X"`. */
  readonly what: string
}

const fits: Record<Verb, Fit> = {
  click: { primary: clickable, secondary: interactive, text: true, what: "button or link" },
  fill: { primary: ["textbox", "searchbox", "spinbutton"], secondary: ["combobox"], text: false, what: "text field" },
  select: { primary: ["combobox", "listbox"], secondary: [], text: false, what: "dropdown" },
  check: {
    primary: ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"],
    secondary: [],
    text: false,
    what: "checkbox or radio button"
  },
  press: { primary: textEntry, secondary: interactive, text: false, what: "focusable element" },
  hover: { primary: [...clickable, "menu", "menubar"], secondary: interactive, text: true, what: "element" },
  any: { primary: interactive, secondary: [], text: true, what: "element" }
}

/** How a miss is worded, e.g. `button or link named "Submit"`. */
export const lookingFor = (verb: Verb, target: string) => `${fits[verb].what} named "${target}"`

const roleWords: Record<string, ReadonlyArray<string>> = {
  button: ["button"],
  link: ["link"],
  field: textEntry,
  input: textEntry,
  box: textEntry,
  textbox: textEntry,
  checkbox: ["checkbox"],
  radio: ["radio"],
  dropdown: ["combobox", "listbox"],
  combobox: ["combobox"],
  select: ["combobox", "listbox"],
  tab: ["tab"]
}

const stopWords = new Set(["the", "a", "an", "to", "of", "on", "in", "for", "and", "or"])

export const normalize = (s: string) =>
  s
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()

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

/** The parts of a CDP `Accessibility.AXNode` the resolver reads. */
interface AxNode {
  readonly nodeId: string
  readonly ignored: boolean
  readonly role?: { readonly value?: unknown }
  readonly name?: { readonly value?: unknown }
  readonly properties?: ReadonlyArray<{ readonly name: string; readonly value: { readonly value?: unknown } }>
  readonly parentId?: string
  readonly backendDOMNodeId?: number
}

interface Scored {
  readonly role: string
  readonly name: string
  readonly score: number
  readonly backendNodeId: number
}

const property = (node: AxNode, name: string) => node.properties?.find((p) => p.name === name)?.value.value

/** Scores every named, non-ignored node of the tree for a verb and a target phrase; best first, zero scores dropped. */
export const rank = (nodes: ReadonlyArray<AxNode>, verb: Verb, target: string): Array<Scored> => {
  const fit = fits[verb]
  const { full, name: stripped, hint } = parseTarget(target)
  const byId = new Map(nodes.map((n) => [n.nodeId, n]))
  const insideSelect = (node: AxNode) => {
    for (let p = node.parentId; p !== undefined; p = byId.get(p)?.parentId) {
      if (byId.get(p)?.role?.value === "MenuListPopup") return true
    }
    return false
  }
  const scored: Array<Scored> = []
  for (const node of nodes) {
    const role = node.role?.value
    const name = node.name?.value
    if (node.ignored || typeof role !== "string" || typeof name !== "string" || node.backendDOMNodeId === undefined) {
      continue
    }
    if (name.trim() === "") continue
    const roleScore = fit.primary.includes(role)
      ? 35
      : fit.secondary.includes(role)
        ? 15
        : fit.text && text.includes(role) && property(node, "editable") === undefined
          ? 0
          : undefined
    if (roleScore === undefined || insideSelect(node)) continue
    const match = Math.max(nameScore(name, full), nameScore(name, stripped))
    if (match === 0) continue
    const hinted = hint?.includes(role) ? 10 : 0
    const disabled = property(node, "disabled") === true ? -20 : 0
    scored.push({
      role,
      name: name.trim(),
      score: match + roleScore + hinted + disabled,
      backendNodeId: node.backendDOMNodeId
    })
  }
  return scored.sort((a, b) => b.score - a.score)
}

/** Names of nodes whose role fits the verb: shown in a miss so the caller sees what is there. */
export const available = (nodes: ReadonlyArray<AxNode>, verb: Verb, limit = 10) => {
  const fit = fits[verb]
  const names = new Set<string>()
  for (const node of nodes) {
    const role = node.role?.value
    const name = node.name?.value
    if (node.ignored || typeof role !== "string" || typeof name !== "string" || name.trim() === "") continue
    if (fit.primary.includes(role) || fit.secondary.includes(role)) names.add(describe({ role, name: name.trim() }))
    if (names.size >= limit) break
  }
  return [...names]
}

// Runs in the page with `this` bound to the node: its absolute XPath, or null outside the main document.
const xpathFunction = `function () {
  let el = this.nodeType === Node.TEXT_NODE ? this.parentElement : this
  if (!el || el.nodeType !== Node.ELEMENT_NODE || el.getRootNode() !== document) return null
  const parts = []
  for (; el && el.nodeType === Node.ELEMENT_NODE; el = el.parentElement) {
    const html = el.namespaceURI === "http://www.w3.org/1999/xhtml"
    const name = el.localName
    const test = html ? name : "*[local-name()='" + name + "']"
    const same = el.parentElement ? Array.from(el.parentElement.children).filter((c) => c.localName === name) : [el]
    parts.unshift(same.length > 1 ? test + "[" + (same.indexOf(el) + 1) + "]" : test)
  }
  return "/" + parts.join("/")
}`

const xpathOf = async (cdp: CDPSession, backendNodeId: number, timeout: number) => {
  const { object } = await cdp.send("DOM.resolveNode", { backendNodeId }, { timeout })
  if (object.objectId === undefined) return null
  const { result } = await cdp.send(
    "Runtime.callFunctionOn",
    { objectId: object.objectId, functionDeclaration: xpathFunction, returnByValue: true },
    { timeout }
  )
  await cdp.send("Runtime.releaseObject", { objectId: object.objectId }, { timeout }).catch(() => undefined)
  return typeof result.value === "string" ? result.value : null
}

export interface Resolution {
  /** Distinct elements, best first, at most `limit`. */
  readonly candidates: ReadonlyArray<Candidate>
  /** What fits the verb on the page, for a helpful miss. */
  readonly available: ReadonlyArray<string>
}

/** Reads the tree of the page behind `cdp` and returns the best candidates for a verb and target phrase. */
export const resolve = async (
  cdp: CDPSession,
  verb: Verb,
  target: string,
  options: { readonly limit?: number; readonly timeoutMs?: number } = {}
): Promise<Resolution> => {
  const timeout = options.timeoutMs ?? 5_000
  const limit = options.limit ?? 10
  const { nodes } = await cdp.send("Accessibility.getFullAXTree", {}, { timeout })
  const ranked = rank(nodes, verb, target)
  const candidates: Array<Candidate> = []
  const seen = new Set<string>()
  for (const c of ranked) {
    if (candidates.length >= limit) break
    const xpath = await xpathOf(cdp, c.backendNodeId, timeout).catch(() => null)
    if (xpath === null || seen.has(xpath)) continue
    seen.add(xpath)
    candidates.push({ role: c.role, name: c.name, score: c.score, xpath })
  }
  return { candidates, available: candidates.length === 0 ? available(nodes, verb) : [] }
}
