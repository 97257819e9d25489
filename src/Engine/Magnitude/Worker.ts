/**
 * The worker thread MagnitudeEngine runs magnitude-core in. Its model calls go through BAML, which retries and cannot
 * be aborted: terminating this thread is what really stops a call. Every handler answers an Outcome, never throws.
 */
import { createRequire } from "node:module"
import type { BrowserAgent, LLMClient } from "magnitude-core"
import { type Browser, chromium, errors, type Locator, type Page } from "playwright-core"
import type { SideEffect } from "../../Errors/Fields.ts"
import { serve } from "../Isolated.ts"
import { goto } from "../Navigation.ts"
import { InvalidSchema, toZod, type Zod3 } from "./JsonSchema.ts"
import type { ActDone, Init, Limits, LlmClient, Outcome, Problem, Started, WireAction } from "./Protocol.ts"

// Magnitude's pino logger and any console output from this thread land on the host's stdout, which may be a JSON-RPC
// channel: silence the logger (read when the module loads, hence the dynamic import below) and send console to stderr.
process.env.MAGNITUDE_LOG_LEVEL ??= "silent"
console.log = console.error
console.info = console.error
console.debug = console.error

/** A failure already described for the engine's error mapping. */
class Failed extends Error {
  readonly problem: Problem
  constructor(problem: Problem) {
    super(problem.message)
    this.problem = problem
  }
}

const nameOf = (error: unknown) => (error instanceof Error ? error.name : "Error")
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

const browserProblem = (error: unknown, sideEffect: SideEffect): Problem =>
  error instanceof Failed
    ? error.problem
    : {
        source: "browser",
        name: error instanceof errors.TimeoutError ? "TimeoutError" : nameOf(error),
        message: messageOf(error),
        sideEffect
      }

const isBamlError = (error: unknown) => nameOf(error).startsWith("Baml") || /^BamlError:/.test(messageOf(error))

/** A model-call failure: BAML's HTTP errors carry `status_code`. */
const llmProblem = (error: unknown, sideEffect: SideEffect): Problem => {
  const status = (error as { status_code?: unknown }).status_code
  return {
    source: "llm",
    name: nameOf(error),
    message: messageOf(error),
    sideEffect,
    ...(typeof status === "number" ? { status } : {})
  }
}

const guard =
  <Args extends Array<unknown>, A>(f: (...args: Args) => Promise<A>) =>
  async (...args: Args): Promise<Outcome<A>> => {
    try {
      return { ok: true, value: await f(...args) }
    } catch (error) {
      return { ok: false, problem: browserProblem(error, "none") }
    }
  }

// ---------------------------------------------------------------------------------------------------------------
// Connecting to the session's page.

const targetIdOf = async (page: Page) => {
  const cdp = await page.context().newCDPSession(page)
  try {
    return (await cdp.send("Target.getTargetInfo")).targetInfo.targetId
  } finally {
    await cdp.detach().catch(() => undefined)
  }
}

const findPage = async (browser: Browser, targetId: string): Promise<{ page: Page; found: Started["found"] }> => {
  const pages = browser.contexts().flatMap((c) => c.pages())
  for (const page of pages) {
    if ((await targetIdOf(page).catch(() => undefined)) === targetId) return { page, found: "target" }
  }
  if (pages[0] !== undefined) return { page: pages[0], found: "first" }
  const context = browser.contexts()[0] ?? (await browser.newContext())
  return { page: await context.newPage(), found: "new" }
}

/** Magnitude's own client config; its options decide the agent's defaults (Claude gets a 1024×768 virtual screen). */
const magnitudeClient = (llm: LlmClient): LLMClient =>
  ({
    provider: llm.provider,
    options: {
      model: llm.model,
      apiKey: llm.apiKey,
      temperature: llm.temperature,
      ...(llm.baseUrl === undefined ? {} : { baseUrl: llm.baseUrl })
    }
  }) as LLMClient

/**
 * The BAML client options magnitude-core would register (its `convertToBamlClientOptions`), registered again without
 * its `DefaultRetryPolicy` (5 retries, exponential from 500 ms: ≈ 25 s of hidden retries per failing call).
 */
