/**
 * The page as a tree a model reads: Playwright's AI snapshot named by the element model (Elements.ts: the same names
 * and references as observe and extract), with unnamed wrappers and label echoes folded away; rendered within a byte
 * budget (subtrees the budget cannot hold are collapsed into one line saying what they hold), searched, and compared.
 */
import { interactiveRoles, type Element as PageElement } from "../AccessibilityTree.ts"
import type { Child, Reading, SnapshotNode } from "./Elements.ts"

/** One line of the outline and what is under it. */
export interface Node {
  /** The reference when it has one, else its place under its parent: what `since` compares by. */
  readonly key: string
  readonly ref: string | undefined
  readonly role: string
  readonly name: string
  /** As rendered, without indentation and the leading "- ": `textbox "Email" [ref=e12]: a@b.c`. */
  readonly line: string
  /** Role, name, value and text, normalized: what `find` matches. */
  readonly search: string
  readonly interactive: boolean
  readonly children: ReadonlyArray<Node>
}

/** Roles that only wrap: unnamed and not clickable, their contents take their place. */
const wrappers = new Set(["generic", "none", "presentation"])
/** Text longer than this is cut in a line (extract reads all of it). */
const maxText = 400

const clean = (s: string) => s.replace(/\s+/g, " ").trim()
export const normalize = (s: string) =>
  s
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
const quoted = (s: string) => `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`
const cut = (s: string) => (s.length > maxText ? `${s.slice(0, maxText)}… (+${s.length - maxText} chars)` : s)

/** The outline of one read of the page: every frame and open shadow root, editors (`x` references) at the end. */
export const outline = (reading: Reading): ReadonlyArray<Node> => {
  const byRef = new Map(reading.elements.map((e) => [e.ref, e] as const))

  const leaf = (key: string, text: string): Node => ({
    key,
    ref: undefined,
    role: "text",
    name: "",
    line: `text: ${cut(text)}`,
    search: normalize(`text ${text}`),
    interactive: false,
    children: []
  })

  const convert = (node: SnapshotNode, parent: string, index: number): ReadonlyArray<Node> => {
    const e = node.ref === undefined ? undefined : byRef.get(node.ref)
    const key = node.ref ?? `${parent}/${node.role}:${index}`
    const kids = node.children ?? []
    const clickable = e?.clickable ?? node.cursor === "pointer"
    // An unnamed wrapper is not something a person reads: its contents take its place.
    if (wrappers.has(node.role) && clean(node.name ?? "") === "" && !clickable) {
      if (node.text !== undefined && kids.length === 0) return [leaf(key, clean(node.text))]
      return children(kids, parent, index)
    }
    const interactive =
      e !== undefined ? interactiveRoles.includes(e.role) || e.clickable : interactiveRoles.includes(node.role)
    const role = e?.role ?? node.role
    const own = clean(node.name ?? "")
    const name =
      node.role === "iframe"
        ? clean(reading.frameTitles.get(node.ref ?? "") ?? own)
        : interactive
          ? (e?.name ?? own)
          : own
    const options = kids.filter((k): k is SnapshotNode => typeof k !== "string" && k.role === "option")
    const chosen = options.filter((o) => o.selected === true).map((o) => clean(o.name ?? ""))
    const value =
      e?.value !== undefined
        ? e.value
        : chosen.length > 0
          ? chosen.join(", ")
          : !interactive && node.text !== undefined
            ? clean(node.text)
            : undefined
    const flags = [
      ...(node.ref !== undefined && (interactive || kids.length > 0) ? [`[ref=${node.ref}]`] : []),
      ...(e?.checked === true || node.checked === true ? ["[checked]"] : []),
      ...(e?.checked === "mixed" || node.checked === "mixed" ? ["[checked=mixed]"] : []),
      ...(e?.disabled === true || node.disabled === true ? ["[disabled]"] : []),
      ...(node.selected === true ? ["[selected]"] : []),
      ...(node.expanded === true ? ["[expanded]"] : []),
      ...(node.pressed === true ? ["[pressed]"] : node.pressed === "mixed" ? ["[pressed=mixed]"] : []),
      ...(node.level !== undefined ? [`[level=${node.level}]`] : []),
      ...(clickable && !interactiveRoles.includes(role) ? ["[clickable]"] : [])
    ]
    const line = `${role}${name === "" ? "" : ` ${quoted(name)}`}${flags.length === 0 ? "" : ` ${flags.join(" ")}`}${value === undefined || value === "" ? "" : `: ${cut(value)}`}`
    return [
      {
        key,
        ref: node.ref,
        role,
        name,
        line,
        search: normalize(`${role} ${name} ${value ?? ""}`),
        interactive,
        children: children(kids, key, 0, name)
      }
    ]
  }

  /** A node's children, text included, without the text that only repeats a control's name (its label). */
  const children = (kids: ReadonlyArray<Child>, parent: string, offset: number, parentName = ""): Array<Node> => {
    const converted = kids.flatMap((kid, i) =>
      typeof kid === "string"
        ? clean(kid) === ""
          ? []
          : [leaf(`${parent}/text:${offset + i}`, clean(kid))]
        : convert(kid, parent, offset + i)
    )
    const names = new Set(
      [parentName, ...converted.filter((n) => n.interactive || n.role === "iframe").map((n) => n.name)]
        .map(normalize)
        .filter((n) => n !== "")
    )
    return converted.filter((n) => n.role !== "text" || !names.has(normalize(n.line.slice("text: ".length))))
  }

  const roots = children(reading.tree, "", 0)
  // Rich-text editors, which the snapshot leaves out, with the references the element model gave them.
  const editors = reading.elements
    .filter((e) => e.ref.startsWith("x"))
    .map(
      (e: PageElement): Node => ({
        key: e.ref,
        ref: e.ref,
        role: e.role,
        name: e.name,
        line: `${e.role}${e.name === "" ? "" : ` ${quoted(e.name)}`} [ref=${e.ref}]${e.value ? `: ${cut(e.value)}` : ""}`,
        search: normalize(`${e.role} ${e.name} ${e.value ?? ""}`),
        interactive: true,
        children: []
      })
    )
  return [...roots, ...editors]
}

