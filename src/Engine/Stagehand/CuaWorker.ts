/**
 * The worker-thread side of cua mode (started by Stagehand/Cua.ts through Isolated): a whole Stagehand instance per
 * attach, whose computer-use calls cannot be cancelled by supported means, so the engine cancels them by ending this
 * thread. Stagehand loads once per thread; detaching closes the attach's instance (the browser stays).
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { type ActResult, Stagehand, type Action as StagehandAction } from "@browserbasehq/stagehand"
import type { Action } from "../Engine.ts"
import { serve } from "../Isolated.ts"
import * as PageFacts from "../PageFacts.ts"
import * as StagehandPage from "./Page.ts"
import * as Verify from "./Verify.ts"

export interface CuaInit {
  readonly wsEndpoint: string
  readonly targetId: string
  readonly provider: string
  /** The model name without its provider prefix. */
  readonly model: string
  readonly apiKey: string
  readonly baseURL?: string
  readonly viewport: { readonly width: number; readonly height: number }
  readonly maxSteps: number
  readonly waitBetweenActionsMs?: number
  readonly connectTimeoutMs: number
  readonly navigationTimeoutMs: number
}

/** How a computer-use task ended. The CUA clients turn request errors into text; `error` is the request's own. */
export interface TaskOutcome {
  readonly ok: boolean
  readonly message: string
  /** Actions the model ran on the page. */
  readonly actions: number
  readonly error?: { readonly name: string; readonly message: string; readonly status?: number }
}

/** The last error a model request ended with (the CUA clients swallow it into a `success: false` message). */
let lastRequestError: unknown

/**
 * The Anthropic and openai@4 clients Stagehand's CUA clients construct retry twice with backoff and take no
 * `maxRetries`: every request goes out once, so the caller's Schedule is the only retry policy. Each request's
 * failure (an error status, or a body that is not JSON) is kept, since the CUA clients reduce it to text.
 */
const withoutRetries = async () => {
  const require = createRequire(fileURLToPath(import.meta.resolve("@browserbasehq/stagehand")))
  for (const sdk of ["@anthropic-ai/sdk", "openai"]) {
    const core = pathToFileURL(join(dirname(require.resolve(sdk)), "core.mjs")).href
    const { APIClient, APIPromise } = (await import(core)) as {
      APIClient?: {
        prototype: { makeRequest: (options: unknown, retriesRemaining: number | null) => Promise<unknown> }
      }
      APIPromise?: { prototype: { parse: (this: { parsedPromise?: unknown }) => Promise<unknown> } }
    }
    if (typeof APIClient?.prototype.makeRequest === "function") {
      const makeRequest = APIClient.prototype.makeRequest
      APIClient.prototype.makeRequest = function (options) {
        return makeRequest.call(this, options, 0)
      }
    }
    if (typeof APIPromise?.prototype.parse === "function") {
      const parse = APIPromise.prototype.parse
      APIPromise.prototype.parse = function () {
        const first = this.parsedPromise === undefined
        const parsed = parse.call(this)
        if (first) {
          parsed.catch((error: unknown) => {
            lastRequestError = error
          })
        }
        return parsed
      }
    }
  }
}

const describeError = (error: unknown): TaskOutcome["error"] => {
  if (typeof error !== "object" || error === null) return undefined
  const e = error as { constructor?: { name?: string }; name?: unknown; message?: unknown; status?: unknown }
  const name = e.constructor?.name && e.constructor.name !== "Error" ? e.constructor.name : String(e.name ?? "Error")
  return {
    name: name === "Error" ? "APIError" : name,
    message: typeof e.message === "string" ? e.message : String(error),
    ...(typeof e.status === "number" ? { status: e.status } : {})
  }
}

const named = (name: string, message: string) => Object.assign(new Error(message), { name })

// The CUA clients print each failed model request to stderr before reducing it to text; the engine reports it typed.
const printError = console.error
console.error = (...args: Array<unknown>) => {
  if (typeof args[0] === "string" && args[0].startsWith("Error getting action from")) return
  printError(...args)
}