const bamlOptions = (llm: LlmClient): Record<string, unknown> => {
  const base = llm.baseUrl === undefined ? {} : { base_url: llm.baseUrl }
  switch (llm.provider) {
    case "openai-generic":
      return {
        ...base,
        api_key: llm.apiKey,
        model: llm.model,
        temperature: llm.temperature,
        headers: { "HTTP-Referer": "https://magnitude.run", "X-Title": "Magnitude" }
      }
    case "openai":
      return { ...base, api_key: llm.apiKey, model: llm.model, temperature: llm.temperature }
    case "anthropic":
      // Magnitude turns prompt caching on for Claude models and marks memory with cache_control metadata.
      return {
        ...base,
        api_key: llm.apiKey,
        model: llm.model,
        temperature: llm.temperature,
        ...(llm.model.includes("claude")
          ? { allowed_role_metadata: "all", headers: { "anthropic-beta": "prompt-caching-2024-07-31" } }
          : {})
      }
    case "google-ai":
      return { ...base, api_key: llm.apiKey, model: llm.model, generationConfig: { temperature: llm.temperature } }
  }
}

/** magnitude-core's internals this worker adjusts: they are private in its types but plain fields at runtime. */
interface ModelInternals {
  readonly cr: {
    addLlmClient(name: string, provider: string, options: Record<string, unknown>, retryPolicy?: string): void
  }
}
interface PlannedTurn {
  readonly reasoning: string
  readonly actions: ReadonlyArray<{ readonly variant: string }>
}
interface AgentInternals {
  readonly models: {
    readonly uniqueModels: ReadonlyArray<ModelInternals>
    partialAct: (...args: Array<unknown>) => Promise<PlannedTurn>
  }
  exec: (action: { readonly variant: string }, memory?: unknown) => Promise<void>
}
interface HarnessInternals {
  readonly page: unknown
  switchTab(options: { index: number }): Promise<void>
  stop(): Promise<void>
  screenshot(): Promise<unknown>
}
interface ExtractInternals {
  readonly models: {
    extract(instructions: string, schema: unknown, screenshot: unknown, domContent: string): Promise<unknown>
  }
}
interface MarkdownLibrary {
  partitionHtml(html: string, options: Record<string, unknown>): unknown
  serializeToMarkdown(partition: unknown, options: Record<string, unknown>): string
}

// BrowserAgent.extract's options for turning the page into markdown for the model.
const partitionOptions = {
  extractImages: true,
  extractForms: true,
  extractLinks: true,
  skipNavigation: false,
  minTextLength: 3,
  includeOriginalHtml: false,
  includeMetadata: true
}
const markdownOptions = {
  includeMetadata: false,
  includePageNumbers: true,
  includeElementIds: false,
  includeCoordinates: false,
  preserveHierarchy: true,
  escapeSpecialChars: true,
  includeFormFields: true,
  includeImageMetadata: true
}

/**
 * The page's HTML with its frames' content appended. BrowserAgent.extract gets the same by replacing every iframe in
 * the live page with a static copy of its content, which breaks the page (scripts, form state) for later calls.
 */
const pageHtml = async (page: Page) => {
  const html = await page.content()
  const children = page.frames().filter((frame) => frame !== page.mainFrame())
  const frames = await Promise.all(children.map((frame) => frame.content().catch(() => "")))
  const bodies = frames.map((frame) => /<body[^>]*>([\s\S]*)<\/body>/i.exec(frame)?.[1] ?? "").filter((b) => b !== "")
  if (bodies.length === 0) return html
  const appended = bodies.map((body) => `<div data-frame-content="true">${body}</div>`).join("")
  return /<\/body>/i.test(html) ? html.replace(/<\/body>(?![\s\S]*<\/body>)/i, `${appended}</body>`) : html + appended
}

// ---------------------------------------------------------------------------------------------------------------
// Concrete Actions, run through the session page's Playwright API without the model.

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

const toSelector = (selector: string) => {
  const s = selector.trim()
  return s.startsWith("/") || s.startsWith("(/") ? `xpath=${s}` : s
}

