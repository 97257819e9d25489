/**
 * Whether a frame's document changed since a moment: a counter its own MutationObserver moves on every change of its
 * DOM (open shadow roots included), a fingerprint of its form controls' values and ticks (typing changes no DOM), with
 * the document's identity, scroll position and viewport. The same answer twice means the elements read between them
 * still name, place and show what the page shows (a change made by CSS alone, such as a `:hover` rule, is not seen).
 * Self-contained: Playwright serializes it into the frame.
 */

/** Runs in a frame: `id:count:scrollX:scrollY:width:height:values` for its document now, watching it from the first
 * call (the values last, so a caller that asks only whether names changed drops them). */
export const generation = () => {
  const key = Symbol.for("switchyard.generation")
  type Watch = {
    id: string
    n: number
    seen: number
    observer: MutationObserver
    roots: WeakSet<Node>
    list: Array<Document | ShadowRoot>
  }
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
      list: [],
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
    watch.list = roots
  }
  // What the form controls show, hashed (FNV-1a): their values and ticks are properties, not DOM.
  let hash = 0x811c9dc5
  const mix = (text: string) => {
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  }
  for (const root of watch.list) {
    for (const el of Array.from(root.querySelectorAll("input, select, textarea"))) {
      const field = el as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement
      mix(field.value)
      if (field instanceof HTMLInputElement) mix(`${field.checked ? 1 : 0}${field.indeterminate ? 1 : 0}`)
      if (field instanceof HTMLSelectElement)
        for (const option of Array.from(field.options)) mix(option.selected ? "1" : "0")
      mix("|")
    }
  }
  return `${watch.id}:${watch.n}:${scrollX}:${scrollY}:${innerWidth}:${innerHeight}:${(hash >>> 0).toString(36)}`
}