/** Every node of the outline with its depth (from `start`) and the nodes above it, in document order. */
const walk = (
  roots: ReadonlyArray<Node>,
  start: number,
  f: (node: Node, depth: number, path: ReadonlyArray<Node>) => void
) => {
  const go = (nodes: ReadonlyArray<Node>, depth: number, path: ReadonlyArray<Node>) => {
    for (const node of nodes) {
      f(node, depth, path)
      go(node.children, depth + 1, [...path, node])
    }
  }
  go(roots, start, [])
}

const lineOf = (node: Node, depth: number, suffix = "") => `${"  ".repeat(depth)}- ${node.line}${suffix}\n`
const bytes = (s: string) => Buffer.byteLength(s)

/** What a collapsed subtree holds, as its line says it: `[+14 lines: 3 link, 1 button]`. */
const holds = (node: Node) => {
  let lines = 0
  const roles = new Map<string, number>()
  const count = (nodes: ReadonlyArray<Node>) => {
    for (const n of nodes) {
      lines++
      if (n.interactive) roles.set(n.role, (roles.get(n.role) ?? 0) + 1)
      count(n.children)
    }
  }
  count(node.children)
  const kinds = [...roles]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([role, n]) => `${n} ${role}`)
  return { lines, suffix: ` [+${lines} lines${kinds.length === 0 ? "" : `: ${kinds.join(", ")}`}]` }
}

export interface Rendered {
  readonly text: string
  /** Bytes of the whole outline, unabridged. */
  readonly totalBytes: number
  /** Subtrees shown as one line, and the lines they hold. */
  readonly collapsed: number
  readonly hiddenLines: number
}

