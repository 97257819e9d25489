/**
 * Stagehand's acts checked against the page with the playwright level's own in-page reads (Playwright/Verify.ts),
 * through the selector (an XPath, or CSS) Stagehand acted on: before an Action, a disabled target is refused and a value as people write
 * it is converted to the field's format; after any act, the target is read back against what the act asked. Plain
 * async functions answering plain data, so the computer-use worker runs them too; `toResult` makes the answer.
 */
import type { Page } from "@browserbasehq/stagehand"
import { Result } from "effect"
import { ActionFailed, InvalidInput } from "../../Errors/Page.ts"
import type { SwitchyardError } from "../../Errors.ts"
import type { Action, ActTarget } from "../Engine.ts"
import * as InputValue from "../InputValue.ts"
import * as Checks from "../Playwright/Verify.ts"

const engine = "stagehand" as const

/** Methods whose effect the page shows, by Stagehand's and Playwright's names. */
const verbs: Record<string, "fill" | "type" | "select" | "check" | "uncheck" | "click"> = {
  fill: "fill",
  type: "type",
  selectoption: "select",
  selectoptionfromdropdown: "select",
  check: "check",
  uncheck: "uncheck",
  click: "click",
  doubleclick: "click"
}

/** Selectors the page itself can read: an XPath or CSS (not Playwright's own engines such as `text=`). */
const readable = (selector: string) => !/^(?!xpath=|css=)[a-z-]+=/i.test(selector.trim()) && selector.trim() !== ""

/** What the check found, as plain data. */
export type Checked =
  | { readonly _tag: "shown"; readonly target?: ActTarget }
  | { readonly _tag: "refused"; readonly message: string }
  | { readonly _tag: "invalid"; readonly message: string }
  | {
      readonly _tag: "unlike"
      readonly target: { readonly role: string; readonly name: string }
      readonly expected: string
      readonly state: Checks.After
    }

/** An Action ready to run (its value converted), or why it does not run. */
export type Prepared = { readonly _tag: "ready"; readonly action: Action } | Checked

const inspectAt = (page: Page, xpath: string, remember: boolean) =>
  page.evaluate(Checks.atSelector(Checks.inspect, xpath, remember)) as Promise<Checks.Before | null>

/** Keeps every field's value in the page, so a string act's text that went elsewhere can be found afterwards. */
export const remember = (page: Page) =>
  page.evaluate(`(${Checks.inspect})(document.documentElement, true)`).then(() => undefined)

/**
 * Before an Action (a selector, no model): a disabled target is refused, and a fill's value as people write it is
 * converted to the field's format. Answers the Action to run, or why none runs.
 */
export const prepare = async (page: Page, action: Action): Promise<Prepared> => {
  const ready = { _tag: "ready", action } as const
  const verb = verbs[action.method.toLowerCase()]
  if (verb === undefined || !readable(action.selector)) return ready
  const before = await inspectAt(page, action.selector, verb === "fill" || verb === "type")
  if (before === null) return ready
  const target = `${before.role}${before.name === "" ? "" : ` ${JSON.stringify(before.name)}`}`
  if (before.disabled || (verb === "fill" && before.readOnly) || before.blocked !== undefined) {
    const why = before.disabled ? "disabled" : before.blocked !== undefined ? `behind ${before.blocked}` : "read-only"
    return { _tag: "refused", message: `${target} is ${why}` }
  }
  const kind = Checks.valueKind(before)
  const value = action.arguments[0]
  if (verb !== "fill" || kind === undefined || value === undefined) return ready
  const converted = InputValue.convert(
    { kind, lang: before.lang, min: before.min, max: before.max, step: before.step },
    value
  )
  if (Result.isFailure(converted)) {
    return { _tag: "invalid", message: `${target} takes ${converted.failure}; ${JSON.stringify(value)} is not one` }
  }
  return { _tag: "ready", action: { ...action, arguments: [converted.success.value, ...action.arguments.slice(1)] } }
}

/**
 * After an act: the target read back against what its method asked (nothing to ask of a click but its state; a
 * button a click disabled, as a submit button disables itself, is no failure).
 */
export const check = async (page: Page, action: Action): Promise<Checked> => {
  const verb = verbs[action.method.toLowerCase()]
  if (verb === undefined || !readable(action.selector)) return { _tag: "shown" }
  const before = await inspectAt(page, action.selector, false)
  // A click may have moved the page on, where the same path names another element: only a box it ticked is read.
  if (before === null || (verb === "click" && before.checked === undefined)) return { _tag: "shown" }
  const value = action.arguments[0] ?? ""
  const ask: Checks.Ask =
    verb === "fill" || verb === "type"
      ? { text: { value, mode: Checks.modeOf(verb, before) } }
      : verb === "select"
        ? { selected: [value] }
        : verb === "check" || verb === "uncheck"
          ? { checked: verb === "check" }
          : {}
  const state = (await page.evaluate(Checks.atSelector(Checks.readBack, action.selector, ask))) as Checks.After | null
  if (state === null) return { _tag: "shown" }
  if (state.landed !== undefined) {
    await page.evaluate(
      `document.querySelectorAll("[${Checks.landedMark}]").forEach((e) => e.removeAttribute("${Checks.landedMark}"))`
    )
  }
  const identity = { ref: action.selector, role: before.role, name: before.name }
  if (!state.ok) {
    const expected =
      verb === "check"
        ? "checked"
        : verb === "uncheck"
          ? "not checked"
          : verb === "select"
            ? `${JSON.stringify(value)} selected`
            : value
    return { _tag: "unlike", target: identity, expected, state }
  }
  return { _tag: "shown", target: { ...identity, ...Checks.shown(state) } }
}

/** The error a check found, or undefined when the page shows what was asked. */
export const failure = (checked: Checked, label: string): SwitchyardError | undefined => {
  switch (checked._tag) {
    case "shown":
      return undefined
    case "refused":
      return new ActionFailed({
        engine,
        action: label,
        sideEffect: "none",
        message: `${label} did nothing: ${checked.message}`
      })
    case "invalid":
      return new InvalidInput({
        engine,
        action: label,
        field: "arguments",
        message: `${checked.message} (nothing was typed)`
      })
    case "unlike": {
      const { landed } = checked.state
      return Checks.failed({
        engine,
        action: label,
        target: checked.target,
        expected: checked.expected,
        state: checked.state,
        ...(landed === undefined ? {} : { landed: { ref: "", role: landed.role, name: landed.name } })
      })
    }
  }
}
