/**
 * Concrete Actions (`{selector, method, arguments, description}`, Stagehand's observe-result shape) run on the
 * session's page: the methods the engine knows, how each reads in a log, and running one on exactly one element —
 * named by a selector or by a reference from observe/extract (`e12`, `aria-ref=e12`) — with the pointer and
 * keyboard of a person (Pointer.ts), waiting for what the action started to settle (Settle.ts).
 */
import { Effect } from "effect"
import type { Locator } from "playwright-core"
import { Unsupported } from "../../Errors/Engine.ts"
import { AmbiguousTarget, ElementNotFound, type ElementRef, InvalidInput } from "../../Errors/Page.ts"
import * as Secrets from "../../Logging/Secrets.ts"
import * as AccessibilityTree from "../AccessibilityTree.ts"
import type { Action, ActResult, ActTarget } from "../Engine.ts"
import * as PageFacts from "../PageFacts.ts"
import * as Controls from "./Controls.ts"
import * as Elements from "./Elements.ts"
import { attempt, engine } from "./Errors.ts"
import { type Held, hold, located } from "./Held.ts"
import type { SessionPage } from "./Page.ts"
import * as Settle from "./Settle.ts"

type Method =
  | "click"
  | "doubleClick"
  | "fill"
  | "type"
  | "press"
  | "check"
  | "uncheck"
  | "selectOption"
  | "hover"
  | "scrollIntoView"
  | "scrollTo"
  | "setInputFiles"

/** An Action's method, matched ignoring case, with the aliases other engines write. */
const methods: Record<string, Method> = {
  click: "click",
  doubleclick: "doubleClick",
  dblclick: "doubleClick",
  fill: "fill",
  type: "type",
  press: "press",
  check: "check",
  uncheck: "uncheck",
  selectoption: "selectOption",
  selectoptionfromdropdown: "selectOption",
  hover: "hover",
  scrollintoview: "scrollIntoView",
  scrollto: "scrollTo",
  setinputfiles: "setInputFiles",
  upload: "setInputFiles"
}

/** What was done, for `ActResult.description`: `filled textbox "Email" with "a@b.c"`. */
const past: Record<Method, (target: string, argument: string) => string> = {
  click: (t) => `clicked ${t}`,
  doubleClick: (t) => `double-clicked ${t}`,
  fill: (t, a) => `filled ${t} with ${a}`,
  type: (t, a) => `typed ${a} into ${t}`,
  press: (t, a) => `pressed ${a} in ${t}`,
  check: (t) => `checked ${t}`,
  uncheck: (t) => `unchecked ${t}`,
  selectOption: (t, a) => `selected ${a} in ${t}`,
  hover: (t) => `hovered over ${t}`,
  scrollIntoView: (t) => `scrolled ${t} into view`,
  scrollTo: (t, a) => `scrolled ${t} to ${a}`,
  setInputFiles: (t, a) => `put ${a} into the file upload ${t}`
}

const needsArgument: ReadonlyArray<Method> = ["fill", "type", "press", "selectOption", "scrollTo", "setInputFiles"]

/** `xpath=…`, `css=…` and other Playwright selectors pass through; a bare XPath gets its prefix. */
export const toSelector = (selector: string) => {
  const s = selector.trim()
  return s.startsWith("/") || s.startsWith("(/") ? `xpath=${s}` : s
}

const quote = (s: string) => JSON.stringify(s)

const parsePercent = (text: string, label: string) => {
  const match = /^\s*(-?\d+(?:\.\d+)?)\s*%?\s*$/.exec(text)
  return match === null
    ? Effect.fail(
        new InvalidInput({
          engine,
          action: label,
          field: "arguments",
          message: `scrollTo takes a percentage like "50%", not ${quote(text)}`
        })
      )
    : Effect.succeed(Number(match[1]))
}

