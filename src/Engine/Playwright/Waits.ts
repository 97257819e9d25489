/**
 * `browser.wait_for` on the session's page: text to appear or go, an element to appear (named as a person reads it,
 * by the fuzzy-match rule), or a time to pass; the page read as the snapshot reads it (every frame, open shadow roots)
 * every 200 ms until the condition holds or its time is up.
 */
import { Effect } from "effect"
import { ActionFailed, ElementNotFound } from "../../Errors/Page.ts"
import * as AccessibilityTree from "../AccessibilityTree.ts"
import type { WaitCondition, WaitResult } from "../Engine.ts"
import type { Child } from "./Elements.ts"
import { attempt, engine } from "./Errors.ts"
import { normalize } from "./Outline.ts"
import type { SessionPage } from "./Page.ts"

const everyMs = 200

/** Every name and text of the page's tree, as one normalized string. */
const textOf = (tree: ReadonlyArray<Child>): string => {
  const parts: Array<string> = []
  const visit = (child: Child) => {
    if (typeof child === "string") return void parts.push(child)
    if (child.name !== undefined) parts.push(child.name)
    if (child.text !== undefined) parts.push(child.text)
    for (const c of child.children ?? []) visit(c)
  }
  for (const c of tree) visit(c)
  return ` ${normalize(parts.join(" "))} `
}

const quote = (s: string) => JSON.stringify(s)

export const waitFor = (sp: SessionPage, condition: WaitCondition) =>
  Effect.gen(function* () {
    const started = Date.now()
    const waited = () => Date.now() - started
    if ("timeMs" in condition) {
      yield* Effect.sleep(condition.timeMs)
      return { waitedMs: waited(), description: `waited ${condition.timeMs} ms` } satisfies WaitResult
    }
    const deadline = started + condition.timeoutMs
    for (;;) {
      // A page waiting on a slow site (a form post not answered yet) cannot be read until the answer comes: the read
      // may take up to the wait's own time.
      const readMs = Math.max(sp.limits.actionTimeoutMs, deadline - Date.now())
      const elements = yield* attempt(sp.at("wait_for", "none", readMs), () => sp.elements.read(readMs))
      const text = textOf(sp.elements.latest()?.tree ?? [])
      if ("target" in condition) {
        const choice = AccessibilityTree.choose(AccessibilityTree.rank(elements, "any", condition.target))
        const shown = choice._tag === "one" ? [choice.chosen] : choice._tag === "ambiguous" ? choice.tied : []
        if (shown.length > 0) {
          return {
            waitedMs: waited(),
            description: `${shown.map((s) => AccessibilityTree.describeRef(s.element)).join(", ")} ${shown.length === 1 ? "is" : "are"} on the page`
          } satisfies WaitResult
        }
      } else {
        const wanted = "text" in condition ? condition.text : condition.textGone
        const there = text.includes(` ${normalize(wanted)} `) || text.includes(normalize(wanted))
        if (there === "text" in condition) {
          return {
            waitedMs: waited(),
            description: `${quote(wanted)} ${"text" in condition ? "is on" : "is gone from"} the page`
          } satisfies WaitResult
        }
      }
      if (Date.now() + everyMs > deadline) break
      yield* Effect.sleep(everyMs)
    }
    const url = sp.page.url()
    if ("textGone" in condition) {
      return yield* new ActionFailed({
        engine,
        action: "wait_for",
        sideEffect: "none",
        message: `${quote(condition.textGone)} is still on ${url} after ${waited()} ms`
      })
    }
    const what =
      "text" in condition ? `the text ${quote(condition.text)}` : `an element named ${quote(condition.target)}`
    return yield* new ElementNotFound({
      engine,
      action: "wait_for",
      target: "text" in condition ? condition.text : condition.target,
      message: `${what} did not appear on ${url} within ${waited()} ms`
    })
  })
