/**
 * Waiting like a person after an action: when it started a navigation (a link, a form, a script assigning
 * `location`, redirects after it) or a client-side route change (`pushState`), the answer waits, bounded, until the
 * new page has loaded or the route's content stopped changing, and says where the page is now.
 */
import type { Frame, Page, Request } from "playwright-core"

export interface Settled {
  /** The page's URL and title after the action, when the action moved the page (new document or new route). */
  readonly navigated?: { readonly url: string; readonly title: string }
  /** The URL the action's navigation is still waiting on (the site has not answered it yet). */
  readonly pending?: string
}

export interface SettleOptions {
  /** How long after the action a navigation may still start and count as caused by it. */
  readonly graceMs: number
  /** Bound on waiting for the new page to load or the route to settle. */
  readonly timeoutMs: number
}

/**
 * What an act that ran in the page itself saw there (`Select.ts`'s choice): whether it started a navigation or a route
 * change, read with the Navigation API's `navigate` event, after the work its handlers deferred a moment had run.
 */
export interface Seen {
  readonly navigating: boolean
}

/** How long a navigation the page said it started may take to be reported by the network. */
const announcedMs = 2_000

/** Runs in the page: resolves once the DOM has not changed for `quietMs`, or after `maxMs`. */
const domQuiet = ({ quietMs, maxMs }: { quietMs: number; maxMs: number }) =>
  new Promise<void>((resolve) => {
    let timer = setTimeout(done, quietMs)
    const cap = setTimeout(done, maxMs)
    const observer = new MutationObserver(() => {
      clearTimeout(timer)
      timer = setTimeout(done, quietMs)
    })
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true })
    function done() {
      observer.disconnect()
      clearTimeout(timer)
      clearTimeout(cap)
      resolve()
    }
  })

