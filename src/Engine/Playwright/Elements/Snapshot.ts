/**
 * The page's elements from Playwright's AI snapshot (`ariaSnapshotJSON({ mode: "ai", boxes: true })`), named as a
 * person reads them and placed in what they sit in, in one walk: an unnamed field takes the label laid over it, beside
 * it or in the row above it (Labels.ts), a file input the text beside it; every element carries its group, card, row
 * and landmark. What the snapshot leaves out — a clickable word inside a sentence, a focusable handle with no role —
 * comes as hints from a scan of the frame's DOM (Scan.ts), matched to the snapshot by box.
 */
import { type Around, contextOf, describeAround, type Element, interactiveRoles } from "../../AccessibilityTree.ts"
import * as Context from "./Context.ts"
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
import {
  type Child,
  clean,
  containsControl,
  fieldRoles,
  labelText,
  type SnapshotNode,
  textOf,
  toggles,
  valueRoles
} from "./Nodes.ts"

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

  const { partOf } = Context.reader()

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
    const inner = Context.enter(
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
      const under = section !== undefined && child.role !== "heading" ? Context.enter(inner, section) : inner
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
              t.around.every(
                (a) => !["group", "dialog"].includes(Context.slot(a.kind)) || enclosing.has(describeAround(a))
              )
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