// Patched once per thread, before `serve` says it is ready; each attach builds its own Stagehand on the page.
await withoutRetries()

serve(async (data: CuaInit) => {
  const sh = new Stagehand({
    env: "LOCAL",
    localBrowserLaunchOptions: { cdpUrl: data.wsEndpoint, connectTimeoutMs: data.connectTimeoutMs },
    // Stagehand builds a DOM client from this; with selfHeal off an Action never calls it.
    model: {
      modelName: `${data.provider}/${data.model}`,
      apiKey: data.apiKey,
      ...(data.baseURL === undefined ? {} : { baseURL: data.baseURL })
    },
    selfHeal: false,
    disablePino: true,
    verbose: 0,
    logger: () => {}
  })
  await sh.init()
  const context = sh.context

  // A killed browser can leave a task running (or even report success): fail the call when the socket closes.
  let closedBy: string | undefined
  const waiting = new Set<(error: Error) => void>()
  context.conn.onTransportClosed((why) => {
    closedBy = why
    for (const reject of waiting) reject(named("CdpConnectionClosedError", `CDP connection closed: ${why}`))
    waiting.clear()
  })
  const guard = <A>(f: () => Promise<A>) =>
    new Promise<A>((resolve, reject) => {
      if (closedBy !== undefined) return reject(named("CdpConnectionClosedError", `CDP connection closed: ${closedBy}`))
      waiting.add(reject)
      f()
        .then(resolve, reject)
        .finally(() => waiting.delete(reject))
    })

  const { page } = await StagehandPage.find(sh, data.targetId)
  await page.setViewportSize(data.viewport.width, data.viewport.height)
  // Built now so an unusable model fails the start (CuaModelRequiredError, unknown provider), not the first call.
  const agent = sh.agent({
    mode: "cua",
    model: {
      modelName: data.model,
      provider: data.provider as "openai" | "anthropic" | "google",
      apiKey: data.apiKey,
      ...(data.baseURL === undefined ? {} : { baseURL: data.baseURL }),
      ...(data.waitBetweenActionsMs === undefined ? {} : { waitBetweenActions: Math.max(1, data.waitBetweenActionsMs) })
    }
  })

  return {
    execute: (instruction: string) =>
      guard(async (): Promise<TaskOutcome> => {
        const url = page.url()
        if (url === "" || url === "about:blank") {
          throw named(
            "StagehandInvalidArgumentError",
            "the page is blank: navigate first (on about:blank Stagehand's computer-use agent opens www.google.com)"
          )
        }
        lastRequestError = undefined
        const result = await agent.execute({ instruction, page, maxSteps: data.maxSteps, highlightCursor: false })
        const error = result.success ? undefined : describeError(lastRequestError)
        return {
          ok: result.success,
          message: result.message,
          actions: result.actions.length,
          ...(error === undefined ? {} : { error })
        }
      }),
    act: (action: StagehandAction): Promise<ActResult> => guard(() => sh.act(action, { page })),
    /** Before an Action: its target refused when disabled, its value converted (Verify.ts). */
    prepare: (action: Action) => guard(() => Verify.prepare(page, action)),
    /** After an Action: its target read back against what it asked. */
    check: (action: Action) => guard(() => Verify.check(page, action)),
    navigate: (url: string) => guard(() => StagehandPage.navigate(page, url, data.navigationTimeoutMs)),
    screenshot: (fullPage: boolean) => guard(() => StagehandPage.screenshot(page, fullPage)),
    state: () => guard(() => StagehandPage.state(page)),
    facts: (maxTextChars: number) => guard(() => page.evaluate(PageFacts.collectFacts, maxTextChars)),
    connected: () =>
      closedBy === undefined && (sh.context as typeof context | null) !== null && context.pages().includes(page),
    /** Disconnects this attach's Stagehand; the browser and its pages keep running. */
    detach: () => sh.close()
  }
})
