/**
 * What the LLM-free engine reads from or runs inside a page: page facts for `extract` (with password values
 * redacted), filling a JSON schema from them, and small in-page helpers. In-page functions are self-contained, since
 * Playwright serializes them into the page.
 */
// biome-ignore-all lint/performance/useDomNodeTextContent: visible text (innerText) is what these functions read
import { Effect, Result } from "effect"
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
  /** The name a person reads for it: the same name observe, extract's controls and the grammar use. */
  readonly label: string
  readonly name: string
  readonly type: string
  readonly value: string
  readonly checked?: boolean
  readonly options?: ReadonlyArray<string>
}

/** A data table as a person reads it: its name (caption, label or the heading before it), header and every row. */
export interface Table {
  readonly name?: string
  readonly headers: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

export interface PageFacts {
  readonly url: string
  readonly title: string
  readonly text: string
  /** Present when `text` is cut: what it shows, of how much, and where reading on starts. */
  readonly truncated?: { readonly shown: number; readonly total: number; readonly nextOffset: number }
  readonly headings: ReadonlyArray<string>
  readonly links: ReadonlyArray<{ readonly text: string; readonly href: string }>
  readonly fields: ReadonlyArray<Field>
}

export const factKeys = ["url", "title", "text", "headings", "links", "fields"] as const

/**
 * Runs in the page: visible text (open shadow roots included; adjacent buttons, links and cells kept apart, never
 * "yesOk" or "123>"; source line breaks read as the spaces they render as), headings, links, form fields with their
 * labels (a label tied to the field, else aria, placeholder, title or the text before it), current values and where
 * they are, the titles of repeated items (job cards, result rows), and the data tables when `tables` is asked for or
 * one fills most of the page.
 */
export const collectFacts = (maxText: number, tables = false) => {
  const clean = (s: string | null | undefined) => (s ?? "").replace(/\s+/g, " ").trim()
  const visible = (el: Element) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"
  const byIds = (ids: string | null) =>
    clean(
      (ids ?? "")
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" ")
    )
  /** Every element matching `selector`, inside open shadow roots too. */
  // The document and its open shadow roots, found once.
  const roots: Array<Document | ShadowRoot> = []
  const gather = (root: Document | ShadowRoot) => {
    roots.push(root)
    for (const el of Array.from(root.querySelectorAll("*"))) if (el.shadowRoot) gather(el.shadowRoot)
  }
  gather(document)
  /** Every element matching `selector`, inside open shadow roots too. */
  const deepAll = (selector: string): Array<Element> =>
    roots.flatMap((root) => Array.from(root.querySelectorAll(selector)))
  const textOf = (root: Node) => {
    const parts: Array<string> = []
    const skip = ["script", "style", "noscript", "template", "head", "select", "option"]
    const links = ["a", "button"]
    const linkRoles = ["link", "button", "tab", "menuitem"]
    const isLink = (node: Node) =>
      node.nodeType === Node.ELEMENT_NODE &&
      (links.includes((node as Element).localName) || linkRoles.includes((node as Element).getAttribute("role") ?? ""))
    /** `pre`: inside preformatted text, where a line break in the source is one on the screen; elsewhere a space. */
    const walk = (node: Node, pre: boolean) => {
      if (node.nodeType === Node.TEXT_NODE) {
        const text = node.textContent ?? ""
        return void parts.push(pre ? text : text.replace(/\s+/g, " "))
      }
      if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return
      const el = node as HTMLElement
      if (node.nodeType === Node.ELEMENT_NODE && skip.includes(el.localName)) return
      const style = node.nodeType === Node.ELEMENT_NODE ? getComputedStyle(el) : undefined
      if (style?.display === "none") return
      const display = style?.display ?? "inline"
      const gap =
        el.localName === "br"
          ? "\n"
          : display === "inline"
            ? ""
            : display === "table-cell"
              ? "\t"
              : display.startsWith("inline")
                ? " "
                : "\n"
      parts.push(gap)
      const children =
        el.localName === "slot"
          ? (el as unknown as HTMLSlotElement).assignedNodes()
          : Array.from((el.shadowRoot ?? el).childNodes)
      if (style?.visibility !== "hidden" || children.length > 0) {
        // Links or buttons side by side with nothing between them (a pager's "1", "2", "3", ">") stay apart.
        let previousLink = false
        for (const child of children) {
          const link = isLink(child)
          if (link && previousLink) parts.push(" ")
          walk(child, style === undefined ? pre : style.whiteSpace.startsWith("pre"))
          if (child.nodeType !== Node.TEXT_NODE || (child.textContent ?? "").trim() !== "") previousLink = link
        }
      }
      parts.push(gap)
    }
    walk(root, false)
    return parts.join("")
  }
  const before = (el: Element) => {
    for (let node: Element | null = el, level = 0; node !== null && level < 3; node = node.parentElement, level++) {
      for (let sib = node.previousElementSibling; sib !== null; sib = sib.previousElementSibling) {
        if (sib.matches("input, select, textarea, button") || sib.querySelector("input, select, textarea, button"))
          break
        const text = clean((sib as HTMLElement).innerText).replace(/[\s:*]+$/, "")
        if (text !== "") return text.slice(0, 80)
      }
    }
    return ""
  }
  const skipped = ["hidden", "submit", "button", "reset", "image"]
  const fields = deepAll("input, select, textarea")
    .filter((el) => !(el instanceof HTMLInputElement && skipped.includes(el.type)))
    .map((node) => {
      const el = node as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement
      const label =
        clean(el.labels?.[0]?.innerText) ||
        clean(el.getAttribute("aria-label")) ||
        byIds(el.getAttribute("aria-labelledby")) ||
        clean(el.getAttribute("placeholder")) ||
        clean(el.getAttribute("title")) ||
        before(el)
      const toggle = el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")
      const r = el.getBoundingClientRect()
      return {
        label,
        name: el.name,
        id: el.id,
        box:
          r.width > 0 && r.height > 0
            ? { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) }
            : undefined,
        type: el.type,
        value: el.type === "password" && el.value !== "" ? "[redacted]" : el.value,
        ...(toggle ? { checked: (el as HTMLInputElement).checked } : {}),
        ...(el instanceof HTMLSelectElement ? { options: Array.from(el.options).map((o) => o.label.trim()) } : {})
      }
    })
  // Repeated items: the largest group of three or more siblings built alike (tag and class), each with a title.
  const titleOf = (el: Element) =>
    clean(
      (el.querySelector("h1, h2, h3, h4, h5, h6, [role=heading], a[href], strong, b") as HTMLElement | null)?.innerText
    )
  let items: Array<string> = []
  for (const parent of deepAll("ul, ol, tbody, div, section, main, [role=list], [role=feed]")) {
    const groups = new Map<string, Array<Element>>()
    for (const child of Array.from(parent.children)) {
      const key = `${child.localName}.${Array.from(child.classList).sort().join(".")}`
      groups.set(key, [...(groups.get(key) ?? []), child])
    }
    for (const group of groups.values()) {
      if (group.length < 3 || group.length <= items.length) continue
      const titles = group.filter(visible).map(titleOf)
      if (titles.length >= 3 && titles.every((t) => t !== "")) items = titles
    }
  }
  const body = document.body
  const text = (body === null ? "" : textOf(body))
    .replace(/[ \t\u00a0]+/g, " ")
    .replace(/\s*\n\s*/g, "\n")
    .trim()
  // Data tables (a header, a caption or a table role), read whole when asked for or when one fills most of the page.
  const dataTables = deepAll("table, [role=table], [role=grid], [role=treegrid]").filter(
    (t) =>
      visible(t) &&
      !["presentation", "none"].includes(t.getAttribute("role") ?? "") &&
      (t.getAttribute("role") !== null || t.querySelector("th, caption") !== null)
  )
  const cellsOf = (row: Element) =>
    Array.from(
      row instanceof HTMLTableRowElement
        ? row.cells
        : row.querySelectorAll("[role=cell], [role=gridcell], [role=columnheader], [role=rowheader]")
    ).map((c) => clean(c.textContent).slice(0, 500))
  const headingBefore = (el: Element) => {
    for (let node: Element | null = el; node !== null && node !== body; node = node.parentElement) {
      for (let sib = node.previousElementSibling; sib !== null; sib = sib.previousElementSibling) {
        if (/^h[1-6]$/.test(sib.localName) || sib.getAttribute("role") === "heading")
          return clean((sib as HTMLElement).innerText)
        const inner = sib.querySelectorAll("h1, h2, h3, h4, h5, h6, [role=heading]")
        if (inner.length > 0) return clean((inner[inner.length - 1] as HTMLElement).innerText)
      }
    }
    return ""
  }
  const tableOf = (t: Element) => {
    const rows = Array.from(t instanceof HTMLTableElement ? t.rows : t.querySelectorAll("[role=row]")).filter(
      (r) => r.getClientRects().length > 0 && r.closest("table, [role=table], [role=grid], [role=treegrid]") === t
    )
    const first = rows[0]
    const header =
      t instanceof HTMLTableElement && t.tHead !== null && t.tHead.rows.length > 0
        ? t.tHead.rows[0]!
        : first !== undefined &&
            Array.from(first.children).every((c) => c.localName === "th" || c.getAttribute("role") === "columnheader")
          ? first
          : undefined
    const name =
      clean(t instanceof HTMLTableElement ? t.caption?.innerText : "") ||
      clean(t.getAttribute("aria-label")) ||
      byIds(t.getAttribute("aria-labelledby")) ||
      headingBefore(t)
    return {
      ...(name === "" ? {} : { name: name.slice(0, 200) }),
      headers: header === undefined ? [] : cellsOf(header),
      rows: rows
        .filter((r) => r !== header)
        .map(cellsOf)
        .filter((cells) => cells.some((c) => c !== ""))
        .slice(0, 5_000)
    }
  }
  const mostlyTable = dataTables.some((t) => (t.textContent ?? "").length > text.length * 0.5)
  // Labels and their values where the markup says which is which: a term and its description, a row's header cell
  // and its cells.
  const pairs: Array<{ label: string; value: string }> = []
  for (const dt of deepAll("dt").filter(visible)) {
    const values: Array<string> = []
    for (let dd = dt.nextElementSibling; dd !== null && dd.localName === "dd"; dd = dd.nextElementSibling) {
      values.push(clean((dd as HTMLElement).innerText))
    }
    pairs.push({ label: clean((dt as HTMLElement).innerText), value: values.join(", ") })
  }
  for (const th of deepAll("tr > th:first-child").filter(visible)) {
    const cells = Array.from(th.parentElement!.children).slice(1)
    if (cells.length > 0 && cells.every((c) => c.localName === "td")) {
      pairs.push({
        label: clean((th as HTMLElement).innerText),
        value: cells.map((c) => clean((c as HTMLElement).innerText)).join(" ")
      })
    }
  }
  return {
    url: location.href,
    title: document.title,
    text: text.slice(0, maxText),
    /** The whole text's length: more than `text`'s when it was cut. */
    textLength: text.length,
    headings: deepAll("h1, h2, h3, h4, h5, h6, [role=heading]")
      .filter(visible)
      .map((h) => clean((h as HTMLElement).innerText))
      .filter((h) => h !== ""),
    links: deepAll("a[href]")
      .filter(visible)
      .slice(0, 200)
      .map((a) => ({
        text: clean((a as HTMLElement).innerText) || clean(a.getAttribute("aria-label")),
        href: (a as HTMLAnchorElement).href
      })),
    fields,
    items,
    pairs: pairs.filter((p) => p.label !== "" && p.value !== "").slice(0, 500),
    tables: tables || mostlyTable ? dataTables.map(tableOf) : undefined
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

/** The engine that fills a schema without a model, as its refusal names it. */
export interface Filler {
  readonly engine: NonNullable<Unsupported["engine"]>
  readonly name: string
}

const playwright: Filler = { engine: "playwright", name: "the playwright engine" }

/** Fills an object schema from page facts and form fields, or names the properties only a model could fill. */
export const fillSchema = (
  raw: RawFacts,
  schema: unknown,
  by: Filler = playwright
): Result.Result<unknown, Unsupported> => {
  const unsupported = (message: string) =>
    Result.fail(new Unsupported({ engine: by.engine, action: "extract", message }))
  const properties =
    typeof schema === "object" && schema !== null && !Array.isArray(schema)
      ? (schema as { type?: unknown; properties?: unknown }).properties
      : undefined
  const type = typeof schema === "object" && schema !== null ? (schema as { type?: unknown }).type : undefined
  if (typeof properties !== "object" || properties === null || (type !== undefined && type !== "object")) {
    return unsupported(
      `${by.name} fills only object schemas whose properties are page facts or form fields; this schema is not an object schema`
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
      `${by.name} cannot fill ${missing.map(quote).join(", ")} without a model: it fills only page facts (${factKeys.join(", ")}) and form fields by label, name or id`
    )
  }
  return Result.succeed(out)
}

/** What an engine answers to `extract` from page facts alone: the facts, or the caller's schema filled from them. */
export const extracted = (raw: RawFacts, schema: unknown, by: Filler): Effect.Effect<unknown, Unsupported> =>
  schema === undefined ? Effect.succeed(toFacts(raw)) : Effect.fromResult(fillSchema(raw, schema, by))

/** A field as extract answers it: without the id and the box it is matched by. */
export const answered = ({ id: _id, box: _box, ...field }: RawField): Field => field

export const toFacts = ({
  items: _items,
  tables: _tables,
  pairs: _pairs,
  textLength,
  ...raw
}: RawFacts): PageFacts => ({
  ...raw,
  fields: raw.fields.map(answered),
  ...(textLength > raw.text.length ? { truncated: truncation(0, raw.text.length, textLength) } : {})
})

/** Where a cut text stops: what it shows, of how much, and the offset `browser.extract {offset}` reads on from. */
export const truncation = (offset: number, shown: number, total: number) => ({
  shown,
  total,
  nextOffset: offset + shown
})

/** An interactive element as extract lists it: the reference `browser.act` accepts, its role, name and value. */
export interface Control {
  readonly ref: string
  readonly role: string
  readonly name: string
  readonly value?: string
  readonly checked?: boolean | "mixed"
  readonly disabled?: boolean
  readonly frame?: string
  /** What it sits in: `group "Are you 18 or older?" in form "Apply"`. */
  readonly context?: string
}
