/**
 * An act checked against the page before its answer says success: what the control is and shows before the act
 * (one evaluation, which also keeps every field's value in the page), and what it shows after (one more), compared
 * with what was asked. When typed text went to another field (a focus trap, a re-render), that field is named and,
 * when it is safe, put back. Plain functions over Playwright locators, so every engine that acts through Playwright
 * (this engine, the Magnitude worker) checks the same way; `atSelector` serves engines that act through a selector
 * of their own (Stagehand). Longer than most modules: each page-side function is sent to the page whole, so it
 * cannot share helpers with another.
 */
import type { Locator } from "playwright-core"
import type { EngineKind } from "../../EngineId.ts"
import { type ElementRef, VerificationFailed } from "../../Errors/Page.ts"
import * as InputValue from "../InputValue.ts"
import type { Held } from "./Held.ts"

/** What the page shows for the element acted on, in the act's answer (`result.target`). */
export interface Target extends ElementRef {
  readonly value?: string
  readonly checked?: boolean | "mixed"
  readonly selected?: ReadonlyArray<string>
}

/** Marks the field typed text reached instead of the target, until it is named. */
export const landedMark = "data-switchyard-landed"

/**
 * Runs in the page: what the control is (kind, role, a name for selector-named targets), whether it takes input
 * (disabled, read-only), what it shows, and what its value is read against (language, bounds, options). With
 * `remember`, every text field's value in its document is kept in the page for `readBack`.
 */