const runAction = async (page: Page, action: WireAction, limits: Limits): Promise<string> => {
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

// ---------------------------------------------------------------------------------------------------------------

/** The per-`act` counters the step limit reads, and the first failure seen before magnitude rewraps it. */
interface Run {
  turns: number
  actions: number
  reasoning: string
  problem: Problem | undefined
}

serve(async (init: Init) => {
  const { limits, llm } = init
  let browser: Browser
  try {
    browser = await chromium.connectOverCDP(init.wsEndpoint, { timeout: init.connectTimeoutMs })
  } catch (error) {
    throw Object.assign(new Error(messageOf(error)), { name: "ConnectFailed" })
  }
  const { page, found } = await findPage(browser, init.targetId)

  const magnitude = await import("magnitude-core")
  // Load what magnitude-core itself resolves: its own zod 3 (extract needs that one) and its HTML-to-markdown library.
  const fromMagnitude = createRequire(createRequire(import.meta.url).resolve("magnitude-core"))
  const zod = fromMagnitude("zod") as Zod3
  const markdown = fromMagnitude("magnitude-extract") as MarkdownLibrary
  // The session page's own context, so the agent drives that page with its cookies and state, not a fresh context.
  const agent: BrowserAgent = await magnitude.startBrowserAgent({
    // magnitude-core types its context with the patchright it bundles; a playwright-core context works the same.
    browser: { context: page.context() as unknown as BrowserAgent["context"] },
    llm: magnitudeClient(llm),
    telemetry: false
  })
  const internals = agent as unknown as AgentInternals
  const harness = agent.require(magnitude.BrowserConnector).getHarness() as unknown as HarnessInternals
  for (const model of internals.models.uniqueModels) model.cr.addLlmClient("Magnus", llm.provider, bamlOptions(llm))

  let run: Run | undefined
  const sideEffectOf = (r: Run) => (r.actions > 0 ? "possible" : "none")

  // Every planning call passes here: count it against the step limit, and keep the original failure, because magnitude
  // rewraps it as "Error planning actions: …" and retries some messages ("401 Unauthorized", "No actions generated")
  // three more times; the error thrown onwards matches none of those, so magnitude gives up at once.
  const partialAct = internals.models.partialAct.bind(internals.models)
  internals.models.partialAct = async (...args) => {
    const current = run
    if (current === undefined) return partialAct(...args)
    if (current.turns >= limits.maxSteps) {
      current.problem ??= {
        source: "limit",
        name: "StepLimit",
        message: `act stopped after ${current.turns} model turns and ${current.actions} actions: the step limit is ${limits.maxSteps} turns`,
        sideEffect: "possible"
      }
      throw new Error("switchyard: step limit reached")
    }
    current.turns++
    let turn: PlannedTurn
    try {
      turn = await partialAct(...args)
    } catch (error) {
      current.problem ??= llmProblem(error, sideEffectOf(current))
      throw new Error("switchyard: the model call failed")
    }
    if (turn.actions.length === 0) {
      current.problem ??= {
        source: "llm_response",
        name: "NoActions",
        message: "the model answered without any action",
        sideEffect: sideEffectOf(current)
      }
      throw new Error("switchyard: the model proposed nothing")
    }
    current.reasoning = turn.reasoning
    return turn
  }

  // Every action the model chose passes here: count it against the action limit before it runs.
  const exec = internals.exec.bind(agent)
  internals.exec = async (action, memory) => {
    const current = run
    if (current === undefined || action.variant.startsWith("task:")) {
      return exec(action, memory).catch((error) => {
        if (current !== undefined && action.variant === "task:fail") {
          current.problem ??= {
            source: "gave_up",
            name: "TaskFailed",
            message: messageOf(error),
            sideEffect: "possible"
          }
        }
        throw error
      })
    }
    if (current.actions >= limits.maxActions) {
      current.problem ??= {
        source: "limit",
        name: "ActionLimit",
        message: `act stopped after ${current.actions} actions in ${current.turns} model turns: the action limit is ${limits.maxActions}`,
        sideEffect: "possible"
      }
      throw new Error("switchyard: action limit reached")
    }
    try {
      await exec(action, memory)
      current.actions++
    } catch (error) {
      // Magnitude validates the model's action before running it.
      const invalid = /violates input schema|Undefined action type/.test(messageOf(error))
      current.problem ??= invalid
        ? { source: "llm_response", name: nameOf(error), message: messageOf(error), sideEffect: sideEffectOf(current) }
        : browserProblem(error, "possible")
      if (!invalid) current.actions++
      throw error
    }
  }

  /** Makes the session's page the agent's active tab again (a click may have opened and switched to another). */
  const focus = async () => {
    if (page.isClosed() || !browser.isConnected()) {
      throw new Failed({
        source: "browser",
        name: "PageClosed",
        message: "the session's page or browser has been closed",
        sideEffect: "none"
      })
    }
    if (harness.page !== (page as unknown)) await harness.switchTab({ index: page.context().pages().indexOf(page) })
  }

  const disconnected = new Promise<string>((resolve) => {
    if (!browser.isConnected()) resolve("the browser connection closed")
    browser.once("disconnected", () => resolve("the browser connection closed"))
    page.once("close", () => resolve("the session's page was closed"))
  })

  return {
    started: (): Started => ({ found }),

    /** Answers when the browser connection or the session's page goes away. */
    disconnected: () => disconnected,

    navigate: guard(async (url: string) => {
      await focus()
      try {
        const response = await goto(page, url, limits.navigationTimeoutMs)
        return { url: page.url(), title: await page.title(), status: response?.status() ?? null }
      } catch (error) {
        throw new Failed({ ...browserProblem(error, "possible"), url })
      }
    }),

    act: guard(async (instruction: string): Promise<ActDone> => {
      await focus()
      const current: Run = { turns: 0, actions: 0, reasoning: "", problem: undefined }
      run = current
      try {
        await agent.act(instruction)
      } catch (error) {
        throw new Failed(current.problem ?? browserProblem(error, sideEffectOf(current)))
      } finally {
        run = undefined
      }
      return { turns: current.turns, actions: current.actions, reasoning: current.reasoning }
    }),

    runAction: guard(async (action: WireAction) => {
      await focus()
      return runAction(page, action, limits)
    }),

    extract: guard(async (instruction: string, jsonSchema: unknown) => {
      let schema: ReturnType<typeof toZod>
      try {
        schema = jsonSchema === undefined ? zod.string().describe("the requested information") : toZod(zod, jsonSchema)
      } catch (error) {
        if (!(error instanceof InvalidSchema)) throw error
        throw new Failed({
          source: "invalid",
          name: error.name,
          field: "schema",
          message: `the schema cannot be used by magnitude: ${error.message}`,
          sideEffect: "none"
        })
      }
      await focus()
      try {
        // BrowserAgent.extract's steps, without its iframe rewriting: page markdown, a screenshot, the extract model.
        const partition = markdown.partitionHtml(await pageHtml(page), partitionOptions)
        const content = markdown.serializeToMarkdown(partition, markdownOptions)
        const screenshot = await harness.screenshot()
        return await (agent as unknown as ExtractInternals).models.extract(instruction, schema, screenshot, content)
      } catch (error) {
        throw new Failed(isBamlError(error) ? llmProblem(error, "none") : browserProblem(error, "none"))
      }
    }),

    screenshot: guard(async (fullPage: boolean) => {
      await focus()
      return new Uint8Array(await page.screenshot({ type: "png", fullPage, timeout: limits.actionTimeoutMs }))
    }),

    pageState: guard(async () => {
      await focus()
      const state = await page.evaluate(() => ({
        title: document.title,
        scrollX: window.scrollX,
        scrollY: window.scrollY
      }))
      return { url: page.url(), ...state }
    }),

    /** Stops magnitude's tab polling and disconnects; the browser and its pages keep running. */
    close: async () => {
      await harness.stop().catch(() => undefined)
      await browser.close().catch(() => undefined)
    }
  }
})
