/**
 * The references a page's reads handed out, with the element each named when last read: an act on one checks it was
 * handed out and follows it if the page re-rendered it. Bounded, as a long session reads many pages.
 */
import type { Element as PageElement } from "../../AccessibilityTree.ts"

/** References kept from reads before the last (whose own are all kept): an agent acts on what it read recently. */
export const keptEarlier = 1_000

export interface HandedOut {
  readonly get: (ref: string) => PageElement | undefined
  readonly has: (ref: string) => boolean
  /** A read's elements: the newest, and the oldest of the earlier ones dropped past `earlier`. */
  readonly add: (elements: ReadonlyArray<PageElement>) => void
}

export const make = (earlier: number = keptEarlier): HandedOut => {
  // Insertion order is recency: a reference read again moves to the end, so a page's own are never the oldest.
  const held = new Map<string, PageElement>()
  return {
    get: (ref) => held.get(ref),
    has: (ref) => held.has(ref),
    add: (elements) => {
      for (const e of elements) {
        held.delete(e.ref)
        held.set(e.ref, e)
      }
      const limit = new Set(elements.map((e) => e.ref)).size + earlier
      for (const ref of held.keys()) {
        if (held.size <= limit) break
        held.delete(ref)
      }
    }
  }
}
