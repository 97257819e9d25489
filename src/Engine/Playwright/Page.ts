/**
 * The session's page over playwright-core: connecting over CDP, finding the page by its CDP target id (shared with the
 * Magnitude worker), and what every call on it shares: its limits, a CDP session on it, whether it is still there.
 */
import { Effect, type Scope } from "effect"
import type { Browser, CDPSession, Page, Request } from "playwright-core"
import { CdpClosed } from "../../Errors/Engine.ts"
import type { SideEffect } from "../../Errors/Fields.ts"
import type { SwitchyardError } from "../../Errors.ts"
import * as Elements from "./Elements.ts"
import { type Attempt, attempt, connectError, engine } from "./Errors.ts"
import * as Requests from "./Requests.ts"
import * as Uncompressed from "./Uncompressed.ts"

let sdk: Promise<typeof import("playwright-core")> | undefined
/**
 * playwright-core, loaded once on first use. `afterMs` puts the first load off a moment: loading holds the event loop
 * (about 0.15 s), so a browser launched beside it is spawned first and starts on another core meanwhile.
 */
export const preload = (afterMs = 0) => {
  sdk ??= new Promise<void>((resolve) => setTimeout(resolve, afterMs)).then(() => import("playwright-core"))
  return sdk
}

export interface Limits {
  /** Limit for `navigate` and history moves. */
  readonly navigationTimeoutMs: number
  /** Limit for one page action, screenshot or evaluation. */
  readonly actionTimeoutMs: number
  /** How long a target (a name, a reference, a selector) may take to appear before ElementNotFound. */
  readonly elementWaitMs: number
}

/** The connected page and the helpers every call on it uses. */
export interface SessionPage {
  readonly browser: Browser
  readonly page: Page
  readonly limits: Limits
  /** The page's elements with references, read across frames and shadow roots. */
  readonly elements: Elements.Inventory
  /** When the page last moved (a navigation, an action) and whether it is still fetching: a page long settled, with
   * nothing in flight, is not waited on for a target it does not have. */
  readonly activity: {
    readonly idleMs: () => number
    readonly fetching: () => boolean
    readonly touch: () => void
  }
  /** What a call is doing, for its errors: bounded by the action limit unless told otherwise. */
  readonly at: (action: string, sideEffect?: SideEffect, timeoutMs?: number) => Attempt
  readonly connected: () => boolean
  /** Fails with CdpClosed once the browser connection or the page is gone. */
  readonly ensureConnected: (action: string) => Effect.Effect<void, CdpClosed>
  /** Runs `f` with a CDP session on the page, detached afterwards. */
  readonly withCdp: <A>(action: string, f: (cdp: CDPSession) => Promise<A>) => Effect.Effect<A, SwitchyardError>
}

const targetIdOf = async (page: Page) => {
  const cdp = await page.context().newCDPSession(page)
  try {
    return (await cdp.send("Target.getTargetInfo")).targetInfo.targetId
  } finally {
    await cdp.detach().catch(() => undefined)
  }
}

/** The page whose CDP target id is `targetId`; else the first page, else a new one (and which it was). */
export const findPage = async (browser: Browser, targetId: string) => {
  const pages = browser.contexts().flatMap((c) => c.pages())
  for (const page of pages) {
    if ((await targetIdOf(page).catch(() => undefined)) === targetId) return { page, found: "target" as const }
  }
  if (pages[0] !== undefined) return { page: pages[0], found: "first" as const }
  const context = browser.contexts()[0] ?? (await browser.newContext())
  return { page: await context.newPage(), found: "new" as const }
}

export interface ConnectOptions {
  readonly wsEndpoint: string
  readonly targetId: string
  readonly limits: Limits
  readonly connectTimeoutMs?: number
  /** Bound on disconnecting when the scope closes; default 5 s. */
  readonly releaseTimeoutMs?: number
}

/** Connects to the browser for the scope's lifetime (releasing only disconnects) and finds the session's page. */
export const connect = (options: ConnectOptions): Effect.Effect<SessionPage, SwitchyardError, Scope.Scope> =>
  Effect.gen(function* () {
    const { limits } = options
    // Released after the browser below disconnects (finalizers run last-added first).
    const wsEndpoint = yield* Uncompressed.endpoint(options.wsEndpoint)
    const browser = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          preload().then(({ chromium }) =>
            chromium.connectOverCDP(wsEndpoint, { timeout: options.connectTimeoutMs ?? 15_000 })
          ),
        catch: (cause) => connectError(options.wsEndpoint, cause)
      }),
      // On a connectOverCDP browser, close() only disconnects: the browser and its pages keep running.
      (browser) =>
        Effect.promise(() => browser.close().catch(() => undefined)).pipe(
          Effect.timeoutOption(options.releaseTimeoutMs ?? 5_000)
        )
    )
    Requests.bound(browser)
    // Playwright dismisses a dialog nobody listens for: the session decides them (held for the agent by default).
    for (const context of browser.contexts()) context.on("dialog", () => undefined)
    const { page, found } = yield* attempt(
      { action: "connect", timeoutMs: limits.actionTimeoutMs, sideEffect: "none" },
      () => findPage(browser, options.targetId)
    )
    if (found !== "target") {
      yield* Effect.logWarning(
        `PlaywrightEngine: the session's page ${options.targetId} is gone; using ${found === "first" ? "the first open page" : "a new page"}`
      )
    }

    const at = (action: string, sideEffect: SideEffect = "none", timeoutMs = limits.actionTimeoutMs): Attempt => ({
      action,
      sideEffect,
      timeoutMs
    })
    const connected = () => browser.isConnected() && !page.isClosed()
    let moved = Date.now()
    const inFlight = new Set<Request>()
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) moved = Date.now()
    })
    page.on("request", (request) => void inFlight.add(request))
    page.on("requestfinished", (request) => void inFlight.delete(request))
    page.on("requestfailed", (request) => void inFlight.delete(request))

    return {
      browser,
      page,
      limits,
      elements: Elements.inventory(page),
      activity: {
        idleMs: () => Date.now() - moved,
        fetching: () => inFlight.size > 0,
        touch: () => {
          moved = Date.now()
        }
      },
      at,
      connected,
      ensureConnected: (action) =>
        connected()
          ? Effect.void
          : Effect.fail(
              new CdpClosed({ engine, action, message: `${action}: the engine is no longer connected to the page` })
            ),
      withCdp: (action, f) =>
        attempt(at(action), async () => {
          const cdp = await page.context().newCDPSession(page)
          try {
            return await f(cdp)
          } finally {
            await cdp.detach().catch(() => undefined)
          }
        })
    } satisfies SessionPage
  })
