/**
 * The page's elements as a person sees them, each with a reference to act on: Playwright's AI snapshot
 * (`ariaSnapshotJSON({ mode: "ai" })`: every frame, cross-origin ones included, and open shadow roots; `[ref=eN]`
 * resolved by the `aria-ref=` selector), with a name inferred for unnamed controls from the text beside or above
 * them, plus the rich-text editors that snapshot leaves out (`contenteditable`), referenced as `xN`.
 */
import type { Frame, Locator, Page } from "playwright-core"
import { interactiveRoles, type Element as PageElement } from "../AccessibilityTree.ts"

/** A node of `ariaSnapshotJSON({ mode: "ai" })`: children are nodes or text. */
export interface SnapshotNode {
  readonly role: string
  readonly name?: string
  readonly ref?: string
  readonly text?: string
  readonly cursor?: string
  readonly placeholder?: string
  readonly checked?: boolean | "mixed"
  readonly disabled?: boolean
  readonly selected?: boolean
  readonly expanded?: boolean
  readonly pressed?: boolean | "mixed"
  readonly level?: number
  readonly children?: ReadonlyArray<SnapshotNode | string>
}

export type Child = SnapshotNode | string

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
export const fromSnapshot = (
  roots: ReadonlyArray<Child>,
  frameTitles: ReadonlyMap<string, string> = new Map()
): Array<PageElement> => {
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
    const title = clean(node.name ?? (node.ref === undefined ? "" : (frameTitles.get(node.ref) ?? "")))
    const inFrame = node.role === "iframe" ? `iframe${title === "" ? "" : ` "${title}"`}` : frame
    children.forEach((child, index) => {
      if (typeof child !== "string") visit(child, [...path, { siblings: children, index }], inner, inFrame)
    })
  }
  roots.forEach((root, index) => {
    if (typeof root !== "string") visit(root, [{ siblings: roots, index }], [], undefined)
  })
  return out
}

/** Rich-text editors (`contenteditable` hosts) that a person types into: the snapshot leaves them out. */
const unlisted = '[contenteditable]:not([contenteditable="false"])'

/**
 * Runs in a frame: each editor's name (aria, title, the text before it) and text, and the values of the frame's
 * password fields (the snapshot shows a textbox's value, so those are redacted).
 */
const scanFrame = (editors: Array<Element>) => {
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
        if (text !== "") return text.replace(/[\s:*]+$/, "").slice(0, 80)
      }
    }
    return ""
  }
  return {
    editors: editors.map((el) => ({
      host: !(el.parentElement as HTMLElement | null)?.isContentEditable,
      visible: el.getClientRects().length > 0,
      name:
        clean(el.getAttribute("aria-label")) ||
        clean(
          (el.getAttribute("aria-labelledby") ?? "")
            .split(/\s+/)
            .map((id) => document.getElementById(id)?.textContent ?? "")
            .join(" ")
        ) ||
        clean(el.getAttribute("title")) ||
        clean(el.getAttribute("data-placeholder") ?? el.getAttribute("placeholder")) ||
        before(el),
      value: clean(el.textContent)
    })),
    passwords: Array.from(document.querySelectorAll("input[type=password]"), (i) => (i as HTMLInputElement).value)
  }
}

/** Collects the iframe nodes' references, to name each frame by its iframe's title. */
const iframeRefs = (roots: ReadonlyArray<Child>): Array<string> =>
  roots.flatMap((child) =>
    typeof child === "string"
      ? []
      : [
          ...(child.role === "iframe" && child.ref !== undefined ? [child.ref] : []),
          ...iframeRefs(child.children ?? [])
        ]
  )

/** One read of the page: the snapshot's tree, each iframe's title by its reference, and the elements named from it. */
export interface Reading {
  readonly tree: ReadonlyArray<Child>
  readonly frameTitles: ReadonlyMap<string, string>
  readonly elements: ReadonlyArray<PageElement>
}

