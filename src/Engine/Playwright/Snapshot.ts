/**
 * `browser.snapshot` on the session's page: one read of the page's elements (the references `act` accepts), its outline
 * (Outline.ts) within the call's byte budget, the matching parts for `find`, and for `since: "last"` what changed since
 * the previous snapshot on this connection (references, too, last only as long as it).
 */
import { Effect } from "effect"
import type { SnapshotOptions, SnapshotResult } from "../Engine.ts"
import * as Actions from "./Actions.ts"
import { attempt } from "./Errors.ts"
import * as Outline from "./Outline.ts"
import type { SessionPage } from "./Page.ts"

const cutAt = (text: string, maxBytes: number) => {
  if (Buffer.byteLength(text) <= maxBytes) return { text, cut: 0 }
  const lines = text.split("\n")
  let kept = ""
  for (const line of lines) {
    if (Buffer.byteLength(kept + line) + 80 > maxBytes) break
    kept += `${line}\n`
  }
  return { text: kept, cut: Buffer.byteLength(text) - Buffer.byteLength(kept) }
}

/** The snapshots of one connected page: each remembers its outline for the next `since`. */
export const make = (sp: SessionPage) => {
  let previous: Outline.Lines | undefined

  const take = Effect.fn("PlaywrightEngine.snapshot")(function* (options: SnapshotOptions) {
    const [, title] = yield* Effect.all(
      [Actions.readElements(sp, "snapshot"), attempt(sp.at("snapshot"), () => sp.page.title())],
      { concurrency: 2 }
    )
    const reading = sp.elements.latest()
    const roots = reading === undefined ? [] : Outline.outline(reading)
    const url = sp.page.url()
    const before = previous
    previous = Outline.linesOf(url, roots)
    const base = { url, title }
    const budgeted = (nodes: ReadonlyArray<Outline.Node>, headings?: ReadonlyMap<Outline.Node, string>) => {
      const rendered = Outline.render(nodes, options.maxBytes, headings)
      if (rendered.collapsed === 0) return { snapshot: rendered.text }
      return {
        snapshot: rendered.text,
        truncated: {
          totalBytes: rendered.totalBytes,
          collapsed: rendered.collapsed,
          hiddenLines: rendered.hiddenLines,
          how: `the whole page is ${rendered.totalBytes} bytes; ${rendered.collapsed === 1 ? "1 part is" : `${rendered.collapsed} parts are`} shown as one line ending in [+N lines]: browser.snapshot {find: "<its ref>"} opens one, {find: "<words or role>"} finds parts, {maxBytes: ${rendered.totalBytes}} returns it all`
        },
        whole: Outline.render(nodes, Number.POSITIVE_INFINITY, headings).text
      }
    }

    if (options.find !== undefined) {
      const found = Outline.find(roots, options.find)
      if (found.length === 0) {
        return {
          ...base,
          snapshot: `no part of the page matches ${JSON.stringify(options.find)}\n`,
          found: 0
        } satisfies SnapshotResult
      }
      const headings = new Map(found.map((f) => [f.node, f.path.length === 0 ? "" : `# in ${Outline.where(f.path)}\n`]))
      return {
        ...base,
        ...budgeted(
          found.map((f) => f.node),
          headings
        ),
        found: found.length
      } satisfies SnapshotResult
    }

    if (options.since === "last") {
      if (before === undefined || before.url !== url) {
        const why =
          before === undefined
            ? "no earlier snapshot of this page on this connection: the whole page follows"
            : `the page is now ${url} (it was ${before.url}): the whole page follows`
        return { ...base, ...budgeted(roots), changes: why } satisfies SnapshotResult
      }
      const changes = Outline.diff(before, roots)
      const counts = { added: changes.added, removed: changes.removed, changed: changes.changed }
      if (changes.text === "") return { ...base, snapshot: "", changes: counts } satisfies SnapshotResult
      const shown = cutAt(changes.text, options.maxBytes)
      return {
        ...base,
        snapshot: shown.text,
        changes: counts,
        ...(shown.cut === 0
          ? {}
          : {
              truncated: {
                totalBytes: Buffer.byteLength(changes.text),
                collapsed: 0,
                hiddenLines: changes.text.split("\n").length - shown.text.split("\n").length,
                how: `the changes are ${Buffer.byteLength(changes.text)} bytes; take a whole snapshot (without since), or raise maxBytes`
              },
              whole: changes.text
            })
      } satisfies SnapshotResult
    }
    return { ...base, ...budgeted(roots) } satisfies SnapshotResult
  })

  return { take }
}
