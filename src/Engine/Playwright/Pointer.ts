/**
 * Pointer and keyboard the way a person uses them: the mouse travels to a target in steps where hover matters (so
 * hover menus and autocomplete lists see it arrive, and pick what was asked, not a neighbour) and rests on a hovered
 * target; elsewhere it goes straight to the point it clicks, as a click needs no path. Typing sends real key events
 * (keydown, input, keyup) that frameworks and search-as-you-type widgets listen to: Pointer/Keyboard.ts.
 */
import type { Page } from "playwright-core"
import type { Held } from "./Held.ts"
import { actedWithin } from "./Settle.ts"

export { fill, ready, slide, typeAtEnd } from "./Pointer/Keyboard.ts"

const where = new WeakMap<Page, { x: number; y: number }>()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How long the pointer rests on a hovered target: hover-intent menus open once the pointer stops. */
export const dwellMs = 250

/**
 * Runs in the page: where a person would point at the element. It is scrolled into view (to the middle of the view
 * when a sticky bar or banner covers it), then pointed at its centre; where something else covers the centre, at a
 * part of it that shows; a checkbox or radio drawn by its label (the input itself hidden or clipped, a styled box in
 * the label) through its own label's box, which is never a cover. Otherwise it names what covers it, and whether
 * that cover is animating (a picker fading out), with a signature of the cover's look to tell a scripted fade.
 */
const uncover = async (el: Element) => {
  /** Inside one of the input's own labels (a styled box, the label's text). */
  const inLabel = (hit: Element) =>
    el instanceof HTMLInputElement && Array.from(el.labels ?? []).some((l) => l === hit || l.contains(hit))
  const root = el.getRootNode() as Document | ShadowRoot
  const hitAt = (x: number, y: number) => root.elementFromPoint(x, y)
  const toggle =
    (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")) ||
    ["checkbox", "radio", "switch"].includes(el.getAttribute("role") ?? "")
  // The same rule as Verify.ts: a disabled control, or one inside a disabled group.
  const disabled = el.matches(":disabled") || el.closest('[aria-disabled="true"]') !== null
  /** Points of a box, in view, centre first then a grid from the top left. */
  const points = (r: DOMRect) => {
    const left = Math.max(r.left, 0)
    const right = Math.min(r.right, window.innerWidth)
    const top = Math.max(r.top, 0)
    const bottom = Math.min(r.bottom, window.innerHeight)
    if (right - left < 1 || bottom - top < 1) return []
    const out = [{ x: (left + right) / 2, y: (top + bottom) / 2 }]
    for (const fy of [0.5, 0.25, 0.75, 0.1, 0.9])
      for (const fx of [0.1, 0.25, 0.4, 0.6, 0.75, 0.9]) {
        out.push({ x: left + (right - left) * fx, y: top + (bottom - top) * fy })
      }
    return out
  }
  const at = (x: number, y: number, via: "centre" | "visible" | "label") => {
    const r = el.getBoundingClientRect()
    return { via, x, y, ox: x - r.left - el.clientLeft, oy: y - r.top - el.clientTop }
  }
  const label = toggle && el instanceof HTMLInputElement ? el.labels?.[0] : undefined
  /** A point of the label's box that is the label (its box, its text), away from links inside it. */
  const onLabel = (l: HTMLLabelElement) => {
    for (const p of points(l.getBoundingClientRect())) {
      const h = hitAt(p.x, p.y)
      if (h === null || !(h === l || l.contains(h))) continue
      const inner = h.closest("a, button, select, textarea, input")
      if (inner === null || inner === el || !l.contains(inner)) return at(p.x, p.y, "label")
    }
    return undefined
  }
  const point = () => {
    const r = el.getBoundingClientRect()
    const [centre, ...rest] = points(r)
    const hit = centre === undefined ? null : hitAt(centre.x, centre.y)
    if (centre !== undefined && (hit === null || hit === el || el.contains(hit)))
      return at(centre.x, centre.y, "centre")
    // A checkbox drawn by its label (the input hidden, clipped or under a styled box) is ticked through the label.
    if (label !== undefined) {
      const through = onLabel(label)
      if (through !== undefined) return through
    }
    if (centre !== undefined && hit !== null) {
      if (inLabel(hit)) return at(centre.x, centre.y, "label")
      if (hit.contains(el)) return at(centre.x, centre.y, "centre")
      for (const p of rest) {
        const h = hitAt(p.x, p.y)
        if (h !== null && (h === el || el.contains(h))) return at(p.x, p.y, "visible")
      }
    }
    if (r.width === 0 || r.height === 0) return null
    return undefined
  }
  const r = el.getBoundingClientRect()
  // Wholly in view, or the click would scroll it again (and a virtualized list re-render it) on its own.
  const inView = r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth
  const target = label ?? el
  if (!inView) target.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" })
  let found = point()
  let scrolled = !inView
  if (found === undefined) {
    target.scrollIntoView({ block: "center", inline: "center", behavior: "instant" })
    scrolled = true
    found = point()
  }
  /** Only in the page's own document do the element's coordinates place the mouse (a frame's are its own). */
  const top = window.parent === window
  // Where hover matters, the mouse travels to the target: in a dropdown open inside what the pointer hovers now (a
  // menu shown while its item is hovered), or in a menu, list or tree whose items react to the pointer passing over.
  const hovered = el.closest(":hover")
  let overlay = false
  if (hovered !== null && hovered !== document.body && hovered !== document.documentElement) {
    for (let node: Element | null = el; node !== null && node !== hovered; node = node.parentElement) {
      const position = getComputedStyle(node).position
      if (position === "absolute" || position === "fixed") overlay = true
    }
  }
  const hover =
    overlay ||
    el.closest(
      '[role=menu], [role=menubar], [role=menuitem], [role=listbox], [role=option], [role=tree], [role=treeitem], [role=tooltip], [aria-haspopup]:not([aria-haspopup="false"])'
    ) !== null
  /** The element's box the same over one frame (Playwright's own check before a click): a point still moving is not
   * where it will be. */
  const stable = async () => {
    let r = el.getBoundingClientRect()
    for (let i = 0; i < 10; i++) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50)
        requestAnimationFrame(() => {
          clearTimeout(timer)
          resolve()
        })
      })
      const now = el.getBoundingClientRect()
      if (now.x === r.x && now.y === r.y && now.width === r.width && now.height === r.height) return true
      r = now
    }
    return false
  }
  if (found === null)
    return { scrolled, point: found, toggle, disabled, cover: null, fading: false, look: "", top, hover, stable: false }
  if (found !== undefined) {
    const still = await stable()
    // Moved meanwhile: the point is read again where the element now is.
    const again = still ? found : (point() ?? found)
    return { scrolled, point: again, toggle, disabled, cover: null, fading: false, look: "", top, hover, stable: still }
  }
  const c = el.getBoundingClientRect()
  const hit = hitAt(c.left + c.width / 2, c.top + c.height / 2)
  const cover = hit ?? document.body
  const owner = cover.closest("[role=dialog], [role=alertdialog], dialog, [aria-modal=true]") ?? cover
  const name = owner.getAttribute("aria-label") ?? owner.textContent?.replace(/\s+/g, " ").trim().slice(0, 60) ?? ""
  // A cover on its way out: a running transition or animation on it or around it, or (read twice) a changing look.
  let fading = false
  let look = ""
  for (let node: Element | null = cover; node !== null; node = node.parentElement) {
    if (node.getAnimations().some((a) => a.playState === "running")) fading = true
    const style = getComputedStyle(node)
    look += `${style.opacity}/${style.transform}/${style.visibility};`
  }
  const box = cover.getBoundingClientRect()
  look += `${box.left},${box.top},${box.width},${box.height}`
  return {
    scrolled,
    point: null,
    toggle,
    disabled,
    cover: `${owner.getAttribute("role") ?? owner.localName}${name === "" ? "" : ` "${name}"`}`,
    fading,
    look,
    top,
    hover,
    stable: false
  }
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

