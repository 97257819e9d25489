/**
 * The page's elements from Playwright's AI snapshot (`ariaSnapshotJSON({ mode: "ai", boxes: true })`), named as a
 * person reads them and placed in what they sit in, in one walk: an unnamed field takes the label laid over it, beside
 * it or in the row above it (Labels.ts), a file input the text beside it; every element carries its group, card, row
 * and landmark. What the snapshot leaves out — a clickable word inside a sentence, a focusable handle with no role —
 * comes as hints from a scan of the frame's DOM (Scan.ts), matched to the snapshot by box.
 */
import { type Around, contextOf, describeAround, type Element, interactiveRoles } from "../../AccessibilityTree.ts"
import {
  type Box,
  below,
  byBand,
  contains,
  nearby,
  type Placed,
  plausible,
  rowGap,
  sameBox,
  visible
} from "./Labels.ts"

/** A node of `ariaSnapshotJSON({ mode: "ai", boxes: true })`: children are nodes or text. */
export interface SnapshotNode {
  readonly role: string
  readonly name?: string
  readonly ref?: string
  readonly text?: string
  readonly cursor?: string
  readonly placeholder?: string
  readonly checked?: boolean | "mixed"
  readonly disabled?: boolean
  readonly box?: Box
  readonly children?: ReadonlyArray<SnapshotNode | string>
}

export type Child = SnapshotNode | string

/** An element the page makes clickable or focusable without a role (Scan.ts), with the reference it gets when the
 * snapshot does not show it. */
export interface Extra {
  readonly ref: string
  readonly role: string
  readonly name: string
  readonly box: Box
}

/** What a scan of one frame's DOM found that its snapshot cannot say. */
export interface FrameHints {
  /** File inputs: the snapshot shows each as a button. */
  readonly files: ReadonlyArray<Box>
  /** Fields without a label of their own: to the snapshot a placeholder names them, or a file input's "Choose File",
   * where a person reads the text beside them. */
  readonly unlabelled: ReadonlyArray<Box>
  readonly extras: ReadonlyArray<Extra>
}

const noHints: FrameHints = { files: [], unlabelled: [], extras: [] }

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
const fieldRoles = [...valueRoles, ...toggles, "listbox", "slider"]

type Path = ReadonlyArray<{ readonly siblings: ReadonlyArray<Child>; readonly index: number }>

/** The nearest text beside a control in the markup, with its box when it is an element, and how many levels up. */
interface Beside {
  readonly text: string
  readonly box: Box | undefined
  readonly level: number
}

/**
 * The text a person reads as a control's label when the markup ties none to it: for a checkbox the text after it,
 * otherwise the nearest text before it among its siblings, then its parent's siblings (three levels), never past
 * another control.
 */
const besideText = (path: Path, after: boolean): Beside | undefined => {
  for (let level = path.length - 1; level >= Math.max(0, path.length - 3); level--) {
    const { siblings, index } = path[level]!
    const order = after
      ? [...siblings.slice(index + 1), ...siblings.slice(0, index).reverse()]
      : siblings.slice(0, index).reverse()
    for (const sibling of order) {
      if (containsControl(sibling)) break
      const text = labelText(textOf(sibling))
      if (text !== "") {
        return { text, box: typeof sibling === "string" ? undefined : sibling.box, level: path.length - 1 - level }
      }
    }
  }
  return undefined
}

/** The text right after a field among its siblings (a label placed under it), not past another control. */
const followingText = (path: Path): Beside | undefined => {
  const last = path[path.length - 1]
  for (const sibling of last?.siblings.slice(last.index + 1) ?? []) {
    if (containsControl(sibling)) return undefined
    const text = labelText(textOf(sibling))
    if (text !== "") return { text, box: typeof sibling === "string" ? undefined : sibling.box, level: 0 }
  }
  return undefined
}

/** What a subtree holds, for naming what it is: its headings, and its choices and other fields. */
interface Holds {
  readonly headings: number
  readonly heading: string | undefined
  readonly choices: number
  readonly fields: number
  /** Groups (fieldsets, radio groups) inside it. */
  readonly groups: number
}

const landmarks: Record<string, string> = {
  navigation: "navigation",
  banner: "header",
  contentinfo: "footer",
  complementary: "sidebar",
  search: "search",
  region: "region",
  form: "form"
}
const groupings = ["listbox", "menu", "menubar", "toolbar", "tablist", "tree"]