/** An element as errors point to it. */
export const refFor = (e: AccessibilityTree.Element): ElementRef => ({
  ref: e.ref,
  role: e.role,
  name: e.name,
  ...(e.frame === undefined ? {} : { frame: e.frame }),
  ...(e.context === undefined ? {} : { context: e.context })
})

/** Reads the page's elements (every frame), bounded by the action limit. */
export const readElements = (sp: SessionPage, label: string) =>
  attempt(sp.at(label), () => sp.elements.read(sp.limits.actionTimeoutMs))

/** The page's elements as last read when no frame changed since (`"names"`: what they are called and where they
 * are; `"values"`: also what form controls show), else read now. */
export const currentElements = (sp: SessionPage, label: string, what: "names" | "values") =>
  attempt(sp.at(label), () => sp.elements.current(sp.limits.actionTimeoutMs, what))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The element a reference names, held for the act. A reference from before a reconnect is unknown; one whose element
 * was re-rendered (same role and name, new node) is followed to the one element that is clearly the same thing.
 * `markNow`: the act's first read marks the element (Held.ts) in the same moment as the count that tells a gone one.
 */
const byRef = (sp: SessionPage, ref: string, label: string, markNow: boolean) =>
  Effect.gen(function* () {
    const stale = (why: string, elements: ReadonlyArray<AccessibilityTree.Element>) =>
      Effect.fail(
        new ElementNotFound({
          engine,
          action: label,
          target: `[ref=${ref}]`,
          elements: elements.filter(AccessibilityTree.isInteractive).slice(0, 10).map(refFor),
          message: `${why}; act on a reference from a recent browser.observe or browser.extract (the page's elements are listed in this error's "elements")`
        })
      )
    const before = sp.elements.described(ref)
    if (before === undefined) {
      return yield* stale(
        `the reference ${ref} was not handed out on this page by this engine`,
        yield* readElements(sp, label)
      )
    }
    // A reference into a frame that is gone (or a document replaced under it) matches nothing.
    const count = (locator: Locator) =>
      attempt(sp.at(label), () => locator.count().catch((e) => (/aria-ref/.test(String(e)) ? 0 : Promise.reject(e))))
    const locator = sp.elements.locate(ref)!
    const held = hold(locator)
    if (markNow) held.markNow(sp.limits.actionTimeoutMs)
    if ((yield* count(locator).pipe(Effect.onError(() => Effect.sync(held.release)))) === 1) return held
    held.release()
    // The reference may just be older than the last read: read again, then follow a re-rendered element.
    const deadline = Date.now() + sp.limits.elementWaitMs
    for (;;) {
      const elements = yield* readElements(sp, label)
      const again = sp.elements.locate(ref)!
      if ((yield* count(again)) === 1) return hold(again)
      const same = elements.filter(
        (e) =>
          e.role === before.role &&
          AccessibilityTree.normalize(e.name) === AccessibilityTree.normalize(before.name) &&
          before.name !== ""
      )
      if (same.length === 1) return hold(sp.elements.locate(same[0]!.ref)!)
      if (Date.now() >= deadline) {
        return yield* stale(`${AccessibilityTree.describeRef({ ...before, ref })} is no longer on the page`, elements)
      }
      yield* Effect.promise(() => sleep(250))
    }
  })

/** The element a selector names, held for the act: waited for briefly, exactly one (`markNow` as in `byRef`). */
const bySelector = (sp: SessionPage, selector: string, label: string, markNow: boolean) =>
  Effect.gen(function* () {
    const { page, at } = sp
    const { elementWaitMs } = sp.limits
    const locator = located(page.mainFrame(), toSelector(selector))
    const held = hold(locator)
    if (markNow) held.markNow(sp.limits.actionTimeoutMs)
    // Usually the element is already there: one count answers; only a missing element is waited for.
    let count = yield* attempt(at(label), () => locator.count()).pipe(Effect.onError(() => Effect.sync(held.release)))
    if (count === 1) return held
    held.release()
    if (count === 0) {
      yield* attempt(at(label, "none", elementWaitMs), () =>
        locator.first().waitFor({ state: "attached", timeout: elementWaitMs })
      ).pipe(
        Effect.catchTag("Timeout", () =>
          Effect.fail(
            new ElementNotFound({
              engine,
              action: label,
              target: selector,
              message: `no element matches ${selector} (waited ${elementWaitMs} ms)`
            })
          )
        )
      )
      count = yield* attempt(at(label), () => locator.count())
    }
    if (count > 1) {
      const candidates = yield* attempt(at(label), () => locator.evaluateAll(PageFacts.summarize))
      return yield* Effect.fail(
        new AmbiguousTarget({
          engine,
          action: label,
          target: selector,
          candidates,
          message: `${count} elements match ${selector}; a selector must match exactly one`
        })
      )
    }
    return hold(locator)
  })

