/**
 * The nodes of Playwright's AI snapshot and what is read from them alike by naming and by context: the text a node
 * shows, whether it holds a control, the label a text makes ("Email *" reads as "Email").
 */
import { interactiveRoles } from "../../AccessibilityTree.ts"
import type { Box } from "./Labels.ts"

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
  readonly selected?: boolean
  readonly expanded?: boolean
  readonly pressed?: boolean | "mixed"
  readonly level?: number
  readonly box?: Box
  readonly children?: ReadonlyArray<SnapshotNode | string>
}

export type Child = SnapshotNode | string

const maxName = 80
export const clean = (s: string) => s.replace(/\s+/g, " ").trim()
/** "Email *" and "Email:" read as "Email". */
export const labelText = (s: string) =>
  clean(s)
    .replace(/[\s:*]+$/, "")
    .slice(0, maxName)

export const textOf = (child: Child): string =>
  typeof child === "string"
    ? child
    : (child.text ?? (child.children === undefined ? (child.name ?? "") : child.children.map(textOf).join(" ")))

export const containsControl = (child: Child): boolean =>
  typeof child !== "string" &&
  (interactiveRoles.includes(child.role) || child.cursor === "pointer" || (child.children ?? []).some(containsControl))

export const valueRoles = ["textbox", "searchbox", "combobox", "spinbutton"]
export const toggles = ["checkbox", "radio", "switch"]
export const fieldRoles = [...valueRoles, ...toggles, "listbox", "slider"]
