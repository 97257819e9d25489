/**
 * The element one act works on, held for that act in the page's own world: each read or write on it is one round trip
 * to the page, where a locator finds the element again every time (about ten CDP messages each). An element the page
 * replaced meanwhile (no longer in the document) is reached through the locator instead, which finds its successor.
 * It is held without a Playwright element handle in that world, whose preview would first compile Playwright's injected
 * script there (a third of a megabyte per document; the snapshot compiled it already, in its own world): Playwright
 * marks the element a locator resolves to with a DOM event, `__playwright_mark_target__` (events reach every world;
 * its trace recorder reads them so), a listener of the page's world takes it, and a handle to a plain object holding
 * it keeps it for the act. Where no mark arrives, a Playwright element handle holds it as before. Where one document is
 * searched, the act's first read on the element takes it from the marking in the same round trip and keeps it in that
 * document's window under a key until the act releases it (no handle to take first: one round trip fewer per act);
 * only a first read that finds no single marked element takes it again the long way. That marking may go out before the
 * read, beside the count that tells a gone reference at once (`markNow`): two round trips in the time of one.
 */
import type { ElementHandle, Frame, JSHandle, Locator, Page } from "playwright-core"

export interface Held {
  readonly locator: Locator
  /** `f` run in the page on the element: the held one while it is in the document, else the one the locator finds. */
  readonly evaluate: <R, Arg>(f: (el: Element, arg: Arg) => R | Promise<R>, arg: Arg, timeout: number) => Promise<R>
  /** Lets the page drop the handle (not waited for). */
  readonly release: () => void
  /**
   * Sends the first read's marking now, where the element is to be taken without asking (one document searched): a
   * check sent right behind it (a count that tells a gone element at once) is answered in the same moment, and the
   * first read takes what it marked. Let go unused by `release`.
   */
  readonly markNow: (timeout: number) => void
}

/** What the listener keeps on the window (under a symbol, not enumerable): the targets of the last marking. */
interface Marks {
  batch: Array<Element>
}

/**
 * Runs in a frame: listens, once per window, for the elements Playwright marks as its call's targets (a reset, then one
 * mark per target). Self-contained: Playwright serializes it into the frame.
 */
export const listen = () => {
  const key = Symbol.for("switchyard.marks")
  const store = window as unknown as Record<symbol, Marks | undefined>
  if (store[key] !== undefined) return
  const marks: Marks = { batch: [] }
  Object.defineProperty(window, key, { value: marks, configurable: true })
  addEventListener("__playwright_reset_targets__", () => (marks.batch = []), true)
  addEventListener(
    "__playwright_mark_target__",
    (event) => {
      // The element itself, inside open shadow roots too (the event is composed).
      const target = event.composedPath()[0]
      if (target instanceof Node && target.nodeType === Node.ELEMENT_NODE) marks.batch.push(target as Element)
    },
    true
  )
}

/** What `taken` answers, as a handle: the one element marked last, or why there is none. */
interface Taken {
  readonly listening: boolean
  readonly el?: Element
}

/** Runs in a frame: the element of the last marking when it marked exactly one; the marks are emptied. */
const taken = (): Taken => {
  const marks = (window as unknown as Record<symbol, Marks | undefined>)[Symbol.for("switchyard.marks")]
  if (marks === undefined) return { listening: false }
  const batch = marks.batch
  marks.batch = []
  return batch.length === 1 ? { listening: true, el: batch[0]! } : { listening: true }
}

/** Runs in a frame: forgets marks left by earlier calls (a frame other than the marked one keeps its own). */
const forget = () => {
  const marks = (window as unknown as Record<symbol, Marks | undefined>)[Symbol.for("switchyard.marks")]
  if (marks !== undefined) marks.batch = []
}

type Wrapped = (
  held: Taken | Element,
  arg: unknown
) => Promise<{ readonly ok: false; readonly untaken?: true } | { readonly ok: true; readonly value: unknown }>

const wrappers = new WeakMap<object, Wrapped>()

/**
 * `f` as a page function on the held element (an object holding it, or a Playwright element handle's element) that
 * first checks the element is still in the document (`untaken`: the object holds none). Built here from `f`'s source (as Playwright serializes `f` itself), so the page runs no eval
 * of its own and a strict CSP does not stop it.
 */
const onlyConnected = (f: object): Wrapped => {
  let wrapped = wrappers.get(f)
  if (wrapped === undefined) {
    wrapped = new Function(
      "held",
      "arg",
      `const el = held instanceof Node ? held : held.el; if (!el) return { ok: false, untaken: true }; if (!el.isConnected) return { ok: false }; return Promise.resolve((${String(f)})(el, arg)).then((value) => ({ ok: true, value }))`
    ) as Wrapped
    wrappers.set(f, wrapped)
  }
  return wrapped
}

/** Keys of the elements holds took in their first use, kept in their frame's window until released. */
let keys = 0

type Kept = { readonly ok: false; readonly untaken?: true } | { readonly ok: true; readonly value: unknown }
const keptWrappers = new WeakMap<
  object,
  { first?: (held: unknown) => Promise<Kept>; later?: (held: unknown) => Promise<Kept> }