export const inspect = (el: Element, remember: boolean) => {
  const clean = (s: string | null | undefined) => (s ?? "").replace(/\s+/g, " ").trim()
  const kind =
    el instanceof HTMLInputElement
      ? el.type
      : el instanceof HTMLTextAreaElement
        ? "textarea"
        : el instanceof HTMLSelectElement
          ? "select"
          : (el as HTMLElement).isContentEditable
            ? "contenteditable"
            : "other"
  const byType: Record<string, string> = {
    checkbox: "checkbox",
    radio: "radio",
    range: "slider",
    number: "spinbutton",
    search: "searchbox",
    button: "button",
    submit: "button",
    reset: "button",
    image: "button"
  }
  const implicit =
    el instanceof HTMLInputElement
      ? (byType[el.type] ?? "textbox")
      : el instanceof HTMLSelectElement
        ? el.multiple || el.size > 1
          ? "listbox"
          : "combobox"
        : el instanceof HTMLTextAreaElement || kind === "contenteditable"
          ? "textbox"
          : el instanceof HTMLButtonElement
            ? "button"
            : el instanceof HTMLAnchorElement && el.hasAttribute("href")
              ? "link"
              : "generic"
  const role = (el.getAttribute("role") ?? "").split(/\s+/)[0] || implicit
  const labelled = (el.getAttribute("aria-labelledby") ?? "")
    .split(/\s+/)
    .map((id) => (id === "" ? "" : clean(document.getElementById(id)?.textContent)))
    .join(" ")
  const labels = "labels" in el ? Array.from((el as HTMLInputElement).labels ?? [], (l) => clean(l.textContent)) : []
  const name = (
    clean(el.getAttribute("aria-label")) ||
    clean(labelled) ||
    labels.join(" ") ||
    clean(el.getAttribute("placeholder")) ||
    clean(el.getAttribute("title")) ||
    (["button", "link", "option", "checkbox", "radio", "generic"].includes(role) ? clean(el.textContent) : "")
  ).slice(0, 80)
  // The same rule as Pointer.ts: a disabled control, or one inside a disabled group.
  const disabled = el.matches(":disabled") || el.closest('[aria-disabled="true"]') !== null
  const textual =
    (el instanceof HTMLInputElement && !["checkbox", "radio", "range", "file"].includes(el.type)) ||
    el instanceof HTMLTextAreaElement
  const readOnly = textual ? (el as HTMLInputElement).readOnly : el.getAttribute("aria-readonly") === "true"
  const lang = el.closest("[lang]")?.getAttribute("lang") ?? ""
  // A page made inert behind a modal dialog takes no input: the dialog is what a person sees in front of it.
  const inert = el.closest("[inert]") !== null
  const modal = inert
    ? document.querySelector("dialog[open], [role=dialog][aria-modal=true], [role=alertdialog][aria-modal=true]")
    : null
  const modalName =
    modal === null
      ? ""
      : clean(modal.getAttribute("aria-label")) ||
        clean(document.getElementById(modal.getAttribute("aria-labelledby") ?? "")?.textContent) ||
        clean(modal.querySelector("h1, h2, h3")?.textContent)
  const blocked = inert
    ? modal === null
      ? "the page"
      : `dialog${modalName === "" ? "" : ` ${JSON.stringify(modalName)}`}`
    : undefined
  /** The checkbox, radio or switch the element is, labels, or holds alone. */
  const toggle = (() => {
    const is = (e: Element) =>
      (e instanceof HTMLInputElement && (e.type === "checkbox" || e.type === "radio")) ||
      ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"].includes(e.getAttribute("role") ?? "")
    if (is(el)) return el
    if (el instanceof HTMLLabelElement && el.control !== null && is(el.control)) return el.control
    const inner = el.querySelectorAll(
      "input[type=checkbox], input[type=radio], [role=checkbox], [role=radio], [role=switch]"
    )
    return inner.length === 1 ? inner[0]! : undefined
  })()
  const checked =
    toggle === undefined
      ? undefined
      : toggle instanceof HTMLInputElement
        ? toggle.indeterminate
          ? ("mixed" as const)
          : toggle.checked
        : toggle.getAttribute("aria-checked") === "mixed"
          ? ("mixed" as const)
          : toggle.getAttribute("aria-checked") === "true"
  const options =
    el instanceof HTMLSelectElement
      ? Array.from(el.options, (o) => ({
          label: clean(o.label),
          value: o.value,
          selected: o.selected,
          disabled: o.disabled
        }))
      : undefined
  const multiple = el instanceof HTMLSelectElement ? el.multiple : el.getAttribute("aria-multiselectable") === "true"
  const slider =
    role === "slider" && !(el instanceof HTMLInputElement)
      ? {
          now: Number(el.getAttribute("aria-valuenow") ?? "NaN"),
          min: Number(el.getAttribute("aria-valuemin") ?? "0"),
          max: Number(el.getAttribute("aria-valuemax") ?? "100")
        }
      : undefined
  const input = el instanceof HTMLInputElement ? el : undefined
  if (remember) {
    const fields = new Map<Element, string>()
    const roots = new Set<Document | ShadowRoot>([document, el.getRootNode() as Document | ShadowRoot])
    for (const root of roots) {
      for (const field of root.querySelectorAll('input, textarea, [contenteditable]:not([contenteditable="false"])')) {
        if (
          field instanceof HTMLInputElement &&
          ["checkbox", "radio", "file", "hidden", "submit", "button"].includes(field.type)
        )
          continue
        if (
          !(field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) &&
          (field.parentElement?.isContentEditable ?? false)
        )
          continue
        fields.set(
          field,
          field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement
            ? field.value
            : (field.textContent ?? "")
        )
      }
    }
    ;(window as unknown as Record<symbol, unknown>)[Symbol.for("switchyard.fields")] = fields
  }
  return {
    kind,
    role,
    name,
    disabled,
    ...(blocked === undefined ? {} : { blocked }),
    readOnly,
    lang,
    min: input?.min ?? "",
    max: input?.max ?? "",
    step: input?.step ?? "",
    value:
      textual || el instanceof HTMLSelectElement || input?.type === "range"
        ? (el as HTMLInputElement).value
        : undefined,
    ...(checked === undefined ? {} : { checked }),
    ...(options === undefined ? {} : { options }),
    multiple,
    ...(slider === undefined ? {} : { slider })
  }
}

export type Before = ReturnType<typeof inspect>

/** The kind of value a field takes, when it is one people write in many ways (a date, a number, a slider's). */
export const valueKind = (before: Before): InputValue.Kind | undefined =>
  InputValue.kinds.includes(before.kind)
    ? (before.kind as InputValue.Kind)
    : before.slider !== undefined
      ? "range"
      : before.role === "spinbutton"
        ? "number"
        : undefined

/** How a field's text is compared: a date or time exactly, a number numerically, a typed text or editor by content. */
export const modeOf = (method: "fill" | "type", before: Before) => {
  const kind = valueKind(before)
  return kind === "number" || kind === "range"
    ? ("number" as const)
    : kind !== undefined
      ? ("exact" as const)
      : method === "type" || before.kind === "contenteditable"
        ? ("contains" as const)
        : ("equal" as const)
}

