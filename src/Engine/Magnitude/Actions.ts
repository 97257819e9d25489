/**
 * Concrete Actions in the Magnitude worker: run through the session page's Playwright API without the model, on
 * exactly one element found within the element wait, checked against the page as the playwright level checks them
 * (Playwright/Verify.ts: a disabled target refused at once, values as people write them converted, the target read
 * back). Failures are thrown as Problems (Problem.ts).
 */
import { Result } from "effect"
import { errors, type Locator, type Page } from "playwright-core"
import * as InputValue from "../InputValue.ts"
import { toSelector } from "../Playwright/Actions.ts"
import * as Verify from "../Playwright/Verify.ts"
import { browserProblem, Failed } from "./Problem.ts"
import type { ActionDone, Limits, WireAction } from "./Protocol.ts"

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

/** What each method asks the page to show, and whether it is refused on a disabled target. */
const asks: Record<string, (before: Verify.Before, argument: string) => Verify.Ask> = {
  fill: (b, a) => ({ text: { value: a, mode: Verify.modeOf("fill", b) } }),
  type: (b, a) => ({ text: { value: a, mode: Verify.modeOf("type", b) } }),
  check: () => ({ checked: true }),
  uncheck: () => ({ checked: false }),
  selectoption: (_b, a) => ({ selected: [a] }),
  click: () => ({}),
  doubleclick: () => ({}),
  dblclick: () => ({})
}

/** Runs one Action; answers what was done, for `ActResult.description`, and what the page shows for its target. */
export const run = async (page: Page, action: WireAction, limits: Limits): Promise<ActionDone> => {
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
    return { description: `${key === "press" ? "pressed" : "typed"} ${JSON.stringify(argument)}` }
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
  const ask = asks[key]
  const timeout = limits.actionTimeoutMs
  const before = ask === undefined ? undefined : await Verify.before(locator, key === "fill" || key === "type", timeout)
  const named =
    before === undefined ? target : `${before.role}${before.name === "" ? "" : ` ${JSON.stringify(before.name)}`}`
  if (
    before !== undefined &&
    (before.disabled || (key === "fill" && before.readOnly) || before.blocked !== undefined)
  ) {
    const why = before.disabled ? "disabled" : before.blocked !== undefined ? `behind ${before.blocked}` : "read-only"
    throw new Failed({
      source: "browser",
      name: "Disabled",
      message: `${named} is ${why}; nothing was done`,
      sideEffect: "none"
    })
  }
  // A value as people write it (a date, a time, a number) goes in in the field's own format.
  let value = argument ?? ""
  const kind = before === undefined ? undefined : Verify.valueKind(before)
  if (key === "fill" && before !== undefined && kind !== undefined) {
    const converted = InputValue.convert(
      { kind, lang: before.lang, min: before.min, max: before.max, step: before.step },
      value
    )
    if (Result.isFailure(converted)) {
      throw new Failed({
        source: "invalid",
        name: "UnreadableValue",
        field: "arguments",
        message: `${named} takes ${converted.failure}; ${JSON.stringify(value)} is not one (nothing was typed)`,
        sideEffect: "none"
      })
    }
    value = converted.success.value
  }
  // Several options for a multi-select go in one call (Playwright selects exactly those).
  const chosen = key === "selectoption" ? [...action.arguments] : []
  const perform =
    key === "selectoption" ? () => locator.selectOption(chosen, { timeout }) : () => method(locator, value, timeout)
  await perform().catch((error) => {
    throw new Failed(browserProblem(error, "possible"))
  })
  const description = `${action.method} ${target}${argument === undefined ? "" : ` ${JSON.stringify(value)}`}`
  if (before === undefined || ask === undefined) return { description }
  const state = await Verify.after(locator, key === "selectoption" ? { selected: chosen } : ask(before, value), timeout)
  const identity = { ref: action.selector, role: before.role, name: before.name }
  if (!state.ok) {
    if (state.landed !== undefined) {
      await locator.evaluate(
        (el, mark) => {
          for (const e of el.ownerDocument.querySelectorAll(`[${mark}]`)) e.removeAttribute(mark)
        },
        Verify.landedMark,
        { timeout }
      )
    }
    const landed =
      state.landed === undefined ? undefined : { ref: "", role: state.landed.role, name: state.landed.name }
    const expected =
      key === "check"
        ? "checked"
        : key === "uncheck"
          ? "not checked"
          : key === "selectoption"
            ? `${chosen.map((o) => JSON.stringify(o)).join(", ")} selected`
            : value
    const failed = Verify.failed({
      engine: "magnitude",
      action: `${action.method} ${action.selector}`,
      target: identity,
      expected,
      state,
      ...(landed === undefined ? {} : { landed })
    })
    throw new Failed({
      source: "verification",
      name: "VerificationFailed",
      message: failed.message,
      expected: failed.expected,
      actual: failed.actual,
      ...(landed === undefined ? {} : { landed }),
      sideEffect: "possible"
    })
  }
  return { description, target: { ...identity, ...Verify.shown(state) } }
}
