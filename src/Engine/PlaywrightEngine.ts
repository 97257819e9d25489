/**
 * The LLM-free engine: playwright-core attached over CDP to the session's page. It runs concrete Actions, a small
 * instruction grammar (Instruction.ts) resolved through the accessibility tree (AccessibilityTree.ts), and page facts.
 */
import { DateTime, Effect, Layer, Result } from "effect"
import { type Browser, type CDPSession, chromium, errors, type Locator, type Page } from "playwright-core"
import { EndpointUnreachable } from "../Errors/Browser.ts"
import { CdpClosed, Timeout, Unsupported } from "../Errors/Engine.ts"
import type { SideEffect } from "../Errors/Fields.ts"
import { ActionFailed, AmbiguousTarget, ElementNotFound, InvalidInput, NavigationFailed } from "../Errors/Page.ts"
import { isSwitchyardError, type SwitchyardError } from "../Errors.ts"
import * as AccessibilityTree from "./AccessibilityTree.ts"
import { BrowserSession } from "./BrowserSession.ts"
import { type Action, type ActResult, type Capabilities, Engine, type ScreenshotOptions } from "./Engine.ts"
import * as Instruction from "./Instruction.ts"
import { goto, requireAbsoluteUrl } from "./Navigation.ts"
import * as PageFacts from "./PageFacts.ts"

export interface PlaywrightEngineOptions {
  /** Limit for `navigate` and history moves; default 30 s. */
  readonly navigationTimeoutMs?: number
  /** Limit for one page action, screenshot or evaluation; default 10 s. */
  readonly actionTimeoutMs?: number
  /** How long an Action's selector may take to appear before ElementNotFound; default 2 s. */
  readonly elementWaitMs?: number
  readonly connectTimeoutMs?: number
  /** Bound on disconnecting when the layer is released; default 5 s. */
  readonly releaseTimeoutMs?: number
  /** Cap on the visible text `extract` returns; default 20,000 characters. */
  readonly maxTextChars?: number
}

export const capabilities: Capabilities = {
  instructions: "grammar",
  actions: true,
  extract: "page-facts",
  observe: true,
  vision: false
}

// ---------------------------------------------------------------------------------------------------------------
// Errors: every playwright-core failure goes through `toEngineError`.

interface Attempt {
  /** What was being done, for the error's `action` and message. */
  readonly action: string
  readonly timeoutMs: number
  readonly sideEffect: SideEffect
  /** Set for navigations: network failures become NavigationFailed. */
  readonly url?: string
}

const engine = "playwright" as const
const closed =
  /target page, context or browser has been closed|target closed|browser has been closed|browser has disconnected|session closed|connection closed|websocket is not open|cdpsession.*detached/i
const badSelector =
  /unexpected token|is not a valid (selector|xpath)|failed to parse|unknown engine|malformed selector/i

const firstLine = (cause: unknown) =>
  (cause instanceof Error ? cause.message : String(cause)).split("\n")[0]!.replace(/^[\w.]+: /, "")

export const toEngineError = (cause: unknown, at: Attempt): SwitchyardError => {
  if (isSwitchyardError(cause)) return cause
  const message = firstLine(cause)
  const base = { engine, action: at.action }
  if (cause instanceof errors.TimeoutError) {
    return new Timeout({
      ...base,
      timeoutMs: at.timeoutMs,
      sideEffect: at.sideEffect,
      message: `${at.action} timed out after ${at.timeoutMs} ms: ${message}`
    })
  }
  if (closed.test(message)) {
    return new CdpClosed({
      ...base,
      sideEffect: at.sideEffect,
      message: `the browser connection closed during ${at.action}: ${message}`
    })
  }
  if (badSelector.test(message)) {
    return new InvalidInput({ ...base, field: "selector", message: `${at.action}: invalid selector: ${message}` })
  }
  if (at.url !== undefined) {
    if (/invalid url/i.test(message))
      return new InvalidInput({
        ...base,
        field: "url",
        message: `${at.url} is not a URL the browser can open: ${message}`
      })
    return new NavigationFailed({ ...base, url: at.url, message: `navigation to ${at.url} failed: ${message}` })
  }
  return new ActionFailed({ ...base, sideEffect: at.sideEffect, message: `${at.action} failed: ${message}` })
}

const attempt = <A>(at: Attempt, f: () => Promise<A>): Effect.Effect<A, SwitchyardError> =>
  Effect.tryPromise({ try: f, catch: (cause) => toEngineError(cause, at) })

const connectError = (endpoint: string, cause: unknown): SwitchyardError => {
  const message = firstLine(cause)
  return closed.test(message)
    ? new CdpClosed({ engine, action: "connect", message: `the browser closed the CDP connection: ${message}` })
    : new EndpointUnreachable({
        engine,
        action: "connect",
        endpoint,
        message: `cannot connect to ${endpoint}: ${message}`
      })
}

// ---------------------------------------------------------------------------------------------------------------
// Connecting: the session's page is the one whose CDP target id is `session.targetId`.