/** What an act asked the page to show. */
export interface Ask {
  /** The text a field should hold: `equal` (letters and digits in order, as a mask may format them), `contains` (a
   * typed text, an editor's content), `exact` (a date or time in the input's format), `number` (numerically). */
  readonly text?: { readonly value: string; readonly mode: "equal" | "contains" | "exact" | "number" }
  readonly checked?: boolean
  /** Option labels that should be selected (a native select: exactly these). */
  readonly selected?: ReadonlyArray<string>
  /** A look before the last (the page may still be updating): the field the text reached is not marked or put back. */
  readonly early?: boolean
}

/**
 * Runs in the page: what the element shows now and whether that is what was asked. When a field's text is not what
 * was asked, the field (kept by `inspect`) whose value changed to hold the text is marked (`landedMark`) and, when it
 * is a plain text field, put back as it was.
 */
export const readBack = (el: Element, ask: Ask) => {
  const clean = (s: string | null | undefined) => (s ?? "").replace(/\s+/g, " ").trim()
  const norm = (s: string) =>
    s
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, "")
  // A slider or spinner drawn without an input shows its value in `aria-valuenow`.
  const fieldValue = (e: Element) =>
    e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement || e instanceof HTMLSelectElement
      ? e.value
      : ["slider", "spinbutton"].includes(e.getAttribute("role") ?? "") && e.hasAttribute("aria-valuenow")
        ? (e.getAttribute("aria-valuenow") ?? "")
        : clean(e.textContent)
  const toggle = (() => {
    const is = (e: Element) =>
      (e instanceof HTMLInputElement && (e.type === "checkbox" || e.type === "radio")) ||
      ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"].includes(e.getAttribute("role") ?? "")
    if (is(el)) return el
    if (el instanceof HTMLLabelElement && el.control !== null && is(el.control)) return el.control
    const inner = el.querySelectorAll(
      "input[type=checkbox], input[type=radio], [role=checkbox], [role=radio], [role=switch]"
    )
    return inner.length === 1 ? inner[0]! : undefined
  })()
  const checked =
    toggle === undefined
      ? undefined
      : toggle instanceof HTMLInputElement
        ? toggle.indeterminate
          ? ("mixed" as const)
          : toggle.checked
        : toggle.getAttribute("aria-checked") === "mixed"
          ? ("mixed" as const)
          : toggle.getAttribute("aria-checked") === "true"
  // A field named by its label or wrapper is the one input inside it.
  const field =
    el instanceof HTMLLabelElement && el.control !== null
      ? el.control
      : el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement
        ? el
        : el.querySelectorAll("input, textarea, select").length === 1 && !(el as HTMLElement).isContentEditable
          ? el.querySelector("input, textarea, select")!
          : el
  let selected: Array<string> | undefined
  if (field instanceof HTMLSelectElement) selected = Array.from(field.selectedOptions, (o) => clean(o.label))
  else if (ask.selected !== undefined) {
    // A listbox lists its selected options; a custom dropdown shows its choice beside its field.
    const controlled = (el.getAttribute("aria-controls") ?? el.getAttribute("aria-owns") ?? "")
      .split(/\s+/)
      .map((id) => (id === "" ? null : document.getElementById(id)))
    const lists = [el, ...controlled].filter((e): e is Element => e !== null)
    const marked = lists.flatMap((l) =>
      Array.from(l.querySelectorAll('[role=option][aria-selected="true"], [role=option][aria-checked="true"]'), (o) =>
        clean(o.textContent)
      )
    )
    if (el.getAttribute("role") === "listbox") selected = marked
    else {
      // The text around the field, up to the nearest container that holds another control; open lists left out.
      let around = ""
      for (let node: Element | null = el, level = 0; node !== null && level < 4; node = node.parentElement, level++) {
        const others = Array.from(node.querySelectorAll("input, select, textarea, [role=combobox]")).filter(
          (c) => c !== el && !el.contains(c) && !c.contains(el)
        )
        if (others.length > 0) break
        const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT)
        let text = ""
        for (let t = walker.nextNode(); t !== null; t = walker.nextNode()) {
          if (t.parentElement?.closest("[role=listbox], [role=option], [role=menu]") === null)
            text += ` ${t.textContent}`
        }
        around = `${text} ${fieldValue(el)} ${el instanceof HTMLInputElement ? "" : (el.getAttribute("aria-label") ?? "")}`
      }
      selected = ask.selected.filter(
        (label) => marked.map(norm).includes(norm(label)) || norm(around).includes(norm(label))
      )
    }
  }
  const value = toggle === undefined ? fieldValue(field) : undefined
  let ok = true
  if (ask.checked !== undefined) ok = checked === ask.checked
  if (ask.selected !== undefined && selected !== undefined) {
    const want = ask.selected
    const have = selected.map(norm)
    // A native select shows exactly what was chosen (each asked for by its label or its value); a listbox or
    // dropdown at least every option asked for.
    if (field instanceof HTMLSelectElement) {
      const chosen = Array.from(field.selectedOptions)
      ok =
        chosen.length === new Set(want).size &&
        want.every((w) => chosen.some((o) => norm(o.label) === norm(w) || o.value === w))
    } else ok = want.every((w) => have.includes(norm(w)))
  }
  if (ask.text !== undefined) {
    const got = value ?? ""
    const { value: wanted, mode } = ask.text
    ok =
      mode === "exact"
        ? got === wanted
        : mode === "number"
          ? got.trim() !== "" && Number(got) === Number(wanted)
          : mode === "contains"
            ? norm(got).includes(norm(wanted)) && (norm(wanted) !== "" || got.includes(wanted))
            : norm(wanted) === ""
              ? got.trim() === wanted.trim()
              : norm(got) === norm(wanted)
  }
  let landed: { role: string; name: string; value: string; restored: boolean } | undefined
  const kept = (window as unknown as Record<symbol, Map<Element, string> | undefined>)[Symbol.for("switchyard.fields")]
  if (!ok && ask.early !== true && ask.text !== undefined && kept !== undefined && norm(ask.text.value) !== "") {
    const wanted = norm(ask.text.value)
    const changed = [...kept].filter(
      ([f, was]) => f !== field && !f.contains(field) && !field.contains(f) && f.isConnected && fieldValue(f) !== was
    )
    const focused = document.activeElement
    const reached =
      changed.find(([f]) => f === focused && norm(fieldValue(f)).includes(wanted)) ??
      changed.find(([f]) => norm(fieldValue(f)).includes(wanted)) ??
      changed.find(([f]) => f === focused)
    if (reached !== undefined) {
      const [f, was] = reached
      f.setAttribute("data-switchyard-landed", "")
      const role =
        f.getAttribute("role") ?? (f instanceof HTMLInputElement && f.type === "search" ? "searchbox" : "textbox")
      const labelled =
        "labels" in f ? Array.from((f as HTMLInputElement).labels ?? [], (l) => clean(l.textContent)).join(" ") : ""
      const name = clean(f.getAttribute("aria-label")) || labelled || clean(f.getAttribute("placeholder"))
      const now = fieldValue(f)
      // A plain field holding what was typed is put back through its own setter, so frameworks see the change.
      let restored = false
      if ((f instanceof HTMLInputElement || f instanceof HTMLTextAreaElement) && norm(now).includes(wanted)) {
        const proto = f instanceof HTMLInputElement ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype
        Object.getOwnPropertyDescriptor(proto, "value")?.set?.call(f, was)
        f.dispatchEvent(new Event("input", { bubbles: true }))
        f.dispatchEvent(new Event("change", { bubbles: true }))
        restored = f.value === was
      }
      landed = { role, name, value: now, restored }
    }
  }
  const password = field instanceof HTMLInputElement && field.type === "password"
  return {
    ok,
    ...(value === undefined || selected !== undefined ? {} : { value: password ? "[redacted]" : value.slice(0, 500) }),
    ...(checked === undefined ? {} : { checked }),
    ...(selected === undefined ? {} : { selected }),
    ...(landed === undefined ? {} : { landed })
  }
}

