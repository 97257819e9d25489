/**
 * The LLM-free engine: playwright-core attached over CDP to the session's page. It runs concrete Actions
 * (Playwright/Actions.ts), a small instruction grammar resolved through the accessibility tree
 * (Playwright/Instructions.ts), and page facts; its failures are mapped in Playwright/Errors.ts.
 */
import { DateTime, Effect, Layer, Option } from "effect"
import type { Frame, Page } from "playwright-core"
import type { SwitchyardError } from "../Errors.ts"
import * as AccessibilityTree from "./AccessibilityTree.ts"
import { BrowserSession } from "./BrowserSession.ts"
import {
  type Action,
  type ActResult,
  type Capabilities,
  Engine,
  type ExtractOptions,
  type ScreenshotOptions,
  type SnapshotOptions,
  type WaitCondition
} from "./Engine.ts"
import * as Instruction from "./Instruction.ts"
import { goto, requireAbsoluteUrl } from "./Navigation.ts"
import * as Focus from "./PageFacts/Focus.ts"
import * as PageFacts from "./PageFacts.ts"
import * as PageShot from "./PageShot.ts"
import * as Actions from "./Playwright/Actions.ts"
import * as Labels from "./Playwright/Elements/Labels.ts"
import * as Elements from "./Playwright/Elements.ts"
import { attempt, engine } from "./Playwright/Errors.ts"
import * as Evaluate from "./Playwright/Evaluate.ts"
import * as Identify from "./Playwright/Identify.ts"
import * as Instructions from "./Playwright/Instructions.ts"
import * as SessionPage from "./Playwright/Page.ts"
import * as Snapshot from "./Playwright/Snapshot.ts"
import * as Waits from "./Playwright/Waits.ts"

export interface PlaywrightEngineOptions {
  /** Limit for `navigate` and history moves; default 30 s. */
  readonly navigationTimeoutMs?: number
  /** Limit for one page action, screenshot or evaluation; default 10 s. */
  readonly actionTimeoutMs?: number
  /** How long a target (name, reference, selector) may take to appear before ElementNotFound; default 5 s. */
  readonly elementWaitMs?: number
  readonly connectTimeoutMs?: number
  /** Bound on disconnecting when the layer is released; default 5 s. */
  readonly releaseTimeoutMs?: number
  /** Cap on the visible text one `extract` returns (the rest is read with an offset); default 20,000 characters. */
  readonly maxTextChars?: number
}

/** The Action methods after which the page most often shows something else. */
const changing = new Set(["click", "doubleClick", "press", "scrollTo"])

/** The most text read from a page at once: past it, a page's text is cut there (and the answer says so). */
const wholeTextChars = 2_000_000

/** Merges the facts of the main frame and of its first twenty child frames (cross-origin ones too) into one page,
 * with its whole text. Fields of child frames lose their boxes (they are measured in another frame). */
const merged = (main: PageFacts.RawFacts, children: ReadonlyArray<PageFacts.RawFacts | undefined>) => {
  const all = {
    ...main,
    headings: [...main.headings],
    links: [...main.links],
    fields: [...main.fields],
    tables: main.tables === undefined ? undefined : [...main.tables]
  }
  for (const f of children) {
    if (f === undefined) continue
    all.text = `${all.text}\n${f.text}`.slice(0, wholeTextChars)
    all.textLength += 1 + f.textLength
    all.headings.push(...f.headings)
    all.links.push(...f.links)
    all.fields.push(...f.fields.map((field) => ({ ...field, box: undefined })))
    if (f.items.length > all.items.length) all.items = f.items
    if (f.tables !== undefined) all.tables = [...(all.tables ?? []), ...f.tables]
  }
  return all
}

const collect = (tables: boolean) => `(${PageFacts.collectFacts})(${wholeTextChars}, ${tables})`

/** The page's facts, each frame read on its own: `read` holds those a frame already gave (the elements' visit). */
const readFacts = async (
  page: Page,
  tables: boolean,
  read: ReadonlyMap<Frame, PageFacts.RawFacts> = new Map()
): Promise<PageFacts.RawFacts> => {
  const main = read.get(page.mainFrame()) ?? ((await page.evaluate(collect(tables))) as PageFacts.RawFacts)
  const children = await Promise.all(
    page
      .frames()
      .filter((f) => f !== page.mainFrame())
      .slice(0, 20)
      .map(
        (f) =>
          read.get(f) ?? Elements.within(2_000, f.evaluate(collect(tables)) as Promise<PageFacts.RawFacts>, undefined)
      )
  )
  return merged(main, children)
}

