/**
 * What a frame's DOM says that its accessibility snapshot cannot, read inside the frame in one pass: rich-text editors
 * (`contenteditable`, which the snapshot leaves out), password values (to redact), fields with no label of their own,
 * and elements the page makes clickable or focusable without a role — a word styled as a link inside a sentence, a
 * slider's handle — with a CSS path that reaches them. Self-contained: Playwright serializes it into the frame.
 */
// biome-ignore-all lint/performance/useDomNodeTextContent: visible text (innerText) is what a person reads

/** Rich-text editors (`contenteditable` hosts) that a person types into. */
export const editable = '[contenteditable]:not([contenteditable="false"])'

/**
 * Runs in a frame (in the page's own world, by a plain evaluate: no selector engine loaded there), given `editable`.
 * Its editors are found in the order Playwright's CSS engine lists them (each root's matches, then each open shadow
 * root's in document order), so `frame.locator(editable).nth(i)` is the i-th of them.
 */
export const scanFrame = (editableSelector: string) => {
  const editors: Array<Element> = []
  const query = (root: Document | ShadowRoot) => {
    editors.push(...Array.from(root.querySelectorAll(editableSelector)))
    for (const el of Array.from(root.querySelectorAll("*"))) if (el.shadowRoot !== null) query(el.shadowRoot)
  }
  query(document)
  const clean = (s: string | null | undefined) => (s ?? "").replace(/\s+/g, " ").trim()
  const boxOf = (el: Element) => {
    const r = el.getBoundingClientRect()
    return { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) }
  }
  const before = (el: Element) => {
    for (let node: Element | null = el, level = 0; node !== null && level < 3; node = node.parentElement, level++) {
      for (let sib = node.previousElementSibling; sib !== null; sib = sib.previousElementSibling) {
        if (
          sib.matches("input, select, textarea, button, a[href]") ||
          sib.querySelector("input, select, textarea, button")
        )
          break
        const text = clean(sib.textContent)
        if (text !== "") return text.replace(/[\s:*]+$/, "").slice(0, 80)
      }
    }
    return ""
  }
  const named = (el: Element) =>
    clean(el.getAttribute("aria-label")) ||
    clean(
      (el.getAttribute("aria-labelledby") ?? "")
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" ")
    ) ||
    clean(el.getAttribute("title"))

  // Every file input, open shadow roots included: the snapshot shows each as a button.
  const files: Array<ReturnType<typeof boxOf>> = []
  const visit = (root: Document | ShadowRoot) => {
    for (const input of Array.from(root.querySelectorAll("input[type=file]"))) {
      if (input.getClientRects().length > 0) files.push(boxOf(input))
    }
    for (const el of Array.from(root.querySelectorAll("*"))) if (el.shadowRoot !== null) visit(el.shadowRoot)
  }
  visit(document)

  // Fields the markup names only by a placeholder (or, for a file input, by the browser's "Choose File").
  const skipped = ["hidden", "submit", "button", "reset", "image"]
  const labelledIds = new Set(
    Array.from(document.querySelectorAll("label[for]"), (l) => (l as HTMLLabelElement).htmlFor)
  )
  const unlabelled = Array.from(document.querySelectorAll("input, select, textarea"))
    .filter(
      (el) =>
        !(el instanceof HTMLInputElement && skipped.includes(el.type)) &&
        el.getClientRects().length > 0 &&
        named(el) === "" &&
        el.closest("label") === null &&
        (el.id === "" || !labelledIds.has(el.id))
    )
    .map(boxOf)

  // Clickable or focusable without a role: the outermost element with a pointer cursor, a click handler in its
  // markup or a tab stop, outside native controls and elements with an interactive role (the snapshot has those).
  const natives = new Set([
    "button",
    "input",
    "select",
    "textarea",
    "summary",
    "option",
    "label",
    "iframe",
    "video",
    "audio"
  ])
  const skippedTags = new Set(["script", "style", "noscript", "template", "head"])
  const native = (el: Element) =>
    natives.has(el.localName) || (el.localName === "a" && el.hasAttribute("href")) || el.hasAttribute("contenteditable")
  const roles =
    /^(button|link|checkbox|radio|switch|tab|menuitem|menuitemcheckbox|menuitemradio|option|treeitem|textbox|searchbox|combobox|spinbutton|listbox|slider|gridcell|scrollbar)$/
  const pathOf = (el: Element) => {
    const parts: Array<string> = []
    for (let node: Element | null = el; node !== null && node !== document.documentElement; node = node.parentElement) {
      if (node.id !== "" && /^[A-Za-z][\w-]*$/.test(node.id) && document.querySelectorAll(`#${node.id}`).length === 1) {
        parts.unshift(`#${node.id}`)
        return parts.join(" > ")
      }
      const parent = node.parentElement
      parts.unshift(
        `${node.localName}:nth-child(${parent === null ? 1 : Array.from(parent.children).indexOf(node) + 1})`
      )
    }
    return `html > ${parts.join(" > ")}`
  }
  const extras: Array<{ box: ReturnType<typeof boxOf>; name: string; text: string; role: string; path: string }> = []
  const walk = (parent: Element, parentPointer: boolean) => {
    for (const el of Array.from(parent.children)) {
      if (extras.length >= 300) return
      if (skippedTags.has(el.localName) || native(el) || roles.test(el.getAttribute("role") ?? "")) continue
      const style = getComputedStyle(el)
      if (style.display === "none") continue
      const pointer = style.cursor === "pointer"
      const tabindex = el.getAttribute("tabindex")
      const focusable = tabindex !== null && Number(tabindex) >= 0
      const handler = el.hasAttribute("onclick") || typeof (el as HTMLElement).onclick === "function"
      if (((pointer && !parentPointer) || focusable || handler) && style.visibility !== "hidden") {
        const box = boxOf(el)
        const text = clean((el as HTMLElement).innerText ?? el.textContent).slice(0, 200)
        // A focusable handle with no text of its own reads as the label before it ("Volume" over its track).
        const name = (named(el) || text || (focusable ? before(el) : "")).slice(0, 80)
        if (box.width > 0 && box.height > 0 && (name !== "" || focusable)) {
          const hint = `${el.className} ${el.id} ${el.parentElement?.className ?? ""} ${el.parentElement?.id ?? ""}`
          extras.push({ box, name, text, role: /slider/i.test(hint) ? "slider" : "generic", path: pathOf(el) })
          continue
        }
      }
      walk(el, pointer)
    }
  }
  if (document.body !== null) walk(document.body, false)

  return {
    editors: editors.map((el) => ({
      host: !(el.parentElement as HTMLElement | null)?.isContentEditable,
      visible: el.getClientRects().length > 0,
      name: named(el) || clean(el.getAttribute("data-placeholder") ?? el.getAttribute("placeholder")) || before(el),
      value: clean(el.textContent)
    })),
    passwords: Array.from(document.querySelectorAll("input[type=password]"), (i) => (i as HTMLInputElement).value),
    files,
    unlabelled,
    extras
  }
}

export type FrameScan = ReturnType<typeof scanFrame>

export const emptyScan: FrameScan = { editors: [], passwords: [], files: [], unlabelled: [], extras: [] }