/** Methods whose first step on the element is a read of it (Controls.ts), not one of Playwright's own actions. */
const readsFirst: ReadonlyArray<Method> = [
  "click",
  "doubleClick",
  "hover",
  "check",
  "uncheck",
  "selectOption",
  "fill",
  "type",
  "scrollTo",
  "setInputFiles"
]

/** Methods after which the page may navigate or change its route: the answer waits for it to settle. */
const mayNavigate: ReadonlyArray<Method> = ["click", "doubleClick", "press", "check", "uncheck", "selectOption"]

/** Runs an Action on exactly one element (a reference or a selector). An empty selector types or presses keys
 * into whatever has focus. */

export const run = Effect.fn("PlaywrightEngine.runAction")(function* (sp: SessionPage, action: Action) {
  const { page, at } = sp
  const { actionTimeoutMs } = sp.limits
  const label = `${action.method} ${action.selector}`.trim()
  const method = methods[action.method.toLowerCase()]
  if (method === undefined) {
    return yield* Effect.fail(
      new Unsupported({
        engine,
        action: label,
        message: `the playwright engine has no method "${action.method}"; it runs ${[...new Set(Object.values(methods))].join(", ")}`
      })
    )
  }
  const argument = action.arguments[0]
  if (needsArgument.includes(method) && argument === undefined) {
    return yield* Effect.fail(
      new InvalidInput({
        engine,
        action: label,
        field: "arguments",
        message: `${method} needs an argument (${label})`
      })
    )
  }
  // A click or a key may start a navigation a moment later; a choice's change handler starts one in its own task.
  const graceMs = !mayNavigate.includes(method) ? 0 : ["click", "doubleClick", "press"].includes(method) ? 50 : 20
  const settle = { graceMs, timeoutMs: actionTimeoutMs }
  const done = (text: string, settled: Settle.Settled, shown?: ActTarget): ActResult => ({
    success: true,
    description:
      settled.navigated !== undefined
        ? `${text}; now on ${settled.navigated.url}`
        : settled.pending !== undefined
          ? `${text}; the page is waiting for ${settled.pending} to answer (browser.wait_for sees where it lands)`
          : text,
    action,
    ...(settled.navigated === undefined ? {} : { navigated: settled.navigated }),
    ...(shown === undefined ? {} : { target: shown })
  })

  // A `{{secret:NAME}}` is resolved only here, for the keystrokes: the description and errors keep the reference.
  const unknown =
    argument === undefined ? undefined : Secrets.referenced(argument).find((n) => !Secrets.names().includes(n))
  if (unknown !== undefined) {
    return yield* Effect.fail(
      new InvalidInput({
        engine,
        action: label,
        field: "arguments",
        message: new Secrets.UnknownSecret(unknown).message
      })
    )
  }
  const typed = () => Secrets.reveal(argument!)
  const secret = argument !== undefined && Secrets.referenced(argument).length > 0
  // A read of the page's elements made ahead may still be under way: its marks and the act's must not meet.
  yield* Effect.promise(() => sp.elements.acting()).pipe(Effect.withSpan("Elements.acting"))

  if (action.selector.trim() === "") {
    if (method !== "press" && method !== "type") {
      return yield* Effect.fail(
        new InvalidInput({ engine, action: label, field: "selector", message: `${method} needs a selector` })
      )
    }
    const settled = yield* attempt(at(label, "possible"), () =>
      Settle.around(
        page,
        () => (method === "press" ? page.keyboard.press(argument!) : page.keyboard.type(typed())),
        settle
      )
    )
    if (secret) yield* attempt(at(label), () => page.evaluate(`(${Controls.hideTyped})(document.activeElement)`))
    return done(`${method === "press" ? "pressed" : "typed"} ${quote(argument!)}`, settled)
  }

  const ref = Elements.refOf(action.selector)
  // The act's first step reads the element it holds: that read's marking goes out with the count.
  const markNow = readsFirst.includes(method)
  const first = yield* (
    ref === undefined ? bySelector(sp, action.selector, label, markNow) : byRef(sp, ref, label, markNow)
  ).pipe(Effect.withSpan("Actions.locate"))
  const locator = first.locator
  const described = ref === undefined ? undefined : sp.elements.described(ref)
  const target =
    action.description ||
    (ref === undefined ? action.selector : AccessibilityTree.describe(described ?? { role: "element", name: ref }))
  // The element held for the act (and any it is re-rendered as), released when the act ends however it ends.
  const held = [first]
  const acting = {
    sp,
    action,
    label,
    locator,
    held: held[0]!,
    also: (other: Held) => void held.push(other),
    described,
    target,
    settle,
    done,
    past: past[method],
    refFor,
    read: () => readElements(sp, label)
  }
  sp.activity.touch()
  const result = yield* Effect.gen(function* () {
    switch (method) {
      case "click":
      case "doubleClick":
      case "hover":
        return yield* Controls.point({ ...acting, method })
      case "check":
      case "uncheck":
        return yield* Controls.toggle({ ...acting, method })
      case "selectOption":
        return yield* Controls.choose({ ...acting, method }, action.arguments)
      case "fill":
      case "type":
        return yield* Controls.fillIn({ ...acting, method }, typed(), secret)
    }
    const timeout = actionTimeoutMs
    const percent = method === "scrollTo" ? yield* parsePercent(argument!, label) : 0
    /** setInputFiles on a button or drop zone clicks it (its chooser gets the files): the answer says so. */
    let clicked = false
    const perform = async (held: Held): Promise<unknown> => {
      const on = held.locator
      switch (method) {
        case "press":
          return on.press(argument!, { timeout })
        case "scrollIntoView":
          return on.scrollIntoViewIfNeeded({ timeout })
        case "scrollTo":
          return held.evaluate(PageFacts.scrollToPercent, percent, timeout)
        case "setInputFiles": {
          const files = [...action.arguments]
          // A file input takes the files itself; a button or drop zone in front of one opens its chooser on click.
          const isFileInput = await held.evaluate(
            (el) => el instanceof HTMLInputElement && el.type === "file",
            undefined,
            timeout
          )
          if (isFileInput) return on.setInputFiles(files, { timeout })
          // The session answers the chooser this click opens with the files the call named (any engine's click).
          clicked = true
          return on.click({ timeout })
        }
      }
    }
    const settled = yield* attempt(at(label, "possible"), () =>
      Settle.around(page, () => Controls.retargeted({ ...acting, method: "click" }, perform), settle)
    )
    if (clicked) {
      // The answer says a click was made: the files went to whatever chooser it opened, if one opened.
      const chosen = `clicked ${target} to choose ${action.arguments.map(quote).join(", ")}`
      return { ...done(chosen, settled), action: { ...action, method: "click" } }
    }
    const shown = method === "setInputFiles" ? action.arguments.map(quote).join(", ") : quote(argument ?? "")
    return done(past[method](target, shown), settled)
  }).pipe(
    Effect.ensuring(
      Effect.sync(() => {
        for (const h of held) h.release()
      })
    )
  )
  sp.activity.touch()
  return result
})
