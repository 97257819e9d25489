/**
 * The instruction grammar (Instruction.ts) on the session's page: a target phrase resolved through the accessibility
 * tree (AccessibilityTree.ts) to one clear candidate and the Action it means; keys, scrolls and history moves.
 */
import { Effect, Result } from "effect"
import { ActionFailed, AmbiguousTarget, ElementNotFound } from "../../Errors/Page.ts"
import * as AccessibilityTree from "../AccessibilityTree.ts"
import type { Action, ActResult } from "../Engine.ts"
import * as Instruction from "../Instruction.ts"
import * as Actions from "./Actions.ts"
import { attempt, engine } from "./Errors.ts"
import type { SessionPage } from "./Page.ts"

const verbOf: Record<string, AccessibilityTree.Verb> = {
  click: "click",
  fill: "fill",
  type: "fill",
  select: "select",
  check: "check",
  press: "press",
  hover: "hover",
  // A file input is a button to the accessibility tree, and so is the styled button or drop zone in front of one.
  upload: "click"
}

/** The Action an instruction means for a resolved element, and how it reads in a log. */
const actionFor = (ins: Instruction.Instruction, c: AccessibilityTree.Candidate): Action => {
  const selector = `xpath=${c.xpath}`
  const description = AccessibilityTree.describe(c)
  switch (ins.kind) {
    case "click":
      return { selector, method: ins.double ? "doubleClick" : "click", arguments: [], description }
    case "fill":
      return { selector, method: "fill", arguments: [ins.value], description }
    case "type":
      return { selector, method: "type", arguments: [ins.text], description }
    case "select":
      return { selector, method: "selectOption", arguments: [ins.option], description }
    case "check":
      return { selector, method: ins.checked ? "check" : "uncheck", arguments: [], description }
    case "press":
      return { selector, method: "press", arguments: [ins.key], description }
    case "upload":
      return { selector, method: "setInputFiles", arguments: [...ins.files], description }
    default:
      return { selector, method: "hover", arguments: [], description }
  }
}

/** `press Enter` and `type "x"` without a target act on whatever has focus: an Action with an empty selector. */
const keyboardFor = (ins: Instruction.Instruction): Action | undefined =>
  ins.kind === "press" && ins.target === undefined
    ? { selector: "", method: "press", arguments: [ins.key], description: `key ${ins.key}` }
    : ins.kind === "type" && ins.target === undefined
      ? { selector: "", method: "type", arguments: [ins.text], description: "the focused element" }
      : undefined

const targetOf = (ins: Instruction.Instruction) =>
  "target" in ins && ins.target !== undefined ? { verb: verbOf[ins.kind]!, target: ins.target } : undefined

const resolveTarget = (sp: SessionPage, verb: AccessibilityTree.Verb, target: string, action: string) =>
  sp.withCdp(action, (cdp) => AccessibilityTree.resolve(cdp, verb, target, { timeoutMs: sp.limits.actionTimeoutMs }))

/** One clear best candidate, or the typed reason there is none. */
const choose = (
  sp: SessionPage,
  resolution: AccessibilityTree.Resolution,
  verb: AccessibilityTree.Verb,
  target: string,
  action: string
) => {
  const wanted = AccessibilityTree.lookingFor(verb, target)
  const [best] = resolution.candidates
  if (best === undefined) {
    const seen = resolution.available.length > 0 ? `; the page has ${resolution.available.join(", ")}` : ""
    return Effect.fail(
      new ElementNotFound({ engine, action, target: wanted, message: `no ${wanted} on ${sp.page.url()}${seen}` })
    )
  }
  const ties = resolution.candidates.filter((c) => c.score === best.score)
  if (ties.length > 1) {
    const candidates = ties.map(AccessibilityTree.describe)
    return Effect.fail(
      new AmbiguousTarget({
        engine,
        action,
        target: wanted,
        candidates,
        message: `${ties.length} elements match ${wanted} equally well (${candidates.join(", ")}); name one more precisely or act on an observe() result`
      })
    )
  }
  return Effect.succeed(best)
}