/** The target is disabled: nothing a person does to it has an effect until the page enables it. */
export class Disabled extends Error {
  constructor(target = "the target") {
    super(`${target} is disabled`)
  }
}

/** How long a cover that is animating away (a picker fading out, a banner sliding off) is waited out. */
export const coverWaitMs = 2_000

/**
 * A disabled target right after an act (within `recentActMs`) may be one the page is enabling — a form checks a field
 * a moment after typing stops — so it is waited for up to `enablingWaitMs`; otherwise it is refused at once.
 */
export const recentActMs = 3_000
export const enablingWaitMs = 1_500

/** Runs in the page: resolves once the element is enabled (the rule of `uncover`), or after `ms`. */
const enabledWithin = (el: Element, ms: number) =>
  new Promise<void>((resolve) => {
    const enabled = () => !el.matches(":disabled") && el.closest('[aria-disabled="true"]') === null
    if (enabled()) return resolve()
    const observer = new MutationObserver(() => enabled() && done())
    const timer = setTimeout(done, ms)
    observer.observe(el.ownerDocument, {
      subtree: true,
      attributes: true,
      attributeFilter: ["disabled", "aria-disabled"]
    })
    function done() {
      observer.disconnect()
      clearTimeout(timer)
      resolve()
    }
  })

/** Where the pointer went: the element's centre, a part of it that shows, or its own label's box. */
export interface Aim {
  readonly via: "centre" | "visible" | "label"
  /** The point in the viewport. */
  readonly x: number
  readonly y: number
  /** The point relative to the element's padding box (Playwright's `position`). */
  readonly ox: number
  readonly oy: number
  /** A checkbox, radio or switch. */
  readonly toggle: boolean
  /** The point is in the page's own viewport (not a frame's) and the element held still over a frame: a click there
   * lands on the element. */
  readonly exact: boolean
}

