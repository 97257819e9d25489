/**
 * Which of the page's elements a selector or reference names, as the element model names it (role, the name a person
 * reads, what it sits in): how the replay level learns what another level acted on. A reference this engine handed
 * out is the element it described when it acted; an XPath or CSS selector (Stagehand's acts) is found on the page as
 * it is now and matched to the element that is it, holds it, or is the control its label names.
 */
import { Effect, Option } from "effect"
import type { ElementHandle } from "playwright-core"
import { isInteractive, type Element as PageElement } from "../AccessibilityTree.ts"
import { toSelector } from "./Actions.ts"
import * as Elements from "./Elements.ts"
import { attempt } from "./Errors.ts"
import type { SessionPage } from "./Page.ts"

interface Box {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width + 1 && b.x < a.x + a.width + 1 && a.y < b.y + b.height + 1 && b.y < a.y + a.height + 1

const area = (e: PageElement) => (e.box === undefined ? Number.POSITIVE_INFINITY : e.box.width * e.box.height)

/** Elements tried for a node: those where it is on screen first, then every other one (a hidden input's box is
 * empty), smallest first so a control wins over the card around it. At most this many are asked. */
const maxAsked = 300

/**
 * The one element a plain XPath (`/html/body/wd-text-field[1]//input[1]`, `/` and `//` steps with a tag and an
 * optional position) names in the composed tree, where an open shadow root's children are its host's; null when it
 * names none or several. Runs in the page.
 */
const composedXPath = (xpath: string): Element | null => {
  const steps = [...xpath.matchAll(/(\/\/?)([A-Za-z*][\w.:-]*)(?:\[(\d+)\])?/g)].map((m) => ({
    deep: m[1] === "//",
    tag: m[2]!.toLowerCase(),
    at: m[3] === undefined ? undefined : Number(m[3])
  }))
  if (
    steps.length === 0 ||
    steps.map((s) => `${s.deep ? "//" : "/"}${s.tag}${s.at === undefined ? "" : `[${s.at}]`}`).join("") !==
      xpath.toLowerCase()
  )
    return null
  const children = (node: Document | Element): ReadonlyArray<Element> => [
    ...Array.from(node.children),
    ...("shadowRoot" in node && node.shadowRoot !== null ? Array.from(node.shadowRoot.children) : [])
  ]
  const descendants = (node: Document | Element): ReadonlyArray<Element> =>
    children(node).flatMap((child) => [child, ...descendants(child)])
  let current: ReadonlyArray<Document | Element> = [document]
  for (const step of steps) {
    const next = new Set<Element>()
    for (const node of current) {
      const matching = (step.deep ? descendants(node) : children(node)).filter(
        (e) => step.tag === "*" || e.localName === step.tag
      )
      const chosen = step.at === undefined ? matching : matching.slice(step.at - 1, step.at)
      for (const e of chosen) next.add(e)
    }
    current = [...next]
    if (current.length === 0) return null
  }
  return current.length === 1 ? (current[0] as Element) : null
}

export const identify = (sp: SessionPage, selector: string): Effect.Effect<Option.Option<PageElement>, never> =>
  Effect.gen(function* () {
    const label = `identify ${selector}`
    const ref = Elements.refOf(selector)
    if (ref !== undefined) return Option.fromNullishOr(sp.elements.described(ref))
    const locator = sp.page.locator(toSelector(selector))
    const count = yield* attempt(sp.at(label), () => locator.count())
    // An XPath through open shadow roots (as Stagehand writes one) names nothing to the browser's XPath: it is walked
    // over the page as composed, shadow roots' children counted as their host's.
    const composed = count === 0 && toSelector(selector).startsWith("xpath=")
    if (count !== 1 && !composed) return Option.none<PageElement>()
    return yield* Effect.acquireUseRelease(
      composed
        ? attempt(sp.at(label), () =>
            sp.page
              .evaluateHandle(composedXPath, toSelector(selector).slice("xpath=".length))
              .then((h): ElementHandle | null => h.asElement())
          )
        : attempt(sp.at(label), (): Promise<ElementHandle | null> => locator.elementHandle({ timeout: 3_000 })),
      (handle) =>
        handle === null
          ? Effect.succeed(Option.none<PageElement>())
          : Effect.gen(function* () {
              const [elements, box] = yield* Effect.all(
                [
                  attempt(sp.at(label), () => sp.elements.read(sp.limits.actionTimeoutMs)),
                  attempt(sp.at(label), () => handle.boundingBox())
                ],
                { concurrency: 2 }
              )
              const mainFrame = elements.filter((e) => e.frame === undefined)
              const near = box === null ? [] : mainFrame.filter((e) => e.box !== undefined && overlaps(e.box, box))
              const rest = mainFrame.filter((e) => !near.includes(e))
              const byArea = (a: PageElement, b: PageElement) => area(a) - area(b)
              const ordered = [
                ...near.sort(byArea),
                ...rest.filter(isInteractive).sort(byArea),
                ...rest.filter((e) => !isInteractive(e))
              ].slice(0, maxAsked)
              for (const element of ordered) {
                const at = sp.elements.locate(element.ref)
                if (at === undefined) continue
                // A control holds what was clicked in it (a button's text); other elements count only as themselves.
                const holds = isInteractive(element)
                const same = yield* attempt(sp.at(label), () =>
                  at
                    .evaluate(
                      (el, [node, holds]) =>
                        el === node ||
                        (holds &&
                          (el.contains(node) ||
                            (node instanceof HTMLLabelElement && node.control === el) ||
                            (el instanceof HTMLInputElement &&
                              Array.from(el.labels ?? []).some((l) => l.contains(node))))),
                      [handle, holds] as const,
                      // A busy machine answers slowly: a slow answer is not a different element.
                      { timeout: 3_000 }
                    )
                    .catch(() => false)
                )
                if (same) return Option.some(element)
              }
              return Option.none<PageElement>()
            }),
      (handle) => Effect.promise(() => handle?.dispose().catch(() => undefined) ?? Promise.resolve())
    )
  }).pipe(Effect.orElseSucceed(() => Option.none<PageElement>()))
