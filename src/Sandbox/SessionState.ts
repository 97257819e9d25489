/**
 * What the Sandbox's parts hand each other as values, each part keeping its own state: the live browser and the page
 * the session works on, the connected engine, a switch's record; and the session's status composed from the parts.
 */
import type { Scope } from "effect"
import type { PageRun } from "../Cdp/Session.ts"
import { BrowserSession } from "../Engine/BrowserSession.ts"
import type { Engine, PageState } from "../Engine/Engine.ts"
import type * as EngineId from "../EngineId.ts"
import type { ErrorInfo } from "../Errors.ts"
import type { PageLink } from "./PageLink.ts"
import type { RunningBrowser } from "./Provider/Browser.ts"

/** A browser running for the session and the Sandbox's own connection to it: what BrowserLife keeps. */
export interface SessionBrowser {
  readonly running: RunningBrowser
  /** Closing it closes the kept connection, then stops the browser (or detaches from it). */
  readonly scope: Scope.Closeable
  /** The kept raw-CDP connection: reads around calls, target events, dialogs. */
  readonly link: PageLink
}

/** The browser with the page the session works on (its active tab, which Tabs keeps). */
export interface LiveBrowser extends SessionBrowser {
  /**
   * The session's page, its active tab: every engine drives it. A tab the page opens takes its place; when it is
   * closed the previous tab does, and a new page replaces it when it was the last one, crashes or hangs.
   */
  readonly targetId: string
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

/** What the status is read from, each from the part that keeps it. */
export interface StatusParts {
  readonly browser: SessionBrowser | undefined
  readonly engine: LiveEngine | undefined
  readonly initializing: boolean
  readonly lastError: ErrorInfo | null
  readonly lastUsedAt: number | null
}

/** The status of a session made of `parts` at time `now`. */
export const statusOf = (parts: StatusParts, now: number): SandboxStatus => ({
  active: parts.browser !== undefined,
  engine: parts.engine?.id.kind ?? null,
  mode: parts.engine?.id.mode ?? null,
  lastUsedAt: parts.lastUsedAt,
  idleMs: parts.lastUsedAt === null ? null : now - parts.lastUsedAt,
  initializing: parts.initializing,
  lastError: parts.lastError,
  browserPid: parts.browser?.running.pid ?? null,
  wsEndpoint: parts.browser?.running.wsEndpoint ?? null
})
