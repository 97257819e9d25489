/**
 * Concrete Actions (`{selector, method, arguments, description}`, Stagehand's observe-result shape) run on the
 * session's page: the methods the engine knows, how each reads in a log, and running one on exactly one element.
 */
import { Effect } from "effect"
import type { Locator } from "playwright-core"
import { Unsupported } from "../../Errors/Engine.ts"
import { AmbiguousTarget, ElementNotFound, InvalidInput } from "../../Errors/Page.ts"
import * as Secrets from "../../Logging/Secrets.ts"
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
  scrollto: "scrollTo"
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
  scrollTo: (t, a) => `scrolled ${t} to ${a}`
}

const needsArgument: ReadonlyArray<Method> = ["fill", "type", "press", "selectOption", "scrollTo"]

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

/** A field that received a secret shows dots from then on, like a password field, in every screenshot. */
const hideTyped = (element: unknown) => {
  const style = (element as { style?: { setProperty: (n: string, v: string, p: string) => void } } | null)?.style
  style?.setProperty("-webkit-text-security", "disc", "important")
}

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

  if (action.selector.trim() === "") {
    if (method !== "press" && method !== "type") {
      return yield* Effect.fail(
        new InvalidInput({ engine, action: label, field: "selector", message: `${method} needs a selector` })
      )
    }
    yield* attempt(at(label, "possible"), () =>
      method === "press" ? page.keyboard.press(argument!) : page.keyboard.type(typed())
    )
    if (secret) yield* attempt(at(label), () => page.evaluate(`(${hideTyped})(document.activeElement)`))
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
        await locator.fill(typed(), { timeout })
        return secret ? locator.evaluate(hideTyped) : undefined
      case "type":
        await locator.pressSequentially(typed(), { timeout })
        return secret ? locator.evaluate(hideTyped) : undefined
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
    }
  })
  return done(past[method](action.description || action.selector, quote(argument ?? "")))
})