>()

/**
 * `f` as a page function on the element kept under `held.key` in the frame's window; `first`: the element of the last
 * marking is taken and kept there first (`untaken` when there is not one). As `onlyConnected`, built from sources.
 */
const onKept = (f: object, first: boolean): ((held: unknown) => Promise<Kept>) => {
  const cached = keptWrappers.get(f) ?? {}
  keptWrappers.set(f, cached)
  const which = first ? "first" : "later"
  cached[which] ??= new Function(
    "held",
    `const key = Symbol.for("switchyard.kept");
    if (window[key] === undefined) Object.defineProperty(window, key, { value: new Map(), configurable: true });
    let el;
    if (${first}) { el = (${taken})().el; if (!el) return { ok: false, untaken: true }; window[key].set(held.key, el) }
    else el = window[key].get(held.key);
    if (!el || !el.isConnected) return { ok: false };
    return Promise.resolve((${String(f)})(el, held.arg)).then((value) => ({ ok: true, value }))`
  ) as (held: unknown) => Promise<Kept>
  return cached[which]!
}

/** Runs in a frame: lets go of the element kept under `key`. */
const forgetKept = (key: number) => {
  ;(window as unknown as Record<symbol, Map<number, Element> | undefined>)[Symbol.for("switchyard.kept")]?.delete(key)
}

/** The frame whose document a locator made by `located` searches; a selector that may enter a frame has none. */
const frameOf = new WeakMap<Locator, Frame>()

/** A locator for `selector` in `frame`, whose element `hold` looks for in that frame alone when the selector stays
 * in it (a reference into a frame, `f2e5`, or a selector through one may reach another). */
export const located = (frame: Frame, selector: string): Locator => placed(frame, frame.locator(selector), selector)

/** `locator`, built on `frame` from `selector`, registered as `located` registers its own. */
export const placed = (frame: Frame, locator: Locator, selector: string): Locator => {
  if (!/^aria-ref=f\d|>>|internal:control=enter-frame/.test(selector)) frameOf.set(locator, frame)
  return locator
}

/**
 * Marking and taking are one step per page: a mark another hold made in between would be taken for this one's. A
 * step that does not end (a page that stopped answering) holds the next one up for `waitMs` at most.
 */
const queues = new WeakMap<Page, Promise<unknown>>()
const inTurn = <A>(page: Page, waitMs: number, f: () => Promise<A>): Promise<A> => {
  const before = queues.get(page) ?? Promise.resolve()
  let timer: ReturnType<typeof setTimeout> | undefined
  const turn = Promise.race([before, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]).finally(() =>
    clearTimeout(timer)
  )
  const run = turn.then(f, f)
  queues.set(
    page,
    run.catch(() => undefined)
  )
  return run
}

/** How long the marking read waits for the element to be there (a missing one is then waited for by the locator). */
const markWaitMs = 2_000

/** Marks the one element `locator` names (Playwright's attribute read of any attribute marks it); false when none. */
const mark = (locator: Locator, timeout: number) =>
  locator.getAttribute("id", { timeout: Math.min(timeout, markWaitMs) }).then(
    () => true,
    () => false
  )

/**
 * A marking sent ahead of the read that takes its element, in the page's turn; the turn is held until that read
 * (`done`), for `markWaitMs` at most once marked, so that no other marking comes in between. `done` before the mark
 * answers (the element is not there) lets the turn go at once.
 */
const markAhead = (locator: Locator, timeout: number) => {
  const page = locator.page()
  let done = () => {}
  const finished = new Promise<false>((resolve) => (done = () => resolve(false)))
  const marked = inTurn(page, timeout, () => Promise.race([mark(locator, timeout), finished])).catch(() => false)
  queues.set(
    page,
    marked.then((ok) => (ok ? within(markWaitMs, finished) : undefined))
  )
  return { marked, done }
}

/** `promise`, or undefined after `ms`. */
const within = <A>(ms: number, promise: Promise<A>): Promise<A | undefined> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))
  ]).finally(() => clearTimeout(timer))
}

/** The one frame whose document `locator` searches, when it is known to search one. */
const soleFrame = (locator: Locator): Frame | undefined => {
  const frames = locator.page().frames()
  return frameOf.get(locator) ?? (frames.length === 1 ? frames[0] : undefined)
}

/**
 * The element `locator` names, taken the long way: as a handle to a plain object holding it in its frame's world, each
 * frame searched asked which holds the mark; undefined when it names none (or several) yet, "unmarked" when it names
 * one but no mark arrived. Playwright's attribute read (of any attribute: the read is what marks) marks the one
 * element it resolves to.
 */