/** Which of a context's parts an inner one replaces: only the innermost group, container and landmark are kept. */
const slot = (kind: string) =>
  kind === "dialog"
    ? "dialog"
    : ["card", "row", "section"].includes(kind)
      ? "container"
      : ["group", "table", ...groupings].includes(kind)
        ? "group"
        : "landmark"

const enter = (around: ReadonlyArray<Around>, part: Around | undefined) =>
  part === undefined ? around : [part, ...around.filter((a) => slot(a.kind) !== slot(part.kind))]

type Draft = { -readonly [K in keyof Element]: Element[K] }

/** A field named after the walk, once every text of its frame and where it sits is known. */
interface Pending {
  readonly draft: Draft
  readonly box: Box | undefined
  readonly key: string
  readonly beside: Beside | undefined
  readonly following: Beside | undefined
  readonly around: ReadonlyArray<Around>
  /** What names it without being a label: its placeholder, a file input's "Choose File". */
  readonly stand: string
}

/** Flattens a snapshot into elements with references, naming unnamed controls from the text around them. */
export const fromSnapshot = (
  roots: ReadonlyArray<Child>,
  frameTitles: ReadonlyMap<string, string> = new Map(),
  hints: ReadonlyMap<string, FrameHints> = new Map()
): Array<Element> => {
  const out: Array<Draft> = []
  const pending: Array<Pending> = []
  /** Per frame (keyed by its iframe's reference, "" for the page): texts and controls where they are, and every
   * node with a box, for the geometry and for matching the scan's hints. */
  const texts = new Map<string, Array<Placed & { readonly around: ReadonlyArray<Around> }>>()
  const controls = new Map<string, Array<Box>>()
  const boxed = new Map<string, Array<{ box: Box; node: SnapshotNode; draft?: Draft; inner: ReadonlyArray<Around> }>>()
  /** Each frame's name as elements carry it (`iframe "Apply"`). */
  const frames = new Map<string, string | undefined>()
  const add = <A>(map: Map<string, Array<A>>, key: string, value: A) => {
    const list = map.get(key)
    if (list === undefined) map.set(key, [value])
    else list.push(value)
  }

  const holds = new Map<SnapshotNode, Holds>()
  const holdsOf = (node: SnapshotNode): Holds => {
    const known = holds.get(node)
    if (known !== undefined) return known
    let h: Holds = {
      headings: node.role === "heading" ? 1 : 0,
      heading: node.role === "heading" ? labelText(node.name ?? textOf(node)) : undefined,
      choices: ["radio", "checkbox"].includes(node.role) ? 1 : 0,
      fields: valueRoles.includes(node.role) || node.role === "listbox" || node.role === "slider" ? 1 : 0,
      groups: node.role === "group" || node.role === "radiogroup" ? 1 : 0
    }
    for (const child of node.children ?? []) {
      if (typeof child === "string") continue
      const c = holdsOf(child)
      h = {
        headings: h.headings + c.headings,
        heading: h.heading ?? c.heading,
        choices: h.choices + c.choices,
        fields: h.fields + c.fields,
        groups: h.groups + c.groups
      }
    }
    holds.set(node, h)
    return h
  }

  /** The text before the first control inside a node: the question a group of choices answers. */
  const leadingText = (node: SnapshotNode) => {
    for (const child of node.children ?? []) {
      if (containsControl(child)) return ""
      const text = labelText(textOf(child))
      if (text !== "") return text
    }
    return ""
  }

  /** A row reads by its header cell, else its first cell of text. */
  const rowName = (node: SnapshotNode) => {
    const cells = (node.children ?? []).filter((c): c is SnapshotNode => typeof c !== "string")
    const header = cells.find((c) => c.role === "rowheader")
    for (const cell of header === undefined ? cells : [header, ...cells]) {
      if (containsControl(cell)) continue
      const text = labelText(cell.name || textOf(cell))
      if (text !== "") return text
    }
    return ""
  }

  /** What a node is to the elements inside it: a group, card, row, section, dialog or landmark, or nothing. */
  const partOf = (node: SnapshotNode, siblings: ReadonlyArray<Child>): Around | undefined => {
    const name = labelText(node.name ?? "")
    switch (node.role) {
      case "group":
      case "radiogroup": {
        const question = name || leadingText(node)
        return question === "" ? undefined : { kind: "group", name: question }
      }
      case "dialog":
      case "alertdialog":
        return { kind: "dialog", name }
      case "table":
      case "grid":
      case "treegrid":
        return name === "" ? undefined : { kind: "table", name }
      case "row": {
        const row = rowName(node)
        return row === "" ? undefined : { kind: "row", name: row }
      }
      case "article":
      case "listitem": {
        const heading = holdsOf(node).heading
        return heading === undefined || heading === "" ? undefined : { kind: "card", name: heading }
      }
      case "generic": {
        const h = holdsOf(node)
        // One of several blocks that each carry a heading: a section or card named by its heading.
        if (
          h.headings === 1 &&
          h.heading !== undefined &&
          h.heading !== "" &&
          siblings.some((s) => s !== node && typeof s !== "string" && holdsOf(s).headings > 0)
        ) {
          return { kind: "section", name: h.heading }
        }
        // A question and its choices, without a fieldset (not a whole form of such questions).
        if (h.choices >= 2 && h.fields === 0 && h.groups === 0 && h.headings <= 1) {
          const question = leadingText(node)
          return question === "" ? undefined : { kind: "group", name: question }
        }
        return undefined
      }
      default: {
        if (groupings.includes(node.role)) return { kind: node.role, name }
        const landmark = landmarks[node.role]
        return landmark === undefined ? undefined : { kind: landmark, name }
      }
    }
  }

  const visit = (
    node: SnapshotNode,
    path: Path,
    within: ReadonlyArray<string>,
    frame: string | undefined,
    key: string,
    around: ReadonlyArray<Around>
  ) => {
    const box = visible(node.box) ? node.box : undefined
    const clickable = node.cursor === "pointer" && !interactiveRoles.includes(node.role)
    const interactive = interactiveRoles.includes(node.role) || clickable
    // A field the markup gives no label: what names it to the snapshot (a placeholder, "Choose File") stands in.
    const frameHints = hints.get(key) ?? noHints
    const upload = box !== undefined && node.role === "button" && frameHints.files.some((b) => sameBox(b, box))
    const untied =
      box !== undefined &&
      (fieldRoles.includes(node.role) || upload) &&
      frameHints.unlabelled.some((b) => sameBox(b, box))
    const file = untied && upload
    const inner = enter(
      around,
      node.role === "iframe" ? undefined : partOf(node, path[path.length - 1]?.siblings ?? [])
    )
    let draft: Draft | undefined
    if (node.ref !== undefined && node.role !== "iframe") {
      frames.set(key, frame)
      const own = untied ? "" : clean(node.name ?? "")
      const content = interactive && !valueRoles.includes(node.role) && !file ? labelText(textOf(node)) : ""
      // A field's label may sit beside it untied; a button's neighbours are other things.
      const labelled = file || fieldRoles.includes(node.role)
      const after = toggles.includes(node.role)
      const beside = interactive && (labelled || (own === "" && content === "")) ? besideText(path, after) : undefined
      const placeholder = clean(node.placeholder ?? "")
      const value = valueRoles.includes(node.role) && node.text !== undefined ? node.text : undefined
      const context = contextOf(around)
      if (interactive || own !== "" || content !== "" || placeholder !== "" || node.text !== undefined) {
        draft = {
          ref: node.ref,
          role: node.role,
          name: "",
          also: [],
          within,
          clickable,
          disabled: node.disabled === true,
          ...(value === undefined ? {} : { value }),
          ...(node.checked === undefined
            ? toggles.includes(node.role)
              ? { checked: false }
              : {}
            : { checked: node.checked }),
          ...(frame === undefined ? {} : { frame }),
          ...(around.length === 0 ? {} : { around, context: context! }),
          ...(box === undefined ? {} : { box }),
          ...(upload ? { upload: true } : {})
        }
        out.push(draft)
        if (own === "" && labelled && !after) {
          // Named once the frame's texts are all known: its label may come after it (laid over it, under it).
          pending.push({
            draft,
            box,
            key,
            beside,
            following: followingText(path),
            around,
            stand: placeholder || (untied ? clean(node.name ?? "") : "")
          })
        } else {
          const name = own || content || placeholder || (beside?.text ?? "")
          draft.name = name === "" ? labelText(node.text ?? "") : name
          draft.also = [...new Set([beside?.text ?? "", placeholder, content].filter((n) => n !== "" && n !== name))]
        }
      }
    }
    if (box !== undefined) {
      if (interactive) add(controls, key, box)
      else if (within.length === 0 && (node.children ?? []).every((c) => typeof c === "string")) {
        const text = labelText(node.text ?? (node.name || textOf(node)))
        if (text !== "") add(texts, key, { text, box, around })
      }
      add(boxed, key, { box, node, ...(draft === undefined ? {} : { draft }), inner })
    }
    const children = node.children ?? []
    const innerWithin = interactive && node.ref !== undefined ? [...within, node.ref] : within
    const title = clean(node.name ?? (node.ref === undefined ? "" : (frameTitles.get(node.ref) ?? "")))
    const inFrame = node.role === "iframe" ? `iframe${title === "" ? "" : ` "${title}"`}` : frame
    const innerKey = node.role === "iframe" && node.ref !== undefined ? node.ref : key
    // Headings that divide one parent's children into sections (a flat form) name the sections that follow them.
    const divided = children.filter((c) => typeof c !== "string" && c.role === "heading").length >= 2
    let section: Around | undefined
    children.forEach((child, index) => {
      if (typeof child === "string") return
      if (divided && child.role === "heading")
        section = { kind: "section", name: labelText(child.name ?? textOf(child)) }
      const under = section !== undefined && child.role !== "heading" ? enter(inner, section) : inner
      visit(child, [...path, { siblings: children, index }], innerWithin, inFrame, innerKey, under)
    })
  }
  roots.forEach((root, index) => {
    if (typeof root !== "string") visit(root, [{ siblings: roots, index }], [], undefined, "", [])
  })

  const bands = new Map([...texts].map(([key, list]) => [key, byBand(list)]))
  for (const p of pending) {
    // A text inside another group or dialog than the field's (the previous fieldset's last label) is not its label.
    const enclosing = new Set(p.around.map(describeAround))
    const near =
      p.box === undefined
        ? {}
        : nearby(
            p.box,
            (bands.get(p.key)?.(p.box, rowGap + 4) ?? []).filter((t) =>
              t.around.every((a) => !["group", "dialog"].includes(slot(a.kind)) || enclosing.has(describeAround(a)))
            ),
            controls.get(p.key) ?? []
          )
    const b = p.beside
    // A label right under the field in the markup, and under it on the screen (a form builder's sublabels).
    const f = p.following
    const under =
      f !== undefined && f.box !== undefined && p.box !== undefined && below(f.box, p.box) ? f.text : undefined
    // A label the markup puts right before the field counts when the screen agrees (or cannot tell); one further
    // up only when it sits close above or beside the field, never a heading further up.
    const adjacent =
      b !== undefined && b.level === 0 && (b.box === undefined || p.box === undefined || plausible(b.box, p.box))
    const further = b !== undefined && (b.box === undefined || p.box === undefined || plausible(b.box, p.box, 120))
    // A field its placeholder names takes another label only from right beside it (a logo further along a header's
    // line is no search box's label).
    const placeheld = p.stand !== "" && !p.draft.upload
    const close =
      adjacent && (b.box === undefined || p.box === undefined || !placeheld || plausible(b.box, p.box, rowGap, rowGap))
    // Where the label sits says how sure it is: one laid over the field, right before it, on its line or in the row
    // above names it even over a placeholder; one further away, under it or after it only a field nothing else names.
    const sure =
      near.over ?? (close ? b.text : undefined) ?? under ?? (placeheld ? near.leftClose : near.left) ?? near.above
    const weak = (further ? b?.text : undefined) ?? near.below ?? p.following?.text
    const label = sure ?? weak ?? ""
    const name = sure ?? (p.stand || label)
    p.draft.name = name
    p.draft.also = [...new Set([label, p.stand].filter((n) => n !== "" && n !== name))]
  }

  // What the scan found: a node the snapshot shows becomes a control; one it leaves out is added with its own
  // reference, in the context of the smallest node around it.
  for (const [key, { extras }] of hints) {
    const nodes = boxed.get(key) ?? []
    for (const extra of extras) {
      const shown = nodes.find((n) => sameBox(n.box, extra.box))
      if (shown?.draft !== undefined) {
        if (!interactiveRoles.includes(shown.draft.role)) shown.draft.clickable = true
        continue
      }
      let host: (typeof nodes)[number] | undefined
      for (const n of nodes) {
        if (
          contains(n.box, extra.box) &&
          (host === undefined || n.box.width * n.box.height <= host.box.width * host.box.height)
        ) {
          host = n
        }
      }
      const around = host?.inner ?? []
      const context = contextOf(around)
      out.push({
        ref: shown?.node.ref ?? extra.ref,
        role: extra.role,
        name: extra.name,
        also: [],
        within: [],
        clickable: true,
        disabled: false,
        box: extra.box,
        ...(frames.get(key) === undefined ? {} : { frame: frames.get(key)! }),
        ...(around.length === 0 ? {} : { around, context: context! })
      })
    }
  }
  return out
}
