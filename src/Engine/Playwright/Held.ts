/**
 * The element one act works on, held for that act as a handle in the page's own world: each read or write on it is
 * one round trip to the page, where a locator finds the element again every time (about ten CDP messages each). An
 * element the page replaced meanwhile (no longer in the document) is reached through the locator instead, which finds
 * its successor the way it always did.
 */
import type { ElementHandle, Frame, Locator } from "playwright-core"

export interface Held {
  readonly locator: Locator
  /** `f` run in the page on the element: the held one while it is in the document, else the one the locator finds. */
  readonly evaluate: <R, Arg>(f: (el: Element, arg: Arg) => R | Promise<R>, arg: Arg, timeout: number) => Promise<R>
  /** Lets the page drop the handle (not waited for). */
  readonly release: () => void
}

type Wrapped = (
  el: Element,
  arg: unknown
) => Promise<{ readonly ok: false } | { readonly ok: true; readonly value: unknown }>

const wrappers = new WeakMap<object, Wrapped>()

/**
 * `f` as a page function that first checks the element is still in the document. Built here from `f`'s source (as
 * Playwright serializes `f` itself), so the page runs no eval of its own and a strict CSP does not stop it.
 */
const onlyConnected = (f: object): Wrapped => {
  let wrapped = wrappers.get(f)
  if (wrapped === undefined) {
    wrapped = new Function(
      "el",
      "arg",
      `if (!el.isConnected) return { ok: false }; return Promise.resolve((${String(f)})(el, arg)).then((value) => ({ ok: true, value }))`
    ) as Wrapped
    wrappers.set(f, wrapped)
  }
  return wrapped
}

/** Locators made by `located`: a frame and a selector, whose element a plain query finds (six CDP messages, where a
 * locator's handle costs nine: it waits and checks more, which the locator itself still does when needed). */
const plain = new WeakMap<Locator, { readonly frame: Frame; readonly selector: string }>()

/** A locator for `selector` in `frame` whose element `hold` takes with one query. */
export const located = (frame: Frame, selector: string): Locator => {
  const locator = frame.locator(selector)
  plain.set(locator, { frame, selector })
  return locator
}

/** Holds the element `locator` names; the handle is taken on the first evaluate (one element, attached). */
export const hold = (locator: Locator): Held => {
  let handle: Promise<ElementHandle | undefined> | undefined
  let dropped = false
  const take = (timeout: number) => {
    const query = plain.get(locator)
    handle ??= (
      query === undefined ? locator.elementHandle({ timeout }) : query.frame.$(query.selector, { strict: true })
    ).then(
      (h) => h ?? undefined,
      () => undefined
    )
    return handle
  }
  const viaLocator = <R, Arg>(f: (el: Element, arg: Arg) => R | Promise<R>, arg: Arg, timeout: number) =>
    locator.evaluate(f as (el: Element, arg: unknown) => R, arg as unknown, { timeout }) as Promise<R>
  return {
    locator,
    evaluate: async (f, arg, timeout) => {
      const h = dropped ? undefined : await take(timeout)
      if (h === undefined) return viaLocator(f, arg, timeout)
      // A handle whose page went (a navigation, a closed frame) is no use: the locator says what happened.
      const result = await h.evaluate(onlyConnected(f), arg as unknown).catch(() => ({ ok: false }) as const)
      if (result.ok) return result.value as Awaited<ReturnType<typeof f>>
      dropped = true
      return viaLocator(f, arg, timeout)
    },
    release: () => {
      void handle?.then((h) => h?.dispose()).catch(() => undefined)
    }
  }
}
