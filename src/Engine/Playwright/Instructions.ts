/**
 * The instruction grammar (Instruction.ts) on the session's page: a target phrase resolved among the page's elements
 * (Elements.ts, every frame and open shadow root) by the fuzzy-match rule (AccessibilityTree.ts) to one clear
 * element and the Action it means, waiting a bounded while for one not there yet; keys, scrolls and history moves.
 */
import { Effect, Result } from "effect"
import { ActionFailed, AmbiguousTarget, ElementNotFound } from "../../Errors/Page.ts"
import * as AccessibilityTree from "../AccessibilityTree.ts"
import type { Action, ActResult } from "../Engine.ts"
import type * as Instruction from "../Instruction.ts"
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

/** The Action an instruction means for a resolved element, and how it reads in a log (observe's lists say more:
 * `listed`). */
const actionFor = (ins: Instruction.Instruction, c: AccessibilityTree.Element): Action => {
  const selector = `aria-ref=${c.ref}`
  const description = AccessibilityTree.describe(c)
  switch (ins.kind) {
    case "click":
      return { selector, method: ins.double ? "doubleClick" : "click", arguments: [], description }
    case "fill":
      return { selector, method: "fill", arguments: [ins.value], description }
    case "type":
      return { selector, method: "type", arguments: [ins.text], description }
    case "select":
      return { selector, method: "selectOption", arguments: [...(ins.options ?? [ins.option])], description }
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
  "target" in ins && ins.target !== undefined
    ? { verb: verbOf[ins.kind]!, target: ins.target, within: ins.within }
    : undefined

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** What the scope of a target leaves of the page's elements: all of them without a scope. */
const scoped = (elements: ReadonlyArray<AccessibilityTree.Element>, within: string | undefined) =>
  within === undefined ? elements : AccessibilityTree.inScope(elements, within)

/** The groups, cards, rows and landmarks elements sit in, for a scope that matched none of them. */
const contexts = (elements: ReadonlyArray<AccessibilityTree.Element>) =>
  [...new Set(elements.flatMap((e) => (e.around ?? []).map(AccessibilityTree.describeAround)))].slice(0, 15)

/** When same-named elements sit in different places, how to say which one: by what it sits in. */
const scopeHint = (tied: ReadonlyArray<AccessibilityTree.Element>, input: string) => {
  const first = tied.find((e) => (e.around?.[0]?.name ?? "") !== "")
  const places = new Set(tied.map((e) => e.context ?? ""))
  return first === undefined || places.size < tied.length
    ? ""
    : `, say which by what it sits in (e.g. ${input.replace(/\s+(?:in|within|inside)\s+"[^"]*"\s*$/, "")} in "${first.around![0]!.name}")`
}

/**
 * The one element a target phrase means, by the fuzzy-match rule, among the elements inside its scope when it has
 * one; a target not there yet is waited for (bounded by `elementWaitMs`) as a person waits for a page to finish
 * rendering. Ambiguity is answered at once.
 */
const resolveTarget = (
  sp: SessionPage,
  verb: AccessibilityTree.Verb,
  target: string,
  action: string,
  within?: string
) =>
  Effect.gen(function* () {
    const wanted = `${AccessibilityTree.lookingFor(verb, target)}${within === undefined ? "" : ` in "${within}"`}`
    const started = Date.now()
    const deadline = started + sp.limits.elementWaitMs
    let seen = ""
    let changed = started
    // The elements kept from the last read while the page has not changed since settle a clear choice alone;
    // anything less is looked at again in a fresh read.
    const current = yield* Actions.currentElements(sp, action, "names")
    let fresh = current.kept ? undefined : current.elements
    if (current.kept) {
      const clear = AccessibilityTree.choose(AccessibilityTree.rank(scoped(current.elements, within), verb, target))
      if (clear._tag === "one") return clear.chosen.element
    }
    for (;;) {
      const elements = fresh ?? (yield* Actions.readElements(sp, action))
      fresh = undefined
      const now = Date.now()
      const signature = elements.map((e) => `${e.role}:${e.name}`).join("|")
      if (signature !== seen) {
        seen = signature
        if (now > started) changed = now
      }
      const inside = scoped(elements, within)
      const ranked = AccessibilityTree.rank(inside, verb, target)
      const choice = AccessibilityTree.choose(ranked)
      // A page that moved recently (a navigation or an action in the last 2 s) or is fetching may still render the
      // target: it is waited for up to the bound. A page long settled is looked at again for half a second, and longer
      // while its elements change and one of them resembles the target (a ticker or carousel is not rendering it).
      const quiet = sp.activity.idleMs() >= 2_000 && !sp.activity.fetching() && now - started >= 500
      const settled = quiet && (now - changed >= 1_000 || (choice._tag === "none" && choice.closest.length === 0))
      if (choice._tag === "one") return choice.chosen.element
      if (choice._tag === "ambiguous") {
        const tied = choice.tied.map((s) => s.element)
        const candidates = tied.map((e) => AccessibilityTree.describeIn(e))
        return yield* Effect.fail(
          new AmbiguousTarget({
            engine,
            action,
            target: wanted,
            candidates,
            elements: tied.map(Actions.refFor),
            message: `${tied.length} elements match ${wanted} equally well (${tied.map(AccessibilityTree.describeRef).join(", ")}); quote the name exactly as written${scopeHint(tied, action)}, or act on one of their references (e.g. {"ref": "${tied[0]!.ref}"})`
          })
        )
      }
      if (now >= deadline || settled) {
        const closest = choice.closest.map((s) => s.element)
        const shown = closest.length > 0 ? closest : AccessibilityTree.available(inside, verb)
        const places = contexts(elements)
        const what =
          within !== undefined && inside.length === 0
            ? `; nothing on the page sits in "${within}"${places.length > 0 ? ` (the page's groups, cards, rows and landmarks: ${places.join(", ")})` : ""}`
            : closest.length > 0
              ? `; closest (not acted on, the names differ): ${closest.map(AccessibilityTree.describeRef).join(", ")}`
              : shown.length > 0
                ? `; the page has ${shown.map(AccessibilityTree.describeRef).join(", ")}${within === undefined ? "" : ` in "${within}"`}`
                : ""
        return yield* Effect.fail(
          new ElementNotFound({
            engine,
            action,
            target: wanted,
            elements: shown.map(Actions.refFor),
            message: `no ${wanted} on ${sp.page.url()} (waited ${Date.now() - started} ms)${what}`
          })
        )
      }
      yield* Effect.promise(() => sleep(250))
    }
  })

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
    const element = yield* resolveTarget(sp, target.verb, target.target, input, target.within).pipe(
      Effect.withSpan("Instructions.resolve")
    )
    return yield* Actions.run(sp, actionFor(ins, element))
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
    const elements = yield* Actions.readElements(sp, input)
    return AccessibilityTree.rank(scoped(elements, target.within), target.verb, target.target)
      .slice(0, 10)
      .map((s) => {
        const a = actionFor(ins, s.element)
        return listed(s.element, a.method, a.arguments)
      })
  })

/**
 * An action on an element as observe lists it: described with role, name, what it sits in and its frame. A click on
 * a file input becomes an upload: a person reads one as "Resume (choose a file)", not as a button to click, and
 * clicking it only opens a chooser; the files go in the action's arguments. The replay level lists the elements it
 * finds again through this too, so a replayed observe says what the first one said.
 */
export const listed = (e: AccessibilityTree.Element, method: string, args: ReadonlyArray<string> = []): Action => {
  const selector = `aria-ref=${e.ref}`
  const description = `${AccessibilityTree.describeIn(e)}${e.frame === undefined ? "" : ` in ${e.frame}`}`
  if (e.upload !== true || (method !== "click" && method !== "setInputFiles"))
    return { selector, method, arguments: [...args], description }
  const hint = args.length === 0 ? " (put the files' paths in arguments, or use browser.upload)" : ""
  return {
    selector,
    method: "setInputFiles",
    arguments: [...args],
    description: `file upload ${description.replace(/^button /, "")}${hint}`
  }
}

/** An element as observe lists it: a fill of a text field, else a click on its reference. */
const asAction = (e: AccessibilityTree.Element): Action =>
  listed(e, ["textbox", "searchbox", "spinbutton"].includes(e.role) ? "fill" : "click")

/** "the Apply button of the Data Engineer job" → the target before a linking word, and what it sits in after it. */
const placed = (phrase: string) =>
  [...phrase.matchAll(/\s(?:of|in|for|under|inside|within|from|on|at)\s/gi)].map((m) => ({
    target: phrase.slice(0, m.index),
    scope: phrase.slice(m.index + m[0].length)
  }))

/** Phrases that ask for every control rather than one. */
const everything =
  /^(all|every|any|list)?\s*(the\s+)?(interactive\s+)?(elements?|controls?|fields?|inputs?|buttons?|links?|everything|page)?$/i

/** Whether an observe asks for every control of the page ("", "all controls") rather than for one. */
export const listsEverything = (instruction: string) => everything.test(instruction.trim())

/**
 * `observe`: a grammar sentence's Actions, else every element ranked against the phrase; a phrase that names no
 * element ("", "all controls") lists every interactive element of the page, named or not, in every frame.
 */
export const observe = (sp: SessionPage, { text: instruction, parsed }: Instruction.Said) =>
  Effect.gen(function* () {
    const actions = Result.isSuccess(parsed) ? yield* actionsFor(sp, parsed.success, instruction) : []
    if (actions.length > 0) return actions
    const elements = yield* Actions.readElements(sp, `observe ${instruction}`)
    const interactive = elements.filter(AccessibilityTree.isInteractive)
    if (listsEverything(instruction)) return interactive.map(asAction)
    // A target named with what it sits in ("the Apply button of the Data Engineer job"): the sure matches inside it.
    for (const { target, scope } of placed(instruction.trim())) {
      const inside = elements.filter((e) => AccessibilityTree.mentions(e, scope))
      const sure = AccessibilityTree.rank(inside, "any", target).filter((s) => s.match !== "loose")
      if (sure.length > 0) return sure.slice(0, 20).map((s) => asAction(s.element))
    }
    // A bare target phrase ("the email field"), or a grammar sentence that found nothing: rank every element.
    return AccessibilityTree.rank(elements, "any", instruction)
      .slice(0, 20)
      .map((s) => asAction(s.element))
  })
