/**
 * Pointer and keyboard the way a person uses them: the mouse travels to a target in steps (so hover menus and
 * autocomplete lists see it arrive, and pick what was asked, not a neighbour) and rests on a hovered target; typing
 * sends real key events (keydown, input, keyup) that frameworks and search-as-you-type widgets listen to.
 */
import type { Locator, Page } from "playwright-core"

const where = new WeakMap<Page, { x: number; y: number }>()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How long the pointer rests on a hovered target: hover-intent menus open once the pointer stops. */
export const dwellMs = 250

/**
 * Runs in the page: whether something else (a sticky bar, a banner, a modal) covers the element's centre; if so the
 * element is scrolled to the middle of the view, as a person scrolls a button out from under a footer. Returns what
 * still covers it, or null, and whether it scrolled.
 */
const uncover = (el: Element) => {
  const coverAt = () => {
    const r = el.getBoundingClientRect()
    if (r.width === 0 || r.height === 0) return null
    const root = el.getRootNode() as Document | ShadowRoot
    const hit = root.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)
    if (hit === null || hit === el || el.contains(hit) || hit.contains(el)) return null
    if (hit instanceof HTMLLabelElement && hit.control === el) return null
    return hit
  }
  const r = el.getBoundingClientRect()
  // Wholly in view, or the click would scroll it again (and a virtualized list re-render it) on its own.
  const inView = r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth
  if (!inView) el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" })
  if (coverAt() === null) return { scrolled: !inView, cover: null }
  el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" })
  const cover = coverAt()
  if (cover === null) return { scrolled: true, cover: null }
  const owner = cover.closest("[role=dialog], [role=alertdialog], dialog, [aria-modal=true]") ?? cover
  const name = owner.getAttribute("aria-label") ?? owner.textContent?.replace(/\s+/g, " ").trim().slice(0, 60) ?? ""
  return { scrolled: true, cover: `${owner.getAttribute("role") ?? owner.localName}${name === "" ? "" : ` "${name}"`}` }
}

/** Runs in the page: resolves after the next two frames, when scroll handlers have re-rendered. */
const twoFrames = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))

/** The target was replaced while it was scrolled into view (a virtualized list re-renders its rows on scroll). */
export class Detached extends Error {
  constructor() {
    super("the target was re-rendered while it was scrolled into view")
  }
}

/** Something covers the target: a person would close or dismiss it first. */
export class Covered extends Error {
  readonly cover: string
  constructor(cover: string) {
    super(`the target is covered by ${cover}`)
    this.cover = cover
  }
}

/** Scrolls the target into view (out from under sticky bars) and moves the mouse to its centre in steps from where
 * it was; fails with Covered when something still covers it. */
export const approach = async (page: Page, locator: Locator, timeout: number) => {
  const { scrolled, cover } = await locator.evaluate(uncover, undefined, { timeout })
  if (cover !== null) throw new Covered(cover)
  if (scrolled) {
    // Not on the locator: a replaced target would make it wait for one to come back.
    await page.evaluate(twoFrames).catch(() => undefined)
    if ((await locator.count()) === 0) throw new Detached()
  }
  const box = await locator.boundingBox({ timeout })
  if (box === null) return
  const to = { x: box.x + box.width / 2, y: box.y + box.height / 2 }
  const from = where.get(page) ?? { x: 0, y: 0 }
  // Each step waits for the browser to take the event (about a frame), so a few steps keep a click quick.
  const steps = Math.min(6, Math.max(3, Math.round(Math.hypot(to.x - from.x, to.y - from.y) / 100)))
  await page.mouse.move(to.x, to.y, { steps })
  where.set(page, to)
}

/** Remembers where a Playwright action left the mouse (the centre of its target). */
export const arrived = async (page: Page, locator: Locator) => {
  const box = await locator.boundingBox({ timeout: 1_000 }).catch(() => null)
  if (box !== null) where.set(page, { x: box.x + box.width / 2, y: box.y + box.height / 2 })
}

export const hover = async (page: Page, locator: Locator, timeout: number) => {
  await approach(page, locator, timeout)
  await locator.hover({ timeout })
  await sleep(dwellMs)
}

/** Inputs whose value is picked, not typed: `fill` sets them as their pickers do. */
const picked = ["date", "time", "datetime-local", "month", "week", "color", "range", "file", "select", "other"]
/** Runs in the page: what kind of field this is. */
const kindOf = (el: Element) =>
  el instanceof HTMLInputElement
    ? el.type
    : el instanceof HTMLTextAreaElement
      ? "textarea"
      : el instanceof HTMLSelectElement
        ? "select"
        : (el as HTMLElement).isContentEditable
          ? "contenteditable"
          : "other"

/**
 * Replaces a field's text the way a person's typing ends: the text but its last character at once, then that
 * character as real key events (keydown, input, keyup), which search-as-you-type widgets and key-bound form state
 * react to with the whole value in place. Typing every character costs a round trip each (a 15-character address
 * took about 150 ms) and gives those listeners nothing more.
 */
export const fill = async (locator: Locator, value: string, timeout: number) => {
  const kind = await locator.evaluate(kindOf, undefined, { timeout })
  if (picked.includes(kind)) return locator.fill(value, { timeout })
  await locator.fill(value.slice(0, -1), { timeout })
  // fill left the focus on the field: the last key goes straight to it.
  if (value !== "") await locator.page().keyboard.type(value.slice(-1))
}
