/**
 * The page's elements as a person sees them, each with a reference to act on: Playwright's AI snapshot
 * (`ariaSnapshotJSON({ mode: "ai" })`: every frame, cross-origin ones included, and open shadow roots; `[ref=eN]`
 * resolved by the `aria-ref=` selector), with a name inferred for unnamed controls from the text beside or above
 * them, plus the inputs that snapshot leaves out (date and time pickers, colour), referenced as `xN`.
 */
import type { Frame, Locator, Page } from "playwright-core"
import { interactiveRoles, type Element as PageElement } from "../AccessibilityTree.ts"

/** A node of `ariaSnapshotJSON({ mode: "ai" })`: children are nodes or text. */
interface SnapshotNode {
  readonly role: string
  readonly name?: string
  readonly ref?: string
  readonly text?: string
  readonly cursor?: string
  readonly placeholder?: string
  readonly checked?: boolean | "mixed"
  readonly disabled?: boolean
  readonly children?: ReadonlyArray<SnapshotNode | string>
}

type Child = SnapshotNode | string

const maxName = 80
const clean = (s: string) => s.replace(/\s+/g, " ").trim()
/** "Email *" and "Email:" read as "Email". */
const labelText = (s: string) =>
  clean(s)
    .replace(/[\s:*]+$/, "")
    .slice(0, maxName)

const textOf = (child: Child): string =>
  typeof child === "string"
    ? child
    : (child.text ?? (child.children === undefined ? (child.name ?? "") : child.children.map(textOf).join(" ")))

const containsControl = (child: Child): boolean =>
  typeof child !== "string" &&
  (interactiveRoles.includes(child.role) || child.cursor === "pointer" || (child.children ?? []).some(containsControl))

const valueRoles = ["textbox", "searchbox", "combobox", "spinbutton"]
const toggles = ["checkbox", "radio", "switch"]

/**
 * The text a person reads as a control's label when the markup ties none to it: for a checkbox the text after it,
 * otherwise the nearest text before it among its siblings, then its parent's siblings (three levels), never past
 * another control.
 */
const besideText = (
  path: ReadonlyArray<{ readonly siblings: ReadonlyArray<Child>; readonly index: number }>,
  after: boolean
) => {
  for (let level = path.length - 1; level >= Math.max(0, path.length - 3); level--) {
    const { siblings, index } = path[level]!
    const order = after
      ? [...siblings.slice(index + 1), ...siblings.slice(0, index).reverse()]
      : siblings.slice(0, index).reverse()
    for (const sibling of order) {
      if (containsControl(sibling)) break
      const text = labelText(textOf(sibling))
      if (text !== "") return text
    }
  }
  return ""
}

/** Flattens a snapshot into elements with references, naming unnamed controls from the text around them. */
export const fromSnapshot = (roots: ReadonlyArray<Child>): Array<PageElement> => {
  const out: Array<PageElement> = []
  const visit = (
    node: SnapshotNode,
    path: ReadonlyArray<{ readonly siblings: ReadonlyArray<Child>; readonly index: number }>,
    within: ReadonlyArray<string>,
    frame: string | undefined
  ) => {
    const clickable = node.cursor === "pointer" && !interactiveRoles.includes(node.role)
    const interactive = interactiveRoles.includes(node.role) || clickable
    if (node.ref !== undefined && node.role !== "iframe") {
      const own = clean(node.name ?? "")
      const content = interactive && !valueRoles.includes(node.role) ? labelText(textOf(node)) : ""
      // A field's label may sit beside it untied; a button's neighbours are other things.
      const labelled = [...valueRoles, ...toggles, "listbox", "slider"].includes(node.role)
      const beside =
        interactive && (labelled || (own === "" && content === "")) ? besideText(path, toggles.includes(node.role)) : ""
      const placeholder = clean(node.placeholder ?? "")
      const name = own || content || placeholder || beside
      const also = [...new Set([beside, placeholder, content].filter((n) => n !== "" && n !== name))]
      const value = valueRoles.includes(node.role) && node.text !== undefined ? node.text : undefined
      if (interactive || name !== "" || node.text !== undefined) {
        out.push({
          ref: node.ref,
          role: node.role,
          name: name === "" ? labelText(node.text ?? "") : name,
          also,
          within,
          clickable,
          disabled: node.disabled === true,
          ...(value === undefined ? {} : { value }),
          ...(node.checked === undefined
            ? toggles.includes(node.role)
              ? { checked: false }
              : {}
            : { checked: node.checked }),
          ...(frame === undefined ? {} : { frame })
        })
      }
    }
    const children = node.children ?? []
    const inner = interactive && node.ref !== undefined ? [...within, node.ref] : within
    const inFrame = node.role === "iframe" ? `iframe${node.name ? ` "${clean(node.name)}"` : ""}` : frame
    children.forEach((child, index) => {
      if (typeof child !== "string") visit(child, [...path, { siblings: children, index }], inner, inFrame)
    })
  }
  roots.forEach((root, index) => {
    if (typeof root !== "string") visit(root, [{ siblings: roots, index }], [], undefined)
  })
  return out
}

