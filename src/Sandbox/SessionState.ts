/**
 * Everything a Sandbox knows about its session, as one value held in a `Ref`: the live browser and engine, the call
 * holding the lease, the last error and use, where the page was, the switch history; and the status read from it.
 */
import type { Fiber, Scope } from "effect"
import type { PageRun } from "../Cdp/Session.ts"
import { BrowserSession } from "../Engine/BrowserSession.ts"
import type { Engine, PageState } from "../Engine/Engine.ts"
import type * as EngineId from "../EngineId.ts"
import type { ErrorInfo } from "../Errors.ts"
import type { PageEvent, Tab } from "./PageEvent.ts"
import type { Location } from "./PageLink/Targets.ts"
import type { PageLink } from "./PageLink.ts"
import type { RunningBrowser } from "./Provider/Browser.ts"
import type { SavedPage } from "./SavedPage.ts"

/** A browser running for the session, the Sandbox's own connection to it, and the page the session works on. */
export interface LiveBrowser {
  readonly running: RunningBrowser
  /** Closing it closes the kept connection, then stops the browser (or detaches from it). */
  readonly scope: Scope.Closeable
  /** The kept raw-CDP connection: reads around calls, target events, dialogs. */
  readonly link: PageLink
  /**
   * The session's page, its active tab: every engine drives it. A tab the page opens takes its place; when it is
   * closed the previous tab does, and a new page replaces it when it was the last one, crashes or hangs.
   */
  readonly targetId: string
}

/** The session's tabs, as the Sandbox keeps track of them between calls. */
export interface TabBook {
  /** Every tab the session has seen: a page not in it is new (opened by the page, or by a person). */
  readonly seen: ReadonlySet<string>
  /** Tabs in the order they were active, the current one last: where closing the active tab falls back to. */
  readonly recent: ReadonlyArray<string>
  /** The tabs as the last call left them, for every answer's state. */
  readonly list: ReadonlyArray<Tab>
}

/** The one engine client connected to the browser. */
export interface LiveEngine {
  readonly id: EngineId.EngineId
  readonly engine: Engine["Service"]
  /** Closing it disconnects the client; the browser stays. */
  readonly scope: Scope.Closeable
}

/** One run of the switch protocol, as `history` reports it: engines by their labels (`stagehand:cua`). */
export interface SwitchRecord {
  readonly from: string
  readonly to: string
  readonly reason: string
  readonly pageState: PageState
  readonly durationMs: number
  readonly success: boolean
  readonly failedStep?: string
  readonly timestamp: string
}

export interface SessionState {
  readonly browser: LiveBrowser | undefined
  readonly engine: LiveEngine | undefined
  /** The fiber running the call that holds the lease: what `forceRelease` and `close` interrupt. */
  readonly holder: Fiber.Fiber<unknown, unknown> | undefined
  /** A browser is being started. */
  readonly initializing: boolean
  /** The service is shut down: no call gets the lease any more. */
  readonly shutdown: boolean
  readonly lastError: ErrorInfo | null
  readonly lastUsedAt: number | null
  /** The last call failed: the next one asks the browser whether it is alive instead of trusting the kept socket. */
  readonly suspect: boolean
  /** Where the session page was after the last call: what a relaunch restores and what answers report. */
  readonly lastLocation: Location | undefined
  /** The page's URL, cookies and storage as the last call left them: what a crash's relaunch puts back. */
  readonly saved: SavedPage | undefined
  readonly history: ReadonlyArray<SwitchRecord>
  readonly tabs: TabBook
  /** What happened on the pages that no answer has reported yet. */
  readonly events: ReadonlyArray<PageEvent>
}

/** A session before its first call: no browser yet, nothing to report. */
export const initial: SessionState = {
  browser: undefined,
  engine: undefined,
  holder: undefined,
  initializing: false,
  shutdown: false,
  lastError: null,
  lastUsedAt: null,
  suspect: false,
  lastLocation: undefined,
  saved: undefined,
  history: [],
  tabs: { seen: new Set(), recent: [], list: [] },
  events: []
}

/** What an engine is given when it connects: the browser's endpoints and the session's page. */
export const sessionOf = (live: LiveBrowser) =>
  BrowserSession.of({
    wsEndpoint: live.running.wsEndpoint,
    httpEndpoint: live.running.httpEndpoint,
    pid: live.running.pid,
    targetId: live.targetId
  })

/** The session's page over the kept connection. */
export const pageOf =
  (live: LiveBrowser): PageRun =>
  (f) =>
    live.link.run(live.targetId, f)

export interface SandboxStatus {
  readonly active: boolean
  readonly engine: EngineId.EngineKind | null
  readonly mode: EngineId.EngineMode | null
  readonly lastUsedAt: number | null
  readonly idleMs: number | null
  readonly initializing: boolean
  readonly lastError: ErrorInfo | null
  readonly browserPid: number | null
  readonly wsEndpoint: string | null
}

/** The status of a session whose browser has not started (or was closed). */
export const idleStatus: SandboxStatus = {
  active: false,
  engine: null,
  mode: null,
  lastUsedAt: null,
  idleMs: null,
  initializing: false,
  lastError: null,
  browserPid: null,
  wsEndpoint: null
}

/** The status of a session in `state` at time `now`. */
export const statusOf = (state: SessionState, now: number): SandboxStatus => ({
  active: state.browser !== undefined,
  engine: state.engine?.id.kind ?? null,
  mode: state.engine?.id.mode ?? null,
  lastUsedAt: state.lastUsedAt,
  idleMs: state.lastUsedAt === null ? null : now - state.lastUsedAt,
  initializing: state.initializing,
  lastError: state.lastError,
  browserPid: state.browser?.running.pid ?? null,
  wsEndpoint: state.browser?.running.wsEndpoint ?? null
})
