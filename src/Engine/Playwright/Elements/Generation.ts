/**
 * Whether a frame's document changed since a moment: a counter its own MutationObserver moves on every change of its
 * DOM (open shadow roots included), with the document's identity, scroll position and viewport. The same answer twice
 * means the elements read between them still name and place what the page shows (a change made by CSS alone, such
 * as a `:hover` rule, is not seen). Self-contained: Playwright serializes it into the frame.
 */

/** Runs in a frame: `id:count:scrollX:scrollY:width:height` for its document now, watching it from the first call. */
export const generation = () => {
  const key = Symbol.for("switchyard.generation")
  type Watch = { id: string; n: number; seen: number; observer: MutationObserver; roots: WeakSet<Node> }
  const store = window as unknown as Record<symbol, Watch | undefined>
  // What the service itself puts on the page is no change of the page: the screenshot mask's style element.
  const ours = (node: Node) => node instanceof Element && node.id === "switchyard-mask"
  const changes = (records: ReadonlyArray<MutationRecord>) =>
    records.some(
      (r) =>
        !(r.type === "childList" && [...r.addedNodes, ...r.removedNodes].every(ours)) &&
        !(r.type === "attributes" && r.attributeName === "data-switchyard-landed")
    )
  let watch = store[key]
  if (watch === undefined) {
    const made: Watch = {
      id: Math.random().toString(36).slice(2),
      n: 1,
      seen: 0,
      roots: new WeakSet(),
      observer: new MutationObserver((records) => {
        if (changes(records)) made.n++
      })
    }
    Object.defineProperty(window, key, { value: made, configurable: true })
    watch = made
  }
  // Changes not reported to the observer yet count now.
  if (changes(watch.observer.takeRecords())) watch.n++
  // Shadow roots the observer does not watch yet (new ones come with a change of the document around them).
  if (watch.seen !== watch.n) {
    watch.seen = watch.n
    const roots: Array<Document | ShadowRoot> = [document]
    for (let i = 0; i < roots.length; i++) {
      const root = roots[i]!
      if (!watch.roots.has(root)) {
        watch.roots.add(root)
        watch.observer.observe(root, { subtree: true, childList: true, attributes: true, characterData: true })
      }
      for (const el of Array.from(root.querySelectorAll("*"))) if (el.shadowRoot !== null) roots.push(el.shadowRoot)
    }
  }
  return `${watch.id}:${watch.n}:${scrollX}:${scrollY}:${innerWidth}:${innerHeight}`
}
