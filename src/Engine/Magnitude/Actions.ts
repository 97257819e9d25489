/**
 * Concrete Actions in the Magnitude worker: run through the session page's Playwright API without the model, on
 * exactly one element found within the element wait. Failures are thrown as Problems (Problem.ts).
 */
import { errors, type Locator, type Page } from "playwright-core"
import { toSelector } from "../Playwright/Actions.ts"
import { browserProblem, Failed } from "./Problem.ts"
import type { Limits, WireAction } from "./Protocol.ts"

const methods: Record<string, (locator: Locator, argument: string, timeout: number) => Promise<unknown>> = {
  click: (l, _a, timeout) => l.click({ timeout }),
  doubleclick: (l, _a, timeout) => l.dblclick({ timeout }),
  dblclick: (l, _a, timeout) => l.dblclick({ timeout }),
  fill: (l, a, timeout) => l.fill(a, { timeout }),
  type: (l, a, timeout) => l.pressSequentially(a, { timeout }),
  press: (l, a, timeout) => l.press(a, { timeout }),
  check: (l, _a, timeout) => l.check({ timeout }),
  uncheck: (l, _a, timeout) => l.uncheck({ timeout }),
  selectoption: (l, a, timeout) => l.selectOption(a, { timeout }),
  hover: (l, _a, timeout) => l.hover({ timeout }),
  scrollintoview: (l, _a, timeout) => l.scrollIntoViewIfNeeded({ timeout })
}
const needsArgument = new Set(["fill", "type", "press", "selectoption"])

/** Runs one Action; answers what was done, for `ActResult.description`. */
export const run = async (page: Page, action: WireAction, limits: Limits): Promise<string> => {
  const label = `${action.method} ${action.selector}`.trim()
  const key = action.method.toLowerCase()
  const method = methods[key]
  if (method === undefined) {
    throw new Failed({
      source: "unsupported",
      name: "UnknownMethod",
      message: `the magnitude engine has no method "${action.method}"; it runs ${Object.keys(methods).join(", ")}`,
      sideEffect: "none"
    })
  }
  const argument = action.arguments[0]
  if (needsArgument.has(key) && argument === undefined) {
    throw new Failed({
      source: "invalid",
      name: "MissingArgument",
      field: "arguments",
      message: `${action.method} needs an argument (${label})`,
      sideEffect: "none"
    })
  }
  const target = action.description || action.selector
  if (action.selector.trim() === "") {
    if (key !== "press" && key !== "type") {
      throw new Failed({
        source: "invalid",
        name: "MissingSelector",
        field: "selector",
        message: `${action.method} needs a selector`,
        sideEffect: "none"
      })
    }
    await (key === "press" ? page.keyboard.press(argument!) : page.keyboard.type(argument!)).catch((error) => {
      throw new Failed(browserProblem(error, "possible"))
    })
    return `${key === "press" ? "pressed" : "typed"} ${JSON.stringify(argument)}`
  }
  const locator = page.locator(toSelector(action.selector))
  try {
    await locator.first().waitFor({ state: "attached", timeout: limits.elementWaitMs })
  } catch (error) {
    if (!(error instanceof errors.TimeoutError)) throw new Failed(browserProblem(error, "none"))
    throw new Failed({
      source: "not_found",
      name: "ElementNotFound",
      target: action.selector,
      message: `no element matches ${action.selector} (waited ${limits.elementWaitMs} ms)`,
      sideEffect: "none"
    })
  }
  const count = await locator.count()
  if (count > 1) {
    const candidates = await locator.evaluateAll((elements) =>
      elements.map((e) => `${e.tagName.toLowerCase()} "${(e.textContent ?? "").trim().slice(0, 60)}"`)
    )
    throw new Failed({
      source: "ambiguous",
      name: "AmbiguousTarget",
      target: action.selector,
      candidates,
      message: `${count} elements match ${action.selector}; a selector must match exactly one`,
      sideEffect: "none"
    })
  }
  await method(locator, argument ?? "", limits.actionTimeoutMs).catch((error) => {
    throw new Failed(browserProblem(error, "possible"))
  })
  return `${action.method} ${target}${argument === undefined ? "" : ` ${JSON.stringify(argument)}`}`
}