/** scroll up/down/top/bottom as a replayable `scrollTo` of the document. */
const scrollAction = (sp: SessionPage, direction: "up" | "down" | "top" | "bottom", label: string) =>
  attempt(sp.at(label), () =>
    sp.page.evaluate(() => ({
      y: window.scrollY,
      max: document.documentElement.scrollHeight - window.innerHeight,
      step: window.innerHeight * 0.8
    }))
  ).pipe(
    Effect.map(({ y, max, step }): Action => {
      const to = { up: y - step, down: y + step, top: 0, bottom: max }[direction]
      const percent = max > 0 ? Math.round((Math.min(Math.max(to, 0), max) / max) * 10_000) / 100 : 0
      return {
        selector: "xpath=/html",
        method: "scrollTo",
        arguments: [`${percent}%`],
        description: "the page"
      }
    })
  )

/** `go back` / `go forward`: waits for the commit, then for a complete document. */
const moveInHistory = (sp: SessionPage, direction: "back" | "forward", input: string) =>
  Effect.gen(function* () {
    const { page } = sp
    const { navigationTimeoutMs } = sp.limits
    const history = yield* sp.withCdp(input, (cdp) => cdp.send("Page.getNavigationHistory"))
    const next = history.currentIndex + (direction === "back" ? -1 : 1)
    if (next < 0 || next >= history.entries.length) {
      return yield* Effect.fail(
        new ActionFailed({
          engine,
          action: input,
          sideEffect: "none",
          message: `there is no page to go ${direction} to`
        })
      )
    }
    // A page restored from the back/forward cache fires no load: wait for a complete document instead.
    yield* attempt({ ...sp.at(input, "possible", navigationTimeoutMs), url: history.entries[next]!.url }, async () => {
      const options = { waitUntil: "commit", timeout: navigationTimeoutMs } as const
      await (direction === "back" ? page.goBack(options) : page.goForward(options))
      await page.waitForFunction(() => document.readyState === "complete", undefined, {
        timeout: navigationTimeoutMs
      })
    })
    return { success: true, description: `went ${direction} to ${page.url()}` } satisfies ActResult
  })

/** Runs a parsed instruction: `input` is its text, for errors and logs. */
export const run = (sp: SessionPage, ins: Instruction.Instruction, input: string) =>
  Effect.gen(function* () {
    if (ins.kind === "history") return yield* moveInHistory(sp, ins.direction, input)
    if (ins.kind === "scroll") return yield* Actions.run(sp, yield* scrollAction(sp, ins.direction, input))
    const keyboard = keyboardFor(ins)
    if (keyboard !== undefined) return yield* Actions.run(sp, keyboard)
    const target = targetOf(ins)
    if (target === undefined) return yield* Effect.die(new Error(`no target in ${ins.kind} instruction`))
    const resolution = yield* resolveTarget(sp, target.verb, target.target, input)
    const best = yield* choose(sp, resolution, target.verb, target.target, input)
    return yield* Actions.run(sp, actionFor(ins, best))
  })

/** Every Action an instruction could mean, best first (history moves have none). */
const actionsFor = (sp: SessionPage, ins: Instruction.Instruction, input: string) =>
  Effect.gen(function* () {
    if (ins.kind === "history") return []
    if (ins.kind === "scroll") return [yield* scrollAction(sp, ins.direction, input)]
    const keyboard = keyboardFor(ins)
    if (keyboard !== undefined) return [keyboard]
    const target = targetOf(ins)
    if (target === undefined) return []
    const { candidates } = yield* resolveTarget(sp, target.verb, target.target, input)
    return candidates.map((c) => actionFor(ins, c))
  })

/** `observe`: a grammar sentence's Actions, else every element ranked against the phrase, as clicks. */
export const observe = (sp: SessionPage, instruction: string) =>
  observeAll(sp, instruction).pipe(Effect.flatMap((actions) => Actions.asUploads(sp, actions)))

const observeAll = (sp: SessionPage, instruction: string) =>
  Effect.gen(function* () {
    const parsed = Instruction.parse(instruction)
    const actions = Result.isSuccess(parsed) ? yield* actionsFor(sp, parsed.success, instruction) : []
    if (actions.length > 0) return actions
    // A bare target phrase ("the email field"), or a grammar sentence that found nothing: rank every element.
    const { candidates } = yield* resolveTarget(sp, "any", instruction, `observe ${instruction}`)
    return candidates.map(
      (c): Action => ({
        selector: `xpath=${c.xpath}`,
        method: "click",
        arguments: [],
        description: AccessibilityTree.describe(c)
      })
    )
  })