/**
 * The outline within `maxBytes`: whole when it fits; else opened breadth-first — the top of the page's structure
 * first, then deeper — while what is opened still fits, every subtree left closed shown as one line with what it
 * holds (its reference lets `find` open it). Option lists open last: the field's line already shows its value.
 */
export const render = (
  roots: ReadonlyArray<Node>,
  maxBytes: number,
  headings: ReadonlyMap<Node, string> = new Map()
): Rendered => {
  const heading = (root: Node) => headings.get(root) ?? ""
  let full = ""
  for (const root of roots) {
    full += heading(root)
    walk([root], 0, (node, depth) => {
      full += lineOf(node, depth)
    })
  }
  const totalBytes = bytes(full)
  if (totalBytes <= maxBytes) return { text: full, totalBytes, collapsed: 0, hiddenLines: 0 }

  const info = new Map<Node, { readonly lines: number; readonly suffix: string }>()
  const closedLine = (node: Node, depth: number) => {
    if (node.children.length === 0) return lineOf(node, depth)
    let held = info.get(node)
    if (held === undefined) {
      held = holds(node)
      info.set(node, held)
    }
    return lineOf(node, depth, held.suffix)
  }
  const open = new Set<Node>()
  const shownRoots: Array<Node> = []
  let used = 0
  for (const root of roots) {
    const size = bytes(heading(root) + closedLine(root, 0))
    if (used + size > maxBytes - 40) break
    shownRoots.push(root)
    used += size
  }
  const optionsOnly = (n: Node) => n.children.every((c) => c.role === "option")
  const queue: Array<readonly [Node, number]> = shownRoots.map((r) => [r, 0] as const)
  const later: Array<readonly [Node, number]> = []
  const tryOpen = ([node, depth]: readonly [Node, number], into: Array<readonly [Node, number]>) => {
    if (node.children.length === 0) return
    const cost =
      bytes(lineOf(node, depth)) +
      node.children.reduce((n, c) => n + bytes(closedLine(c, depth + 1)), 0) -
      bytes(closedLine(node, depth))
    if (used + cost > maxBytes) return
    used += cost
    open.add(node)
    for (const child of node.children) into.push([child, depth + 1])
  }
  while (queue.length > 0) {
    const next = queue.shift()!
    if (optionsOnly(next[0])) later.push(next)
    else tryOpen(next, queue)
  }
  while (later.length > 0) tryOpen(later.shift()!, later)

  let text = ""
  let collapsed = 0
  let hiddenLines = 0
  const emit = (nodes: ReadonlyArray<Node>, depth: number) => {
    for (const node of nodes) {
      if (open.has(node) || node.children.length === 0) {
        text += lineOf(node, depth)
        emit(node.children, depth + 1)
      } else {
        text += closedLine(node, depth)
        collapsed++
        hiddenLines += info.get(node)?.lines ?? 0
      }
    }
  }
  for (const root of shownRoots) {
    text += heading(root)
    emit([root], 0)
  }
  const left = roots.length - shownRoots.length
  if (left > 0) {
    text += `- … ${left} more parts of the page\n`
    collapsed += left
  }
  return { text, totalBytes, collapsed, hiddenLines }
}

const refPattern = /^(?:aria-ref=)?((?:f\d+)?e\d+|x\d+)$/

/** A subtree `find` matched, with the path of named nodes above it. */
export interface Found {
  readonly node: Node
  readonly path: ReadonlyArray<Node>
}

/**
 * The subtrees a query names: a reference (`e12`) names one; a role of the page (`button`, `form`) every node with it;
 * anything else the nodes whose role, name, value or text hold every word of it (the last may be a word's start). A
 * match inside another is part of it.
 */
