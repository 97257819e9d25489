/**
 * What the LLM-free engine reads from or runs inside a page: page facts for `extract` (with password values
 * redacted), filling a JSON schema from them, and small in-page helpers. In-page functions are self-contained, since
 * Playwright serializes them into the page.
 */
// biome-ignore-all lint/performance/useDomNodeTextContent: visible text (innerText) is what these functions read
import { Result } from "effect"
import { Unsupported } from "../Errors/Engine.ts"

const quote = (s: string) => JSON.stringify(s)

/** Scrolls an element (or the document, for html/body) to a percentage of its scroll range. */
export const scrollToPercent = (el: Element, percent: number) => {
  const fraction = Math.min(Math.max(percent, 0), 100) / 100
  if (el === document.documentElement || el === document.body || el === document.scrollingElement) {
    const max = document.documentElement.scrollHeight - window.innerHeight
    window.scrollTo({ top: max * fraction, behavior: "instant" })
  } else {
    el.scrollTo({ top: (el.scrollHeight - el.clientHeight) * fraction, behavior: "instant" })
  }
}

/** Up to five matches of a selector, as `tag "text"`. */
export const summarize = (elements: Array<Element>) =>
  elements.slice(0, 5).map((el) => {
    const text = (el as HTMLElement).innerText || (el as HTMLInputElement).value || el.getAttribute("aria-label") || ""
    return `${el.localName} "${text.replace(/\s+/g, " ").trim().slice(0, 40)}"`
  })

/** The options of a native <select>, or null for any other element. */
export const selectOptions = (el: Element) =>
  el instanceof HTMLSelectElement
    ? Array.from(el.options).map((o) => ({ value: o.value, label: o.label.trim() }))
    : null

export interface Field {
  readonly label: string
  readonly name: string
  readonly type: string
  readonly value: string
  readonly checked?: boolean
  readonly options?: ReadonlyArray<string>
}

export interface PageFacts {
  readonly url: string
  readonly title: string
  readonly text: string
  readonly headings: ReadonlyArray<string>
  readonly links: ReadonlyArray<{ readonly text: string; readonly href: string }>
  readonly fields: ReadonlyArray<Field>
}

export const factKeys = ["url", "title", "text", "headings", "links", "fields"] as const

/** Runs in the page: visible text, headings, links and form fields with their labels and current values. */
export const collectFacts = (maxText: number) => {
  const clean = (s: string | null | undefined) => (s ?? "").replace(/\s+/g, " ").trim()
  const visible = (el: Element) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"
  const byIds = (ids: string | null) =>
    clean(
      (ids ?? "")
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" ")
    )
  const skipped = ["hidden", "submit", "button", "reset", "image"]
  const fields = Array.from(document.querySelectorAll("input, select, textarea"))
    .filter((el) => !(el instanceof HTMLInputElement && skipped.includes(el.type)))
    .map((node) => {
      const el = node as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement
      const label =
        clean(el.labels?.[0]?.innerText) ||
        clean(el.getAttribute("aria-label")) ||
        byIds(el.getAttribute("aria-labelledby")) ||
        clean(el.getAttribute("placeholder")) ||
        clean(el.getAttribute("title"))
      const toggle = el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")
      return {
        label,
        name: el.name,
        id: el.id,
        type: el.type,
        value: el.type === "password" && el.value !== "" ? "[redacted]" : el.value,
        ...(toggle ? { checked: (el as HTMLInputElement).checked } : {}),
        ...(el instanceof HTMLSelectElement ? { options: Array.from(el.options).map((o) => o.label.trim()) } : {})
      }
    })
  const body = document.body
  return {
    url: location.href,
    title: document.title,
    text: (body?.innerText ?? "")
      .replace(/[ \t]+/g, " ")
      .replace(/\s*\n\s*/g, "\n")
      .trim()
      .slice(0, maxText),
    headings: Array.from(document.querySelectorAll("h1, h2, h3, h4, h5, h6, [role=heading]"))
      .filter(visible)
      .map((h) => clean((h as HTMLElement).innerText))
      .filter((h) => h !== ""),
    links: Array.from(document.querySelectorAll("a[href]"))
      .filter(visible)
      .slice(0, 200)
      .map((a) => ({
        text: clean((a as HTMLElement).innerText) || clean(a.getAttribute("aria-label")),
        href: (a as HTMLAnchorElement).href
      })),
    fields
  }
}

export type RawFacts = ReturnType<typeof collectFacts>
type RawField = RawFacts["fields"][number]

const compact = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "")

const fieldValue = (matches: ReadonlyArray<RawField>, schema: unknown) => {
  const type = typeof schema === "object" && schema !== null ? (schema as { type?: unknown }).type : undefined
  const first = matches[0]!
  if (first.type === "radio") return matches.find((f) => f.checked)?.value ?? null
  if (first.checked !== undefined && type !== "string") return first.checked
  if (type === "number" || type === "integer") return first.value.trim() === "" ? null : Number(first.value)
  return first.value
}

/** Fills an object schema from page facts and form fields, or names the properties only a model could fill. */
export const fillSchema = (raw: RawFacts, schema: unknown): Result.Result<unknown, Unsupported> => {
  const unsupported = (message: string) =>
    Result.fail(new Unsupported({ engine: "playwright", action: "extract", message }))
  const properties =
    typeof schema === "object" && schema !== null && !Array.isArray(schema)
      ? (schema as { type?: unknown; properties?: unknown }).properties
      : undefined
  const type = typeof schema === "object" && schema !== null ? (schema as { type?: unknown }).type : undefined
  if (typeof properties !== "object" || properties === null || (type !== undefined && type !== "object")) {
    return unsupported(
      "the playwright engine fills only object schemas whose properties are page facts or form fields; this schema is not an object schema"
    )
  }
  const facts = toFacts(raw)
  const out: Record<string, unknown> = {}
  const missing: Array<string> = []
  for (const [key, propertySchema] of Object.entries(properties)) {
    if ((factKeys as ReadonlyArray<string>).includes(key)) {
      out[key] = facts[key as keyof PageFacts]
      continue
    }
    const wanted = compact(key)
    const matches = raw.fields.filter((f) => [f.label, f.name, f.id].some((x) => x !== "" && compact(x) === wanted))
    if (matches.length === 0) missing.push(key)
    else out[key] = fieldValue(matches, propertySchema)
  }
  if (missing.length > 0) {
    return unsupported(
      `the playwright engine cannot fill ${missing.map(quote).join(", ")} without a model: it fills only page facts (${factKeys.join(", ")}) and form fields by label, name or id`
    )
  }
  return Result.succeed(out)
}

export const toFacts = (raw: RawFacts): PageFacts => ({
  ...raw,
  fields: raw.fields.map(({ id: _id, ...field }) => field)
})