/** Inputs without an ARIA role (so absent from the snapshot) that a person still fills. */
const unlistedInputs =
  "input[type=date], input[type=time], input[type=datetime-local], input[type=month], input[type=week], input[type=color]"

/** Runs in the page: each unlisted input's name (label, aria, placeholder, title, text before it) and value. */
const describeUnlisted = (inputs: Array<HTMLInputElement>) => {
  const clean = (s: string | null | undefined) => (s ?? "").replace(/\s+/g, " ").trim()
  const before = (el: Element) => {
    for (let node: Element | null = el, level = 0; node !== null && level < 3; node = node.parentElement, level++) {
      for (let sib = node.previousElementSibling; sib !== null; sib = sib.previousElementSibling) {
        if (
          sib.matches("input, select, textarea, button, a[href]") ||
          sib.querySelector("input, select, textarea, button")
        )
          break
        const text = clean(sib.textContent)
        if (text !== "") return text
      }
    }
    return ""
  }
  return inputs.map((el) => ({
    visible: el.getClientRects().length > 0,
    name:
      clean(el.labels?.[0]?.textContent) ||
      clean(el.getAttribute("aria-label")) ||
      clean(
        (el.getAttribute("aria-labelledby") ?? "")
          .split(/\s+/)
          .map((id) => document.getElementById(id)?.textContent ?? "")
          .join(" ")
      ) ||
      clean(el.getAttribute("placeholder")) ||
      clean(el.getAttribute("title")) ||
      before(el),
    value: el.value,
    disabled: el.disabled
  }))
}

/** The elements of a page and what their references point at; one per connected page. */
export interface Inventory {
  /** Reads every frame's elements now; earlier references stay valid while their elements keep role and name. */
  readonly read: (timeoutMs: number) => Promise<Array<PageElement>>
  /** The element a reference names (`e12`, `f2e5`, `x3`, also written `aria-ref=e12`), or undefined. */
  readonly locate: (ref: string) => Locator | undefined
  /** The element as last read under a reference this engine handed out (references do not survive reconnecting). */
  readonly described: (ref: string) => PageElement | undefined
}

const refPattern = /^(?:aria-ref=)?((?:f\d+)?e\d+|x\d+)$/

/** The bare reference in `e12` or `aria-ref=e12`, or undefined when the text is not a reference. */
export const refOf = (text: string) => refPattern.exec(text.trim())?.[1]

export const inventory = (page: Page): Inventory => {
  const handedOut = new Map<string, PageElement>()
  const unlisted = new Map<string, { readonly frame: Frame; readonly index: number }>()
  let next = 0
  const keyed = new Map<string, string>()

  const read = async (timeoutMs: number) => {
    const snapshot = (await page.ariaSnapshotJSON({ mode: "ai", timeout: timeoutMs })) as ReadonlyArray<Child>
    const elements = fromSnapshot(snapshot)
    // Each frame (cross-origin ones too: Playwright attaches to them) for the inputs the snapshot leaves out.
    const frames = page.frames()
    const extra = await Promise.all(
      frames.map((frame) =>
        frame
          .locator(unlistedInputs)
          .evaluateAll(describeUnlisted)
          .then((found) => ({ frame, found }))
          .catch(() => ({ frame, found: [] }))
      )
    )
    for (const { frame, found } of extra) {
      found.forEach((input, index) => {
        if (!input.visible) return
        const key = `${frames.indexOf(frame)}:${frame.url()}:${index}`
        let ref = keyed.get(key)
        if (ref === undefined) {
          ref = `x${++next}`
          keyed.set(key, ref)
        }
        unlisted.set(ref, { frame, index })
        elements.push({
          ref,
          role: "date",
          name: input.name,
          also: [],
          within: [],
          clickable: false,
          disabled: input.disabled,
          value: input.value,
          ...(frame === page.mainFrame() ? {} : { frame: `iframe ${frame.url()}` })
        })
      })
    }
    for (const e of elements) handedOut.set(e.ref, e)
    return elements
  }

  const locate = (text: string) => {
    const ref = refOf(text)
    if (ref === undefined) return undefined
    if (ref.startsWith("x")) {
      const at = unlisted.get(ref)
      return at === undefined ? undefined : at.frame.locator(unlistedInputs).nth(at.index)
    }
    return page.locator(`aria-ref=${ref}`)
  }

  return { read, locate, described: (text) => handedOut.get(refOf(text) ?? text) }
}
