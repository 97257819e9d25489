/**
 * The worker thread MagnitudeEngine runs magnitude-core in. Its model calls go through BAML, which retries and cannot
 * be aborted: terminating this thread is what really stops a call. It loads magnitude-core once; each attach starts a
 * new agent on the session's page, and detaching stops it. Every handler answers an Outcome, never throws.
 */
import { type Browser, chromium } from "playwright-core"
import { serve } from "../Isolated.ts"
import { goto } from "../Navigation.ts"
import { findPage } from "../Playwright/Page.ts"
import * as Actions from "./Actions.ts"
import * as Agent from "./Agent.ts"
import * as Extract from "./Extract.ts"
import { browserProblem, Failed, guard, messageOf } from "./Problem.ts"
import type { ActDone, Init, Started, WireAction } from "./Protocol.ts"

// Magnitude's pino logger and any console output from this thread land on the host's stdout, which may be a JSON-RPC
// channel: silence the logger (read when the module loads, hence the dynamic import below) and send console to stderr.
process.env.MAGNITUDE_LOG_LEVEL ??= "silent"
console.log = console.error
console.info = console.error
console.debug = console.error

// Loaded before `serve` says the thread is ready: the host never terminates it while BAML's native module loads.
const magnitude = await import("magnitude-core")
const extract = Extract.load()

serve(async (init: Init) => {
  const { limits, llm } = init
  let browser: Browser
  try {
    browser = await chromium.connectOverCDP(init.wsEndpoint, { timeout: init.connectTimeoutMs })
  } catch (error) {
    // The original's frames go along, for the mapped error's cause.
    const failure = Object.assign(new Error(messageOf(error)), { name: "ConnectFailed" })
    if (error instanceof Error && error.stack !== undefined) failure.stack = error.stack
    throw failure
  }
  // Playwright dismisses a dialog nobody listens for: the session decides them (held for the agent by default).
  for (const context of browser.contexts()) context.on("dialog", () => undefined)
  const { page, found } = await findPage(browser, init.targetId)

  const agent = await Agent.start(magnitude, browser, page, llm, limits)

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
      await agent.focus()
      try {
        const response = await goto(page, url, limits.navigationTimeoutMs)
        return { url: page.url(), title: await page.title(), status: response?.status() ?? null }
      } catch (error) {
        throw new Failed({ ...browserProblem(error, "possible"), url })
      }
    }),

    act: guard((instruction: string): Promise<ActDone> => agent.act(instruction)),

    runAction: guard(async (action: WireAction) => {
      await agent.focus()
      return Actions.run(page, action, limits)
    }),

    extract: guard((instruction: string, jsonSchema: unknown) => extract(page, agent, instruction, jsonSchema)),

    screenshot: guard(async (fullPage: boolean) => {
      await agent.focus()
      return new Uint8Array(await page.screenshot({ type: "png", fullPage, timeout: limits.actionTimeoutMs }))
    }),

    pageState: guard(async () => {
      await agent.focus()
      const state = await page.evaluate(() => ({
        title: document.title,
        scrollX: window.scrollX,
        scrollY: window.scrollY
      }))
      return { url: page.url(), ...state }
    }),

    /** Stops magnitude's tab polling and disconnects; the browser and its pages keep running. */
    detach: async () => {
      await agent.stop().catch(() => undefined)
      await browser.close().catch(() => undefined)
    }
  }
})
