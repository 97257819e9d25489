/**
 * Every default of the service's configuration, in one place: what a setting is when neither the config file, the
 * environment nor a flag sets it. Config.ts reads each setting over its default here; nothing else repeats one.
 */
import { cpus } from "node:os"
import * as Policy from "../Cascade/Policy.ts"
import * as UrlPolicy from "../Cascade/UrlPolicy.ts"
import * as Model from "../Engine/Model.ts"
import * as AttemptLog from "../Logging/AttemptLog.ts"
import * as AdsPower from "../Sandbox/Provider/AdsPower.ts"

export const defaults = {
  /** `~/.switchyard/logs`. */
  logDir: AttemptLog.homeRoot,
  browser: { headless: true, adspowerUrl: AdsPower.defaultBaseUrl },
  sessions: {
    /** The machine's size decides how many browsers run at once: 4 stay responsive on 2 cores. */
    maxBrowsers: Math.max(2, Math.min(16, cpus().length * 2)),
    /** Local browsers kept started for the next session (or a crashed one's relaunch), within `maxBrowsers`. */
    warmBrowsers: 1,
    queue: 16,
    maxPendingPerSession: 64,
    /** 0 keeps idle sessions open. */
    idleTimeoutMs: 300_000,
    leaseTimeoutMs: 30_000
  },
  /** Per-engine models default to this one; computer use to a computer-use model of its provider. */
  model: Model.defaultModel,
  cascade: Policy.defaultPolicy,
  fallback: true,
  /** http and https; loopback and private-range hosts allowed (local apps are common targets). */
  urls: UrlPolicy.defaultUrlPolicy,
  limits: { maxArgumentBytes: 256 * 1024 },
  http: {
    host: "127.0.0.1",
    port: 8931,
    /** Host names accepted in Host/Origin besides the bound address (and loopback names on a loopback bind). */
    allowedHosts: [] as ReadonlyArray<string>,
    /** MCP sessions with no request for this long are closed. */
    sessionIdleMs: 30 * 60_000,
    /** MCP sessions at once; past it the least recently used idle one is closed (503 when none is idle). */
    maxSessions: 256,
    /** Each MCP session gets its own default browser session; `true` shares one (a sidecar for one app). */
    sharedDefaultSession: false
  },
  /** Tool names as model APIs accept them (`browser_navigate`); `dotted` lists seed 002's `browser.navigate`. */
  mcp: {
    toolNames: "underscore" as "underscore" | "dotted",
    /** A call with a progressToken reports progress at least this often (clients reset their timeout on it). */
    progressIntervalMs: 10_000
  },
  artifacts: { screenshots: true, snapshots: true },
  human: { enabled: false, timeoutMs: 120_000, host: "127.0.0.1" },
  telemetry: { serviceName: "switchyard" },
  /** Nothing beyond the address-class defaults; subresources checked like documents. */
  egress: { allow: [] as ReadonlyArray<string>, deny: [] as ReadonlyArray<string>, subresources: true }
} as const