export const find = (roots: ReadonlyArray<Node>, query: string): ReadonlyArray<Found> => {
  const ref = refPattern.exec(query.trim())?.[1]
  const wanted = normalize(query)
  const words = wanted.split(" ").filter((w) => w !== "")
  const roles = new Set<string>()
  walk(roots, 0, (node) => void roles.add(node.role))
  const byRole = roles.has(wanted)
  const matches = (node: Node) =>
    ref !== undefined
      ? node.ref === ref
      : byRole
        ? node.role === wanted
        : words.length > 0 &&
          words.every((w, i) =>
            i === words.length - 1 ? ` ${node.search}`.includes(` ${w}`) : ` ${node.search} `.includes(` ${w} `)
          )
  const found: Array<Found> = []
  const visit = (nodes: ReadonlyArray<Node>, path: ReadonlyArray<Node>) => {
    for (const node of nodes) {
      if (matches(node)) found.push({ node, path })
      else visit(node.children, [...path, node])
    }
  }
  visit(roots, [])
  return found
}

/** `main > form "Sign up"`: where a node is, by the named nodes above it. */
export const where = (path: ReadonlyArray<Node>) =>
  path.map((n) => `${n.role}${n.name === "" ? "" : ` ${quoted(n.name)}`}`).join(" > ")

/** What `since` compares: each line of an earlier outline by key, with its parent. */
export interface Lines {
  readonly url: string
  readonly lines: ReadonlyMap<string, { readonly line: string; readonly parent: string | undefined }>
}

export const linesOf = (url: string, roots: ReadonlyArray<Node>): Lines => {
  const lines = new Map<string, { line: string; parent: string | undefined }>()
  walk(roots, 0, (node, _depth, path) => lines.set(node.key, { line: node.line, parent: path[path.length - 1]?.key }))
  return { url, lines }
}

export interface Changes {
  readonly added: number
  readonly removed: number
  readonly changed: number
  /** The changes as lines: `+` a subtree that appeared, `-` one that went, `~` a line that changed; under `# where`. */
  readonly text: string
}

/**
 * What changed from `before` to `roots`: new and gone subtrees (their tops), and lines that read differently; a node
 * that went and one of the same role that came in its place under the same parent (a live region refilled) is a change.
 */
export const diff = (before: Lines, roots: ReadonlyArray<Node>): Changes => {
  const now = linesOf("", roots)
  const blocks = new Map<string, Array<string>>()
  const add = (at: string, line: string) => blocks.set(at, [...(blocks.get(at) ?? []), line])
  const gone: Array<{ readonly key: string; readonly line: string; readonly parent: string | undefined }> = []
  for (const [key, old] of before.lines) {
    // Only the top of a subtree that went.
    if (!now.lines.has(key) && (old.parent === undefined || now.lines.has(old.parent))) gone.push({ key, ...old })
  }
  const roleOf = (line: string) => /^[^\s:]+/.exec(line)?.[0]
  let added = 0
  let changed = 0
  walk(roots, 0, (node, _depth, path) => {
    const parent = path[path.length - 1]
    const old = before.lines.get(node.key)
    if (old === undefined) {
      // Only the top of a new subtree: its contents come with it.
      if (parent !== undefined && !before.lines.has(parent.key)) return
      const replaced = gone.findIndex((g) => g.parent === parent?.key && roleOf(g.line) === node.role)
      if (replaced >= 0) {
        gone.splice(replaced, 1)
        changed++
        add(where(path), `~ - ${node.line}\n`)
        return
      }
      added++
      let text = `+ - ${node.line}\n`
      walk(node.children, 1, (child, depth) => {
        text += `  ${lineOf(child, depth)}`
      })
      add(where(path), text)
    } else if (old.line !== node.line) {
      changed++
      add(where(path), `~ - ${node.line}\n`)
    }
  })
  for (const old of gone) {
    const parent = old.parent === undefined ? undefined : before.lines.get(old.parent)
    add(parent === undefined ? "" : parent.line.replace(/ \[.*$/, ""), `- - ${old.line}\n`)
  }
  const text = [...blocks].map(([at, lines]) => `${at === "" ? "" : `# in ${at}\n`}${lines.join("")}`).join("")
  return { added, removed: gone.length, changed, text }
}
