/**
 * Which of the page's elements a selector or reference names, as the element model names it (role, the name a person
 * reads, what it sits in): how the replay level learns what another level acted on. A reference this engine handed
 * out is the element it described when it acted; an XPath or CSS selector (Stagehand's acts) is found on the page as
 * it is now and matched to the element that is it, holds it, or is the control its label names.
 */
import { Effect, Option } from "effect"
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

export const identify = (sp: SessionPage, selector: string): Effect.Effect<Option.Option<PageElement>, never> =>
  Effect.gen(function* () {
    const label = `identify ${selector}`
    const ref = Elements.refOf(selector)
    if (ref !== undefined) return Option.fromNullishOr(sp.elements.described(ref))
    const locator = sp.page.locator(toSelector(selector))
    if ((yield* attempt(sp.at(label), () => locator.count())) !== 1) return Option.none<PageElement>()
    return yield* Effect.acquireUseRelease(
      attempt(sp.at(label), () => locator.elementHandle({ timeout: 3_000 })),
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