export type After = ReturnType<typeof readBack>

/** The element read: held for the act (one round trip a read), or found by a locator each time. */
type On = Held | Locator

const evaluateOn = <R, Arg>(on: On, f: (el: Element, arg: Arg) => R, arg: Arg, timeout: number): Promise<R> =>
  "release" in on
    ? on.evaluate(f, arg, timeout)
    : (on.evaluate(f as (el: Element, arg: unknown) => R, arg as unknown, { timeout }) as Promise<R>)

/** Reads what a control is and shows, keeping every field's value when text is about to be typed. */
export const before = (on: On, remember: boolean, timeout: number) => evaluateOn(on, inspect, remember, timeout)

/** Reads what the control shows after the act against what was asked. */
export const after = (on: On, ask: Ask, timeout: number) => evaluateOn(on, readBack, ask, timeout)

/** Whether the marked field is this one: read where Playwright reads attributes, outside the page's own world. */
export const isLanded = (locator: Locator, timeout: number) =>
  locator.getAttribute(landedMark, { timeout }).then((value) => value !== null)

/** Runs in a frame: the mark taken off every field that has it, open shadow roots included. */
export const unmarkLanded = (mark: string) => {
  const visit = (root: Document | ShadowRoot) => {
    for (const el of Array.from(root.querySelectorAll(`[${mark}]`))) el.removeAttribute(mark)
    for (const el of Array.from(root.querySelectorAll("*"))) if (el.shadowRoot !== null) visit(el.shadowRoot)
  }
  visit(document)
}