/** The page's URL, read in the page; undefined when the page cannot answer soon (a dialog holds it, it is going away). */
const hrefOf = (page: Page) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  let onDialog = () => {}
  const held = new Promise<undefined>((resolve) => {
    onDialog = () => resolve(undefined)
    timer = setTimeout(onDialog, 2_000)
    page.once("dialog", onDialog)
  })
  const read = page.evaluate(() => location.href).catch(() => undefined)
  return Promise.race([read, held]).finally(() => {
    clearTimeout(timer)
    page.off("dialog", onDialog)
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** By name: playwright-core is loaded with the first connection, not with this module. */
const isTimeout = (error: unknown) => error instanceof Error && error.name === "TimeoutError"

/** When an act on each page last ended: what it did (a field filled) may still be changing the page. */
const actedAt = new WeakMap<Page, number>()

/** Whether an act on `page` ended less than `ms` ago (a form may still be enabling its button after it). */
export const actedWithin = (page: Page, ms: number) => Date.now() - (actedAt.get(page) ?? Number.NEGATIVE_INFINITY) < ms

/**
 * Runs `action` and waits for what it started to settle; a failed action fails as it did. `seen`: what the action's
 * result says the page saw; a page that saw nothing start is not waited on for the grace, only for the requests
 * the network already reported.
 */
export const around = async <A>(
  page: Page,
  action: () => Promise<A>,
  options: SettleOptions,
  seen?: (result: A) => Seen | undefined
): Promise<{ readonly result: A } & Settled> => {
  const main = page.mainFrame()
  const before = page.url()
  let requested: Request | undefined
  let committed = false
  // Data the action asked for (fetch, XHR) is awaited too: a route renders once its data arrives.
  const pending = new Set<Request>()
  let asked = 0
  const onRequest = (request: Request) => {
    if (request.isNavigationRequest() && request.frame() === main) requested = request
    else if (["fetch", "xhr"].includes(request.resourceType())) {
      pending.add(request)
      asked++
    }
  }
  // A navigation that failed (or turned into a download) before the action returned is not waited for again.
  let failed: Request | undefined
  const onDone = (request: Request) => void pending.delete(request)
  const onFailed = (request: Request) => {
    if (request === requested) failed = request
    onDone(request)
  }
  const onNavigated = (frame: Frame) => {
    if (frame === main) committed = true
  }
  page.on("request", onRequest)
  page.on("requestfinished", onDone)
  page.on("requestfailed", onFailed)
  page.on("framenavigated", onNavigated)
  try {
    let result: A
    try {
      result = await action()
    } catch (error) {
      // Playwright's click waits for the navigation it started to commit: a slow site (a form post answered after
      // 25 s) ends that wait with a timeout although the click went. That is the navigation still pending, not a
      // failed click (which must not be repeated).
      const started = requested
      if (started === undefined || committed || failed === started || !isTimeout(error)) throw error
      return { result: undefined as A, pending: started.url() }
    }
    const deadline = Date.now() + options.timeoutMs
    // The page's own word: nothing started (its data requests, sent before its answer, were reported before it), or a
    // navigation the network is about to report.
    const told = seen?.(result)
    if (told !== undefined && !told.navigating && requested === undefined && !committed && pending.size === 0)
      return { result }
    const graceMs = told?.navigating === true ? Math.max(options.graceMs, announcedMs) : options.graceMs
    if (requested === undefined && !committed && graceMs > 0) {
      const graceEnd = Date.now() + graceMs
      while (Date.now() < graceEnd && requested === undefined && !committed && pending.size === 0) await sleep(10)
    }
    // A busy browser may report what the action started (a pushState, its data request) only after the grace. A round
    // trip to the page comes back after those reports, and the page's own URL says whether its route changed.
    if (requested === undefined && !committed && pending.size === 0 && graceMs > 0) {
      const href = await hrefOf(page)
      if (href !== undefined && href !== before) committed = true
    }
    if (requested === undefined && !committed) {
      if (pending.size === 0) return { result }
      // No navigation, but the page is fetching what the action asked for (a save, a search): wait for it.
      const dataEnd = Math.min(deadline, Date.now() + 5_000)
      while (pending.size > 0 && Date.now() < dataEnd) await sleep(20)
      await page.evaluate(domQuiet, { quietMs: 100, maxMs: 1_000 }).catch(() => undefined)
      // A busy machine may report the route change (pushState) after the data the route asked for: still a move.
      if (requested === undefined && !committed) return { result }
    }
    // A document navigation: wait for its commit (it may still fail or turn into a download), then its load.
    if (requested !== undefined) {
      const pending = requested
      if (!committed && failed !== pending) {
        const timeout = Math.max(1, deadline - Date.now())
        await Promise.race([
          page.waitForEvent("framenavigated", { predicate: (f) => f === main, timeout }),
          page.waitForEvent("requestfailed", { predicate: (r) => r === pending, timeout })
        ]).catch(() => undefined)
      }
      // The site has not answered yet (a slow form post): the page cannot be read until it does, and the click is
      // done. The answer goes now; the page keeps waiting for the site, and later calls see where it lands.
      if (!committed && failed !== pending) return { result, pending: pending.url() }
      await page.waitForLoadState("load", { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined)
    }
    // The new page or route renders once its data arrives; a request reported only while the DOM was quiet (a busy
    // machine reports it late) is waited for too, within the same bound — once: a page that polls asks again forever.
    const dataEnd = Math.min(deadline, Date.now() + 5_000)
    for (let pass = 0; pass < 2; pass++) {
      while (pending.size > 0 && Date.now() < dataEnd) await sleep(20)
      const seen = asked
      const left = Math.max(0, deadline - Date.now())
      await page.evaluate(domQuiet, { quietMs: 150, maxMs: Math.min(2_000, left) }).catch(() => undefined)
      if ((asked === seen && pending.size === 0) || Date.now() >= dataEnd) break
    }
    const url = page.url()
    const title = await page.title().catch(() => "")
    return committed || url !== before ? { result, navigated: { url, title } } : { result }
  } finally {
    actedAt.set(page, Date.now())
    page.off("request", onRequest)
    page.off("requestfinished", onDone)
    page.off("requestfailed", onFailed)
    page.off("framenavigated", onNavigated)
  }
}
