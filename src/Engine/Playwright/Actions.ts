/**
 * Concrete Actions (`{selector, method, arguments, description}`, Stagehand's observe-result shape) run on the
 * session's page: the methods the engine knows, how each reads in a log, and running one on exactly one element.
 */
import { Effect } from "effect"
import type { Locator } from "playwright-core"
import { Unsupported } from "../../Errors/Engine.ts"
import { AmbiguousTarget, ElementNotFound, InvalidInput } from "../../Errors/Page.ts"
import * as AccessibilityTree from "../AccessibilityTree.ts"
import type { Action, ActResult } from "../Engine.ts"
import * as PageFacts from "../PageFacts.ts"
import { attempt, engine } from "./Errors.ts"
import type { SessionPage } from "./Page.ts"

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

/** For a native <select>: the index of the option whose label or value matches, or ElementNotFound listing them. */
const matchOption = (sp: SessionPage, locator: Locator, wanted: string, label: string) =>
  Effect.gen(function* () {
    const options = yield* attempt(sp.at(label), () =>
      locator.evaluate(PageFacts.selectOptions, undefined, { timeout: sp.limits.actionTimeoutMs })
    )
    if (options === null) return undefined
    const exact = options.findIndex((o) => o.label === wanted || o.value === wanted)
    const loose = options.findIndex(
      (o) =>
        AccessibilityTree.normalize(o.label) === AccessibilityTree.normalize(wanted) ||
        o.value.toLowerCase() === wanted.toLowerCase()
    )
    const index = exact >= 0 ? exact : loose
    if (index >= 0) return index
    return yield* Effect.fail(
      new ElementNotFound({
        engine,
        action: label,
        target: `option ${quote(wanted)}`,
        message: `no option ${quote(wanted)} in ${label}; the options are ${options.map((o) => quote(o.label)).join(", ")}`
      })
    )
  })

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

/**
 * Observe results that are file inputs become uploads: a person reads one as "Resume (choose a file)", not as a
 * button to click, and clicking it only opens a chooser. The files go in the action's arguments.
 */
export const asUploads = (sp: SessionPage, actions: ReadonlyArray<Action>) =>
  Effect.gen(function* () {
    const selectors = actions.map((a) => (a.method === "click" ? toSelector(a.selector) : ""))
    if (!selectors.some((s) => s.startsWith("xpath="))) return actions
    const files = yield* attempt(sp.at("observe"), () =>
      sp.page.evaluate(
        (paths) =>
          paths.map((path) => {
            if (!path.startsWith("xpath=")) return false
            const el = document.evaluate(
              path.slice(6),
              document,
              null,
              XPathResult.FIRST_ORDERED_NODE_TYPE,
              null
            ).singleNodeValue
            return el instanceof HTMLInputElement && el.type === "file"
          }),
        selectors
      )
    )
    return actions.map(
      (a, i): Action =>
        files[i]
          ? {
              ...a,
              method: "setInputFiles",
              description: `file upload ${a.description.replace(/^button /, "")} (put the files' paths in arguments, or use browser.upload)`
            }
          : a
    )
  })

/** Waits briefly for the selector, insists on exactly one match, then runs the method. An empty selector types or
 * presses keys into whatever has focus. */
export const run = Effect.fn("PlaywrightEngine.runAction")(function* (sp: SessionPage, action: Action) {
  const { page, at } = sp
  const { actionTimeoutMs, elementWaitMs } = sp.limits
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
  const done = (text: string): ActResult => ({ success: true, description: text, action })

  if (action.selector.trim() === "") {
    if (method !== "press" && method !== "type") {
      return yield* Effect.fail(
        new InvalidInput({ engine, action: label, field: "selector", message: `${method} needs a selector` })
      )
    }
    yield* attempt(at(label, "possible"), () =>
      method === "press" ? page.keyboard.press(argument!) : page.keyboard.type(argument!)
    )
    return done(`${method === "press" ? "pressed" : "typed"} ${quote(argument!)}`)
  }

  const locator = page.locator(toSelector(action.selector))
  // Usually the element is already there: one count answers; only a missing element is waited for.
  let count = yield* attempt(at(label), () => locator.count())
  if (count === 0) {
    yield* attempt(at(label, "none", elementWaitMs), () =>
      locator.first().waitFor({ state: "attached", timeout: elementWaitMs })
    ).pipe(
      Effect.catchTag("Timeout", () =>
        Effect.fail(
          new ElementNotFound({
            engine,
            action: label,
            target: action.selector,
            message: `no element matches ${action.selector} (waited ${elementWaitMs} ms)`
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
        target: action.selector,
        candidates,
        message: `${count} elements match ${action.selector}; a selector must match exactly one`
      })
    )
  }
  const option = method === "selectOption" ? yield* matchOption(sp, locator, argument!, label) : undefined
  const percent = method === "scrollTo" ? yield* parsePercent(argument!, label) : 0
  const timeout = actionTimeoutMs
  yield* attempt(at(label, "possible"), async (): Promise<unknown> => {
    switch (method) {
      case "click":
        return locator.click({ timeout })
      case "doubleClick":
        return locator.dblclick({ timeout })
      case "fill":
        return locator.fill(argument!, { timeout })
      case "type":
        return locator.pressSequentially(argument!, { timeout })
      case "press":
        return locator.press(argument!, { timeout })
      case "check":
        return locator.check({ timeout })
      case "uncheck":
        return locator.uncheck({ timeout })
      case "selectOption":
        return locator.selectOption(option === undefined ? argument! : { index: option }, { timeout })
      case "hover":
        return locator.hover({ timeout })
      case "scrollIntoView":
        return locator.scrollIntoViewIfNeeded({ timeout })
      case "scrollTo":
        return locator.evaluate(PageFacts.scrollToPercent, percent, { timeout })
      case "setInputFiles": {
        const files = [...action.arguments]
        // A file input takes the files itself; a button or drop zone in front of one opens its chooser on click.
        const isFileInput = await locator.evaluate(
          (el) => el instanceof HTMLInputElement && el.type === "file",
          undefined,
          { timeout }
        )
        if (isFileInput) return locator.setInputFiles(files, { timeout })
        // The session answers the chooser this click opens with the files the call named (any engine's click).
        return locator.click({ timeout })
      }
    }
  })
  const shown = method === "setInputFiles" ? action.arguments.map(quote).join(", ") : quote(argument ?? "")
  return done(past[method](action.description || action.selector, shown))
})