/**
 * An expression for engines that act through a selector of their own (Stagehand: an XPath, or CSS): `inspect` or
 * `readBack` on the element it names in the main document, or null when it names none there (a frame, a selector
 * syntax only Playwright reads).
 */
export const atSelector = (f: typeof inspect | typeof readBack, selector: string, arg: unknown) => {
  const s = selector.trim()
  const xpath = /^(xpath=)?\(?\//.test(s)
  const find = xpath
    ? `document.evaluate(${JSON.stringify(s.replace(/^xpath=/, ""))}, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue`
    : `document.querySelector(${JSON.stringify(s.replace(/^css=/, ""))})`
  return `(() => { let el = null; try { el = ${find} } catch { return null } return el instanceof Element ? (${f})(el, ${JSON.stringify(arg)}) : null })()`
}

/** The state part of the answer's target. */
export const shown = (state: After): Omit<Target, keyof ElementRef> => ({
  ...(state.value === undefined ? {} : { value: state.value }),
  ...(state.checked === undefined ? {} : { checked: state.checked }),
  ...(state.selected === undefined ? {} : { selected: state.selected })
})

const quote = (s: string) => JSON.stringify(s)
const describe = (e: { readonly role: string; readonly name: string }) =>
  `${e.role}${e.name === "" ? "" : ` ${quote(e.name)}`}`

/** What the page shows, in words: `"" ` for an empty field, `checked`, `"Python", "SQL" selected`. */
export const actualOf = (state: After) =>
  state.selected !== undefined
    ? state.selected.length === 0
      ? "nothing selected"
      : `${state.selected.map(quote).join(", ")} selected`
    : state.checked !== undefined
      ? state.checked === "mixed"
        ? "partly checked"
        : state.checked
          ? "checked"
          : "not checked"
      : quote(state.value ?? "")

/**
 * The failure of an act whose target does not show what was asked: `expected` and `actual` in words, and when the
 * input reached another field, that field (`landed`) and whether it was put back.
 */
export const failed = (options: {
  readonly engine: EngineKind
  readonly action: string
  readonly target: { readonly role: string; readonly name: string }
  /** What was asked: a field's text, or `checked`, `"Python", "SQL" selected` (in words). */
  readonly expected: string
  readonly state: After
  readonly landed?: ElementRef
}) => {
  const { state, target } = options
  const asked = state.selected !== undefined || state.checked !== undefined ? options.expected : quote(options.expected)
  const actual = state.selected !== undefined || state.checked !== undefined ? actualOf(state) : (state.value ?? "")
  const shows = `${describe(target)} shows ${actualOf(state)}`
  const where =
    state.landed === undefined
      ? ""
      : `the text went to ${describe(options.landed ?? state.landed)}, not ${describe(target)}${state.landed.restored ? " (that field was put back as it was)" : ""}; `
  return new VerificationFailed({
    engine: options.engine,
    action: options.action,
    expected: options.expected,
    actual,
    ...(options.landed === undefined ? {} : { landed: options.landed }),
    message: `${options.action} did not take: ${where}${shows}, not ${asked}`
  })
}