/** Fields take the names their elements carry (the same in observe, controls and the grammar), matched by box. */
const namedLike = (raw: PageFacts.RawFacts, elements: ReadonlyArray<AccessibilityTree.Element>): PageFacts.RawFacts => {
  const measured = elements.filter((e) => e.box !== undefined && e.frame === undefined && e.name !== "")
  return {
    ...raw,
    fields: raw.fields.map((field) => {
      const box = field.box
      if (box === undefined) return field
      const same = measured.filter((e) => Labels.sameBox(e.box!, box))
      // A box may hold a wrapper and its field: the one whose role fits a field.
      const element = same.find((e) => e.role !== "generic") ?? same[0]
      return element === undefined ? field : { ...field, label: element.name }
    })
  }
}

export const capabilities: Capabilities = {
  instructions: "grammar",
  actions: true,
  extract: "page-facts",
  observe: true,
  vision: false,
  references: true
}

export const make = Effect.fn("PlaywrightEngine.make")(function* (options: PlaywrightEngineOptions = {}) {
  const maxTextChars = options.maxTextChars ?? 20_000
  /** A page's text from an offset, at most `maxTextChars` of it; `truncated` says when there is more or less. */
  const textFrom = (raw: PageFacts.RawFacts, from: number) => {
    const offset = Math.min(from, raw.text.length)
    const text = raw.text.slice(offset, offset + maxTextChars)
    return offset > 0 || offset + text.length < raw.textLength
      ? { text, truncated: PageFacts.truncation(offset, text.length, raw.textLength) }
      : { text }
  }
  /** The page's facts and its elements, read in one visit of each frame (a frame that gave no facts is read again). */
  const facts = (label: string, tables: boolean) =>
    attempt(at(label), async () => {
      const current = await sp.elements.current(sp.limits.actionTimeoutMs, "values", {
        maxText: wholeTextChars,
        tables
      })
      const raw = await readFacts(page, tables, current.facts)
      return [namedLike(raw, current.elements), current.elements] as const
    })
  const session = yield* BrowserSession
  const sp = yield* SessionPage.connect({
    wsEndpoint: session.wsEndpoint,
    targetId: session.targetId,
    limits: {
      navigationTimeoutMs: options.navigationTimeoutMs ?? 30_000,
      actionTimeoutMs: options.actionTimeoutMs ?? 10_000,
      elementWaitMs: options.elementWaitMs ?? 5_000
    },
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    ...(options.releaseTimeoutMs === undefined ? {} : { releaseTimeoutMs: options.releaseTimeoutMs })
  })
  const { page, at } = sp
  const { navigationTimeoutMs, actionTimeoutMs } = sp.limits
  const snapshots = Snapshot.make(sp)
  const shots = PageShot.make(page)
  /** After a page loaded, or an act that most often changes what it shows (a click, a key, a scroll, a move in its
   * history), its elements are read in the background, within the action limit: the next sentence act or extract
   * finds them kept (a call that comes meanwhile waits for the read). After an act its facts too, as an extract reads
   * them: what it changed is what is read next, most often. */
  const readAhead = (facts: boolean) =>
    sp.elements.ahead(actionTimeoutMs, facts ? { maxText: wholeTextChars, tables: false } : undefined)
  const aheadAfter = (result: ActResult) => {
    const method = result.action?.method
    if (method === undefined || changing.has(method) || result.navigated !== undefined) readAhead(true)
  }

  return Engine.of({
    kind: "playwright",
    capabilities,

    navigate: Effect.fn("PlaywrightEngine.navigate")(function* (url: string) {
      const label = `navigate ${url}`
      yield* sp.ensureConnected(label)
      yield* requireAbsoluteUrl(engine, label, url)
      const response = yield* attempt({ ...at(label, "possible", navigationTimeoutMs), url }, () =>
        goto(page, url, navigationTimeoutMs)
      )
      const title = yield* attempt(at(label), () => page.title())
      readAhead(false)
      return { url: page.url(), title, status: response?.status() ?? null }
    }),

    act: Effect.fn("PlaywrightEngine.act")(function* (input: Instruction.Said | Action) {
      if (!Instruction.isSaid(input)) {
        yield* sp.ensureConnected(`${input.method} ${input.selector}`)
        return yield* Actions.run(sp, input).pipe(Effect.tap((result) => Effect.sync(() => aheadAfter(result))))
      }
      yield* sp.ensureConnected(input.text)
      const ins = yield* Effect.fromResult(input.parsed)
      return yield* Instructions.run(sp, ins, input.text).pipe(
        Effect.tap((result) => Effect.sync(() => aheadAfter(result)))
      )
    }),

    observe: Effect.fn("PlaywrightEngine.observe")(function* (instruction: Instruction.Said) {
      yield* sp.ensureConnected(`observe ${instruction.text}`)
      return yield* Instructions.observe(sp, instruction)
    }),

    extract: Effect.fn("PlaywrightEngine.extract")(function* (
      instruction: string,
      jsonSchema?: unknown,
      options?: ExtractOptions
    ) {
      yield* sp.ensureConnected("extract")
      if (jsonSchema !== undefined) {
        const [raw] = yield* facts("extract", false)
        return yield* Effect.fromResult(PageFacts.fillSchema(raw, jsonSchema))
      }
      if (options?.offset !== undefined) {
        // Reading on in a long page's text: the text from the offset, without the page's elements again.
        const raw = yield* attempt(at("extract"), () => readFacts(page, false))
        return { url: raw.url, title: raw.title, ...textFrom(raw, options.offset) }
      }
      const [raw, elements] = yield* facts("extract", Focus.asksForTable(instruction))
      // Bounded, as a page of thousands of links would be: the first 500 in document order.
      const controls = elements
        .filter(AccessibilityTree.isInteractive)
        .slice(0, 500)
        .map(
          (e): PageFacts.Control => ({
            ref: e.ref,
            role: e.role,
            name: e.name,
            ...(e.value === undefined ? {} : { value: e.value }),
            ...(e.checked === undefined ? {} : { checked: e.checked }),
            ...(e.disabled ? { disabled: true } : {}),
            ...(e.frame === undefined ? {} : { frame: e.frame }),
            ...(e.context === undefined ? {} : { context: e.context })
          })
        )
      const { text: _text, truncated: _truncated, ...rest } = PageFacts.toFacts(raw)
      const tables = Focus.tablesFor(instruction, raw)
      if (tables !== undefined) return { tables, ...rest, controls }
      const answer = Focus.focus(instruction, raw, controls)
      const pageTables = raw.tables === undefined ? {} : { tables: raw.tables }
      // What was asked comes first; the page's text only when nothing narrower answered.
      if (answer === undefined) return { ...rest, ...textFrom(raw, 0), ...pageTables, controls }
      return { answer, ...rest, ...pageTables, controls }
    }),

    screenshot: Effect.fn("PlaywrightEngine.screenshot")(function* (options?: ScreenshotOptions) {
      yield* sp.ensureConnected("screenshot")
      return yield* attempt(at("screenshot"), () =>
        shots({ fullPage: options?.fullPage ?? false, timeoutMs: actionTimeoutMs })
      )
    }),

    pageState: Effect.fn("PlaywrightEngine.pageState")(function* () {
      yield* sp.ensureConnected("pageState")
      const state = yield* attempt(at("pageState"), () =>
        page.evaluate(() => ({ title: document.title, scrollX: window.scrollX, scrollY: window.scrollY }))
      )
      const now = yield* DateTime.now
      return { url: page.url(), ...state, timestamp: DateTime.formatIso(now) }
    }),

    snapshot: (options: SnapshotOptions) =>
      sp.ensureConnected("snapshot").pipe(Effect.andThen(snapshots.take(options))),

    waitFor: (condition: WaitCondition) =>
      sp.ensureConnected("wait_for").pipe(Effect.andThen(Waits.waitFor(sp, condition))),

    elements: () =>
      sp.ensureConnected("fill_form").pipe(
        Effect.andThen(Actions.currentElements(sp, "fill_form", "names")),
        Effect.map((c) => c.elements)
      ),

    identify: (selector: string) =>
      sp.connected() ? Identify.identify(sp, selector) : Effect.succeed(Option.none<AccessibilityTree.Element>()),

    evaluate: (expression: string, frame?: string) =>
      sp.ensureConnected("evaluate").pipe(Effect.andThen(Evaluate.evaluate(sp, expression, frame))),

    connected: () => Effect.sync(sp.connected)
  })
})

/**
 * Loads playwright-core, once: the service starts without it and loads it while the first browser starts, after the
 * moment that browser's launch takes to spawn Chromium (loading first would hold the spawn back by the whole load).
 */
export const warm: Effect.Effect<void> = Effect.promise(() => SessionPage.preload(50)).pipe(Effect.asVoid)

export const layer = (options: PlaywrightEngineOptions = {}): Layer.Layer<Engine, SwitchyardError, BrowserSession> =>
  Layer.effect(Engine, make(options))