/** Where the target is on the page: read on the held element in the page's top frame (no Playwright element handle
 * there, whose preview would load Playwright's script into the page's world), by Playwright in a frame. */
const boxOf = async (on: Held, timeout: number) => {
  const box = await on.evaluate(
    (el) => {
      if (window !== window.top) return null
      const r = el.getBoundingClientRect()
      return r.width === 0 && r.height === 0 ? undefined : { x: r.x, y: r.y, width: r.width, height: r.height }
    },
    undefined,
    timeout
  )
  return box === null ? on.locator.boundingBox({ timeout }) : (box ?? null)
}

/**
 * Scrolls the target into view (out from under sticky bars) and finds where a person would point at it (`uncover`);
 * where hover matters (`uncover` says where), the mouse moves there in steps, as a person's hand travels. A disabled
 * target fails with Disabled when `enabled` is asked for (right
 * after an act, once it has had `enablingWaitMs` to be enabled); a cover animating away is waited out (up to
 * `coverWaitMs`); one that stays fails with Covered. `travel` moves the mouse in steps whatever the target.
 */
export const approach = async (
  page: Page,
  on: Held,
  timeout: number,
  options: { readonly enabled?: boolean; readonly target?: string; readonly travel?: boolean } = {}
): Promise<Aim | undefined> => {
  const look = () => on.evaluate(uncover, undefined, timeout)
  let seen = await look()
  if (options.enabled === true && seen.disabled && actedWithin(page, recentActMs)) {
    await on.evaluate(enabledWithin, enablingWaitMs, enablingWaitMs + timeout)
    seen = await look()
  }
  if (options.enabled === true && seen.disabled) throw new Disabled(options.target)
  const deadline = Date.now() + coverWaitMs
  while (seen.cover !== null) {
    const before = seen
    await sleep(seen.fading ? 100 : 80)
    seen = await look()
    // A cover that neither animates nor changes its look is there to stay.
    const moving = before.fading || seen.fading || seen.look !== before.look
    if (seen.cover !== null && (!moving || Date.now() >= deadline)) throw new Covered(seen.cover)
  }
  if (seen.scrolled) {
    // Not on the held element: a replaced target would make it wait for one to come back.
    await page.evaluate(twoFrames).catch(() => undefined)
    if ((await on.locator.count()) === 0) throw new Detached()
  }
  const aim = seen.point === null ? undefined : { ...seen.point, toggle: seen.toggle, exact: seen.top && seen.stable }
  const box = aim === undefined ? await boxOf(on, timeout) : null
  if (aim === undefined && box === null) return undefined
  const to = aim ?? { x: box!.x + box!.width / 2, y: box!.y + box!.height / 2 }
  if (options.travel === true || seen.hover || aim?.exact !== true) {
    const from = where.get(page) ?? { x: 0, y: 0 }
    // Each step waits for the browser to take the event (about a frame), so a few steps keep a click quick.
    const steps = Math.min(6, Math.max(3, Math.round(Math.hypot(to.x - from.x, to.y - from.y) / 100)))
    await page.mouse.move(to.x, to.y, { steps })
  }
  where.set(page, { x: to.x, y: to.y })
  return aim
}

/** Clicks (or double-clicks) where `approach` aimed: the mouse itself at a point that lands on the element (a label's
 * box included: the input under it would fail Playwright's hit check), else Playwright's own click at the centre or
 * on the part that shows, which waits for the element to settle. */
export const click = async (page: Page, on: Held, aim: Aim | undefined, timeout: number, count: 1 | 2 = 1) => {
  if (aim?.exact === true || aim?.via === "label") {
    await (count === 2 ? page.mouse.dblclick(aim.x, aim.y) : page.mouse.click(aim.x, aim.y))
    return
  }
  const position = aim?.via === "visible" ? { position: { x: aim.ox, y: aim.oy } } : {}
  const { locator } = on
  await (count === 2 ? locator.dblclick({ timeout, ...position }) : locator.click({ timeout, ...position }))
}

export const hover = async (page: Page, on: Held, timeout: number) => {
  const aim = await approach(page, on, timeout, { travel: true })
  await on.locator.hover({ timeout, ...(aim?.via === "visible" ? { position: { x: aim.ox, y: aim.oy } } : {}) })
  await sleep(dwellMs)
}