const targetIdOf = async (page: Page) => {
  const cdp = await page.context().newCDPSession(page)
  try {
    return (await cdp.send("Target.getTargetInfo")).targetInfo.targetId
  } finally {
    await cdp.detach().catch(() => undefined)
  }
}

const findPage = async (browser: Browser, targetId: string) => {
  const pages = browser.contexts().flatMap((c) => c.pages())
  for (const page of pages) {
    if ((await targetIdOf(page).catch(() => undefined)) === targetId) return { page, found: "target" as const }
  }
  if (pages[0] !== undefined) return { page: pages[0], found: "first" as const }
  const context = browser.contexts()[0] ?? (await browser.newContext())
  return { page: await context.newPage(), found: "new" as const }
}

// ---------------------------------------------------------------------------------------------------------------
// Actions in Stagehand's observe-result shape.

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
const toSelector = (selector: string) => {
  const s = selector.trim()
  return s.startsWith("/") || s.startsWith("(/") ? `xpath=${s}` : s
}

const quote = (s: string) => JSON.stringify(s)

// ---------------------------------------------------------------------------------------------------------------
// The engine.

const verbOf: Record<string, AccessibilityTree.Verb> = {
  click: "click",
  fill: "fill",
  type: "fill",
  select: "select",
  check: "check",
  press: "press",
  hover: "hover"
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

export const make = Effect.fn("PlaywrightEngine.make")(function* (options: PlaywrightEngineOptions = {}) {
  const navigationTimeoutMs = options.navigationTimeoutMs ?? 30_000
  const actionTimeoutMs = options.actionTimeoutMs ?? 10_000
  const elementWaitMs = options.elementWaitMs ?? 2_000
  const maxTextChars = options.maxTextChars ?? 20_000
  const session = yield* BrowserSession

  const browser = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () => chromium.connectOverCDP(session.wsEndpoint, { timeout: options.connectTimeoutMs ?? 15_000 }),
      catch: (cause) => connectError(session.wsEndpoint, cause)
    }),
    // On a connectOverCDP browser, close() only disconnects: the browser and its pages keep running.
    (browser) =>
      Effect.promise(() => browser.close().catch(() => undefined)).pipe(
        Effect.timeoutOption(options.releaseTimeoutMs ?? 5_000)
      )
  )
  const { page, found } = yield* attempt({ action: "connect", timeoutMs: actionTimeoutMs, sideEffect: "none" }, () =>
    findPage(browser, session.targetId)
  )
  if (found !== "target") {
    yield* Effect.logWarning(
      `PlaywrightEngine: the session's page ${session.targetId} is gone; using ${found === "first" ? "the first open page" : "a new page"}`
    )
  }

  const at = (action: string, sideEffect: SideEffect = "none", timeoutMs = actionTimeoutMs): Attempt => ({
    action,
    sideEffect,
    timeoutMs
  })

  const ensureConnected = (action: string) =>
    browser.isConnected() && !page.isClosed()
      ? Effect.void
      : Effect.fail(
          new CdpClosed({ engine, action, message: `${action}: the engine is no longer connected to the page` })
        )

  const withCdp = <A>(action: string, f: (cdp: CDPSession) => Promise<A>) =>
    attempt(at(action), async () => {
      const cdp = await page.context().newCDPSession(page)
      try {
        return await f(cdp)
      } finally {
        await cdp.detach().catch(() => undefined)
      }
    })

  const resolveTarget = (verb: AccessibilityTree.Verb, target: string, action: string) =>
    withCdp(action, (cdp) => AccessibilityTree.resolve(cdp, verb, target, { timeoutMs: actionTimeoutMs }))

  /** One clear best candidate, or the typed reason there is none. */
  const choose = (
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
        new ElementNotFound({ engine, action, target: wanted, message: `no ${wanted} on ${page.url()}${seen}` })
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

  /** Waits briefly for the selector, insists on exactly one match, then runs the method. */
  const runAction = Effect.fn("PlaywrightEngine.runAction")(function* (action: Action) {
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
    const option = method === "selectOption" ? yield* matchOption(locator, argument!, label) : undefined
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
      }
    })
    return done(past[method](action.description || action.selector, quote(argument ?? "")))
  })

  /** For a native <select>: the index of the option whose label or value matches, or ElementNotFound listing them. */
  const matchOption = (locator: Locator, wanted: string, label: string) =>
    Effect.gen(function* () {
      const options = yield* attempt(at(label), () =>
        locator.evaluate(PageFacts.selectOptions, undefined, { timeout: actionTimeoutMs })
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

  /** scroll up/down/top/bottom as a replayable `scrollTo` of the document. */
  const scrollAction = (direction: "up" | "down" | "top" | "bottom", label: string) =>
    attempt(at(label), () =>
      page.evaluate(() => ({
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

  const runInstruction = (ins: Instruction.Instruction, input: string) =>
    Effect.gen(function* () {
      if (ins.kind === "history") {
        const history = yield* withCdp(input, (cdp) => cdp.send("Page.getNavigationHistory"))
        const next = history.currentIndex + (ins.direction === "back" ? -1 : 1)
        if (next < 0 || next >= history.entries.length) {
          return yield* Effect.fail(
            new ActionFailed({
              engine,
              action: input,
              sideEffect: "none",
              message: `there is no page to go ${ins.direction} to`
            })
          )
        }
        // Wait for commit, then for a complete document: a page restored from the back/forward cache fires no load.
        yield* attempt({ ...at(input, "possible", navigationTimeoutMs), url: history.entries[next]!.url }, async () => {
          const options = { waitUntil: "commit", timeout: navigationTimeoutMs } as const
          await (ins.direction === "back" ? page.goBack(options) : page.goForward(options))
          await page.waitForFunction(() => document.readyState === "complete", undefined, {
            timeout: navigationTimeoutMs
          })
        })
        return { success: true, description: `went ${ins.direction} to ${page.url()}` } satisfies ActResult
      }
      if (ins.kind === "scroll") return yield* runAction(yield* scrollAction(ins.direction, input))
      const keyboard = keyboardFor(ins)
      if (keyboard !== undefined) return yield* runAction(keyboard)
      const target = targetOf(ins)
      if (target === undefined) return yield* Effect.die(new Error(`no target in ${ins.kind} instruction`))
      const resolution = yield* resolveTarget(target.verb, target.target, input)
      const best = yield* choose(resolution, target.verb, target.target, input)
      return yield* runAction(actionFor(ins, best))
    })

  const actionsFor = (ins: Instruction.Instruction, input: string) =>
    Effect.gen(function* () {
      if (ins.kind === "history") return []
      if (ins.kind === "scroll") return [yield* scrollAction(ins.direction, input)]
      const keyboard = keyboardFor(ins)
      if (keyboard !== undefined) return [keyboard]
      const target = targetOf(ins)
      if (target === undefined) return []
      const { candidates } = yield* resolveTarget(target.verb, target.target, input)
      return candidates.map((c) => actionFor(ins, c))
    })

  return Engine.of({
    kind: "playwright",
    capabilities,

    navigate: Effect.fn("PlaywrightEngine.navigate")(function* (url: string) {
      const label = `navigate ${url}`
      yield* ensureConnected(label)
      yield* requireAbsoluteUrl(engine, label, url)
      const response = yield* attempt({ ...at(label, "possible", navigationTimeoutMs), url }, () =>
        goto(page, url, navigationTimeoutMs)
      )
      const title = yield* attempt(at(label), () => page.title())
      return { url: page.url(), title, status: response?.status() ?? null }
    }),

    act: Effect.fn("PlaywrightEngine.act")(function* (input: string | Action) {
      yield* ensureConnected(typeof input === "string" ? input : `${input.method} ${input.selector}`)
      if (typeof input !== "string") return yield* runAction(input)
      const ins = yield* Effect.fromResult(Instruction.parse(input))
      return yield* runInstruction(ins, input)
    }),

    observe: Effect.fn("PlaywrightEngine.observe")(function* (instruction: string) {
      yield* ensureConnected(`observe ${instruction}`)
      const parsed = Instruction.parse(instruction)
      const actions = Result.isSuccess(parsed) ? yield* actionsFor(parsed.success, instruction) : []
      if (actions.length > 0) return actions
      // A bare target phrase ("the email field"), or a grammar sentence that found nothing: rank every element.
      const { candidates } = yield* resolveTarget("any", instruction, `observe ${instruction}`)
      return candidates.map(
        (c): Action => ({
          selector: `xpath=${c.xpath}`,
          method: "click",
          arguments: [],
          description: AccessibilityTree.describe(c)
        })
      )
    }),

    extract: Effect.fn("PlaywrightEngine.extract")(function* (_instruction: string, jsonSchema?: unknown) {
      yield* ensureConnected("extract")
      const raw = yield* attempt(at("extract"), () => page.evaluate(PageFacts.collectFacts, maxTextChars))
      return jsonSchema === undefined
        ? PageFacts.toFacts(raw)
        : yield* Effect.fromResult(PageFacts.fillSchema(raw, jsonSchema))
    }),

    screenshot: Effect.fn("PlaywrightEngine.screenshot")(function* (options?: ScreenshotOptions) {
      yield* ensureConnected("screenshot")
      const png = yield* attempt(at("screenshot"), () =>
        page.screenshot({ type: "png", fullPage: options?.fullPage ?? false, timeout: actionTimeoutMs })
      )
      return new Uint8Array(png)
    }),

    pageState: Effect.fn("PlaywrightEngine.pageState")(function* () {
      yield* ensureConnected("pageState")
      const state = yield* attempt(at("pageState"), () =>
        page.evaluate(() => ({ title: document.title, scrollX: window.scrollX, scrollY: window.scrollY }))
      )
      const now = yield* DateTime.now
      return { url: page.url(), ...state, timestamp: DateTime.formatIso(now) }
    }),

    connected: () => Effect.sync(() => browser.isConnected() && !page.isClosed())
  })
})

export const layer = (options: PlaywrightEngineOptions = {}): Layer.Layer<Engine, SwitchyardError, BrowserSession> =>
  Layer.effect(Engine, make(options))
