/**
 * The keyboard the way a person uses it: typing sends real key events (keydown, input, keyup) that frameworks and
 * search-as-you-type widgets listen to, and a slider moves with the keys a person presses.
 */
import type { Page } from "playwright-core"
import type { Held } from "../Held.ts"
import * as Verify from "../Verify.ts"

/** Inputs whose value is picked, not typed, and numbers (a half-typed "-" is none): `fill` sets them at once. */
const picked = [
  "date",
  "time",
  "datetime-local",
  "month",
  "week",
  "color",
  "range",
  "file",
  "select",
  "number",
  "other"
]
/** Runs in the page: what kind of field this is. */
const kindOf = (el: Element) =>
  el instanceof HTMLInputElement
    ? el.type
    : el instanceof HTMLTextAreaElement
      ? "textarea"
      : el instanceof HTMLSelectElement
        ? "select"
        : (el as HTMLElement).isContentEditable
          ? "contenteditable"
          : "other"

/**
 * Runs in the page: makes a field ready to take typed text as Playwright's `fill` does (the control a label stands
 * for, the field focused and its text selected), where it shows and takes input; false otherwise (Playwright's
 * `fill` then waits for it or says why not).
 */
const selectAll = (node: Element) => {
  let el = node
  if (!el.matches("input, textarea, select") && !(el as HTMLElement).isContentEditable)
    el = el.closest("button, [role=button], [role=checkbox], [role=radio]") ?? el
  if (
    !el.matches(
      "a, input, textarea, button, select, option, optgroup, [role=link], [role=button], [role=checkbox], [role=radio]"
    ) &&
    !(el as HTMLElement).isContentEditable
  ) {
    const label = el.closest("label")
    if (label?.control) el = label.control
  }
  if (el.getClientRects().length === 0 || getComputedStyle(el).visibility !== "visible") return false
  if (el instanceof HTMLInputElement) {
    const typed = ["", "email", "password", "search", "tel", "text", "url"]
    if (!typed.includes(el.type.toLowerCase()) || el.disabled || el.readOnly) return false
    el.select()
    el.focus()
    return true
  }
  if (el instanceof HTMLTextAreaElement) {
    if (el.disabled || el.readOnly) return false
    el.selectionStart = 0
    el.selectionEnd = el.value.length
    el.focus()
    return true
  }
  if (!(el as HTMLElement).isContentEditable) return false
  let focus = el as HTMLElement
  while (focus.isContentEditable && focus.parentElement?.isContentEditable) focus = focus.parentElement
  focus.focus()
  const range = document.createRange()
  range.selectNodeContents(el)
  const selection = getSelection()
  selection?.removeAllRanges()
  selection?.addRange(range)
  return true
}

/**
 * Runs in the page: what the field is and shows (`Verify.inspect`, every field's value kept), and when its text is
 * about to be replaced as typed — it takes input and is no picked, converted or ARIA-drawn value — its text selected
 * (`selectAll`), so the typing that follows starts at once: one round trip where there were two.
 */
const inspectSelecting = new Function(
  "el",
  "select",
  `const before = (${Verify.inspect})(el, true);
  const typed = select && !before.disabled && !before.readOnly && before.blocked === undefined &&
    before.slider === undefined && !["spinbutton", "slider"].includes(before.role) &&
    !${JSON.stringify(picked)}.includes(before.kind);
  return { before, selected: typed && (${selectAll})(el) }`
) as (el: Element, select: boolean) => { readonly before: Verify.Before; readonly selected: boolean }

/** What a field is and shows before text goes in; `select`: a fill's field typed into is made ready for the keys too. */
export const ready = (on: Held, select: boolean, timeout: number) => on.evaluate(inspectSelecting, select, timeout)

/**
 * Replaces a field's text the way a person's typing ends: the text but its last character at once, then that
 * character as real key events (keydown, input, keyup), which search-as-you-type widgets and key-bound form state
 * react to with the whole value in place. Typing every character costs a round trip each (a 15-character address
 * took about 150 ms) and gives those listeners nothing more. `kind` (as `kindOf` reads it) saves reading it again.
 * The text goes in as Playwright's `fill` puts it (the field's text selected, then inserted), on the held element;
 * `selected`: `ready` selected it.
 */
export const fill = async (page: Page, on: Held, value: string, timeout: number, kind?: string, selected = false) => {
  const known = kind ?? (await on.evaluate(kindOf, undefined, timeout))
  if (picked.includes(known)) return on.locator.fill(value, { timeout })
  const head = value.slice(0, -1)
  // `selected`: `ready` focused the field and selected its text already.
  if (!selected && !(await on.evaluate(selectAll, undefined, timeout))) await on.locator.fill(head, { timeout })
  else if (head !== "") await page.keyboard.insertText(head)
  else if (value === "") await page.keyboard.press("Delete")
  // The field has the focus: the last key goes straight to it (replacing the selection when it is the only one).
  if (value !== "") await page.keyboard.type(value.slice(-1))
}

/** Runs in the page: focuses a field with the caret after its text. */
const caretToEnd = (el: Element) => {
  ;(el as HTMLElement).focus()
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    try {
      el.setSelectionRange(el.value.length, el.value.length)
    } catch {
      // Inputs without a text selection (email, number) keep the caret where focusing put it: at the end.
    }
  } else if ((el as HTMLElement).isContentEditable) {
    const range = document.createRange()
    range.selectNodeContents(el)
    range.collapse(false)
    getSelection()?.removeAllRanges()
    getSelection()?.addRange(range)
  }
}

/** Types `text` at the end of a field's text, where a person's click puts the caret. */
export const typeAtEnd = async (page: Page, on: Held, text: string, timeout: number) => {
  await on.evaluate(caretToEnd, undefined, timeout)
  await page.keyboard.type(text)
}

/**
 * Moves an ARIA slider (a handle with `aria-valuenow`, not an input) to `to` with the keys a person uses: Home or End
 * for its ends, otherwise arrow keys, one press to learn the step, then the rest at once, then any last ones.
 */
export const slide = async (page: Page, on: Held, to: number, timeout: number) => {
  const now = () => on.evaluate((el) => Number(el.getAttribute("aria-valuenow")), undefined, timeout)
  await on.locator.focus({ timeout })
  const [min, max] = await on.evaluate(
    (el) => [Number(el.getAttribute("aria-valuemin") ?? "0"), Number(el.getAttribute("aria-valuemax") ?? "100")],
    undefined,
    timeout
  )
  if (to === min || to === max) return page.keyboard.press(to === min ? "Home" : "End")
  let at = await now()
  for (let round = 0; round < 4 && at !== to; round++) {
    const key = at < to ? "ArrowRight" : "ArrowLeft"
    await page.keyboard.press(key)
    const moved = await now()
    const step = Math.abs(moved - at)
    if (step === 0) return
    const left = Math.min(200, Math.round(Math.abs(to - moved) / step))
    // Beyond the target is as far as a step of this size can land: stop there.
    if ((key === "ArrowRight" && moved > to) || (key === "ArrowLeft" && moved < to)) return
    for (let i = 0; i < left; i++) await page.keyboard.press(key)
    at = await now()
  }
}