/** The elements of a page and what their references point at; one per connected page. */
export interface Inventory {
  /** Reads every frame's elements now; earlier references stay valid while their elements keep role and name. */
  readonly read: (timeoutMs: number) => Promise<Array<PageElement>>
  /** The element a reference names (`e12`, `f2e5`, `x3`, also written `aria-ref=e12`), or undefined. */
  readonly locate: (ref: string) => Locator | undefined
  /** The element as last read under a reference this engine handed out (references do not survive reconnecting). */
  readonly described: (ref: string) => PageElement | undefined
  /** The last read whole, tree included (browser.snapshot renders it). */
  readonly latest: () => Reading | undefined
}

/** `promise`, or `fallback` once it has failed or taken longer than `ms` (a frame whose page is busy or gone). */
export const within = <A>(ms: number, promise: Promise<A>, fallback: A): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    promise.catch(() => fallback),
    new Promise<A>((resolve) => {
      timer = setTimeout(() => resolve(fallback), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

const refPattern = /^(?:aria-ref=)?((?:f\d+)?e\d+|x\d+)$/

/** The bare reference in `e12` or `aria-ref=e12`, or undefined when the text is not a reference. */
export const refOf = (text: string) => refPattern.exec(text.trim())?.[1]

export const inventory = (page: Page): Inventory => {
  const handedOut = new Map<string, PageElement>()
  const editables = new Map<string, { readonly frame: Frame; readonly index: number }>()
  let next = 0
  const keyed = new Map<string, string>()
  let latest: Reading | undefined

  const read = async (timeoutMs: number) => {
    const snapshot = (await page.ariaSnapshotJSON({ mode: "ai", timeout: timeoutMs })) as ReadonlyArray<Child>
    const frames = page.frames()
    // Each frame (cross-origin ones too: Playwright attaches to them) for what the snapshot leaves out or shows
    // too plainly; each iframe for the title that names it.
    const [scans, titles] = await Promise.all([
      Promise.all(
        frames.map((frame) =>
          within(
            1_000,
            frame
              .locator(unlisted)
              .evaluateAll(scanFrame)
              .then((scan) => ({ frame, scan })),
            { frame, scan: { editors: [], passwords: [] } }
          )
        )
      ),
      Promise.all(
        iframeRefs(snapshot).map(async (ref) => {
          const title = await page
            .locator(`aria-ref=${ref}`)
            .getAttribute("title", { timeout: 1_000 })
            .catch(() => null)
          return [ref, title ?? ""] as const
        })
      )
    ])
    const secrets = new Set(scans.flatMap(({ scan }) => scan.passwords).filter((v) => v !== ""))
    const elements = fromSnapshot(snapshot, new Map(titles)).map((e) =>
      e.value !== undefined && secrets.has(e.value) ? { ...e, value: "[redacted]" } : e
    )
    for (const { frame, scan } of scans) {
      scan.editors.forEach((editor, index) => {
        if (!editor.visible || !editor.host) return
        const key = `${frames.indexOf(frame)}:${frame.url()}:${index}`
        let ref = keyed.get(key)
        if (ref === undefined) {
          ref = `x${++next}`
          keyed.set(key, ref)
        }
        editables.set(ref, { frame, index })
        elements.push({
          ref,
          role: "textbox",
          name: editor.name,
          also: [],
          within: [],
          clickable: false,
          disabled: false,
          value: editor.value,
          ...(frame === page.mainFrame() ? {} : { frame: `iframe ${frame.url()}` })
        })
      })
    }
    latest = { tree: snapshot, frameTitles: new Map(titles), elements }
    for (const e of elements) handedOut.set(e.ref, e)
    // A long session reads many pages: keep the references of the last few thousand elements.
    for (const ref of handedOut.keys()) {
      if (handedOut.size <= 5_000) break
      handedOut.delete(ref)
    }
    return elements
  }

  const locate = (text: string) => {
    const ref = refOf(text)
    if (ref === undefined) return undefined
    if (ref.startsWith("x")) {
      const at = editables.get(ref)
      return at === undefined ? undefined : at.frame.locator(unlisted).nth(at.index)
    }
    return page.locator(`aria-ref=${ref}`)
  }

  return { read, locate, described: (text) => handedOut.get(refOf(text) ?? text), latest: () => latest }
}