const taking = async (locator: Locator, timeout: number): Promise<JSHandle<Taken> | "unmarked" | undefined> => {
  const page = locator.page()
  const known = frameOf.get(locator)
  const frames = known === undefined ? page.frames() : [known]
  const attempt = async (): Promise<JSHandle<Taken> | "deaf" | "unmarked" | undefined> => {
    if (frames.length > 1) await Promise.all(frames.map((f) => f.evaluate(forget).catch(() => undefined)))
    if (!(await mark(locator, timeout))) return undefined
    const found = await Promise.all(
      frames.map(async (f) => {
        const handle = await f.evaluateHandle(taken).catch(() => undefined)
        const state = await handle?.evaluate((t) => (t.el !== undefined ? "one" : t.listening ? "none" : "deaf"))
        return { handle, state: state ?? "none" }
      })
    )
    const ones = found.filter((x) => x.state === "one")
    for (const x of found) if (ones.length !== 1 || x !== ones[0]) void x.handle?.dispose().catch(() => undefined)
    if (ones.length === 1) return ones[0]!.handle
    return found.some((x) => x.state === "deaf") ? "deaf" : "unmarked"
  }
  const first = await attempt()
  if (first !== "deaf") return first
  // A document loaded since the last read listens from now on.
  await Promise.all(frames.map((f) => f.evaluate(listen).catch(() => undefined)))
  const second = await attempt()
  return second === "deaf" ? "unmarked" : second
}

/** Holds the element `locator` names; it is taken on the first evaluate (one element, attached). */
export const hold = (locator: Locator): Held => {
  let handle:
    | Promise<JSHandle<Taken> | ElementHandle | { readonly frame: Frame; readonly key: number } | undefined>
    | undefined
  // From the first read that found no single marked element, or an element replaced: taken the long way.
  let asking = false
  /** The first read's marking, sent ahead (`markNow`). */
  let ahead: ReturnType<typeof markAhead> | undefined
  const take = (timeout: number) => {
    handle ??= inTurn(locator.page(), timeout, () => taking(locator, timeout))
      .then((h): Promise<JSHandle<Taken> | ElementHandle> | JSHandle<Taken> | undefined =>
        h === "unmarked" ? locator.elementHandle({ timeout }) : h
      )
      .then(
        (h) => h ?? undefined,
        () => undefined
      )
    return handle
  }
  const release = () => {
    ahead?.done()
    ahead = undefined
    void handle
      ?.then((h) => (h === undefined ? undefined : "key" in h ? h.frame.evaluate(forgetKept, h.key) : h.dispose()))
      .catch(() => undefined)
  }
  const judged = (result: Kept) =>
    result.ok
      ? result
      : result.untaken === true && !asking
        ? ({ ok: false, replaced: false, untaken: true } as const)
        : ({ ok: false, replaced: true } as const)
  /** `f` on the held element; not ok when none is held, it left the document (`replaced`) or its page went. */
  const onHeld = async (f: object, arg: unknown, timeout: number) => {
    const frame = handle === undefined && !asking ? soleFrame(locator) : undefined
    if (frame !== undefined) {
      // Taken without asking in one document: marked, then taken and kept there by `f`'s own call, one round trip.
      const key = ++keys
      let first: Kept | undefined
      const take = async () => {
        first = await frame.evaluate(onKept(f, true), { key, arg }).catch(() => undefined)
        return { frame, key }
      }
      const sent = ahead
      ahead = undefined
      handle = (
        sent === undefined
          ? inTurn(locator.page(), timeout, async () => ((await mark(locator, timeout)) ? take() : undefined))
          : sent.marked.then((ok) => (ok ? take() : undefined)).finally(sent.done)
      ).catch(() => undefined)
      if ((await handle) === undefined || first === undefined) return { ok: false, replaced: false } as const
      return judged(first)
    }
    const h = await take(timeout)
    if (h === undefined) return { ok: false, replaced: false } as const
    const ran =
      "key" in h
        ? h.frame.evaluate(onKept(f, false), { key: h.key, arg })
        : (h as JSHandle<Taken | Element>).evaluate(onlyConnected(f), arg)
    return ran.then(judged).catch(() => ({ ok: false, replaced: false }) as const)
  }
  /** The handle let go and the element taken again the long way (every frame asked), then `f` on it. */
  const again = (f: object, arg: unknown, timeout: number) => {
    release()
    handle = undefined
    asking = true
    return onHeld(f, arg, timeout)
  }
  return {
    locator,
    evaluate: async (f, arg, timeout) => {
      let result = await onHeld(f, arg, timeout)
      // The marking taken without asking held no element (none, several, or a document not listening yet): the long
      // way tells these apart.
      if (!result.ok && "untaken" in result) result = await again(f, arg, timeout)
      // The element the locator names now is held instead, if it names one.
      if (!result.ok && result.replaced) result = await again(f, arg, timeout)
      if (result.ok) return result.value as Awaited<ReturnType<typeof f>>
      return locator.evaluate(f as (el: Element, arg: unknown) => unknown, arg as unknown, { timeout }) as Promise<
        Awaited<ReturnType<typeof f>>
      >
    },
    release,
    markNow: (timeout) => {
      if (handle === undefined && !asking && ahead === undefined && soleFrame(locator) !== undefined)
        ahead = markAhead(locator, timeout)
    }
  }
}
