/**
 * What an element sits in, as a person reads it: the group (a fieldset's legend, a radio group, the question before a
 * set of choices, a listbox), the card, row or section (by its heading or first cell) and the dialog or landmark
 * around it — read from the snapshot's nodes on the way down, innermost first, one part of each kind.
 */
import type { Around } from "../../AccessibilityTree.ts"
import { type Child, containsControl, labelText, type SnapshotNode, textOf, valueRoles } from "./Nodes.ts"

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
export const slot = (kind: string) =>
  kind === "dialog"
    ? "dialog"
    : ["card", "row", "section"].includes(kind)
      ? "container"
      : ["group", "table", ...groupings].includes(kind)
        ? "group"
        : "landmark"

export const enter = (around: ReadonlyArray<Around>, part: Around | undefined) =>
  part === undefined ? around : [part, ...around.filter((a) => slot(a.kind) !== slot(part.kind))]

/** What each node is to the elements inside it, with what its subtrees hold counted once per snapshot. */
export const reader = () => {
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

  return { partOf }
}
