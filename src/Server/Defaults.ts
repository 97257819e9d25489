/**
 * Every default of the service's configuration, in one place: what a setting is when neither the config file, the
 * environment nor a flag sets it. Config.ts reads each setting over its default here; nothing else repeats one.
 */
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import * as Policy from "../Cascade/Policy.ts"
import * as UrlPolicy from "../Cascade/UrlPolicy.ts"
import * as Model from "../Engine/Model.ts"
import * as Screenshot from "../Engine/Screenshot.ts"
import * as AttemptLog from "../Logging/AttemptLog.ts"
import * as Limits from "../Sandbox/Limits.ts"
import * as AdsPower from "../Sandbox/Provider/AdsPower.ts"
import * as Resolutions from "../Store/Resolutions.ts"

export const defaults = {
  /** Kept resolutions are replayed before any model is asked; one unused for 14 days is dropped. */
  replay: { enabled: true, ttlMs: Resolutions.defaultTtlMs },
  /** `~/.switchyard/logs`. */
  logDir: AttemptLog.homeRoot,
  /** As root, Chromium runs as `nobody` with its sandbox; `noSandbox` only when configured. */
  browser: { headless: true, adspowerUrl: AdsPower.defaultBaseUrl, user: "nobody", noSandbox: false },
  sessions: {
    /** The machine's size decides how many browsers run at once: 4 stay responsive on 2 cores. */
    maxBrowsers: Math.max(2, Math.min(16, cpus().length * 2)),
    /** Local browsers kept started for the next session (or a crashed one's relaunch), within `maxBrowsers`: one
     * saves a new session or a relaunch Chromium's start, for about 210 MiB of memory of its own (headless) kept while no session takes it. */
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
  /** How long the model-free level waits for a target that is not there yet (Playwright MCP's action wait). */
  waits: { elementMs: 5_000 },
  /** http and https. Loopback and private-range hosts (`urls.privateNetworks`) have no fixed default: allowed on stdio
   * and on a loopback HTTP bind (local apps are common targets), refused when HTTP listens beyond loopback. */
  urls: { schemes: UrlPolicy.defaultSchemes },
  /** Per session: what a hostile page may not run past (Sandbox/Limits.ts, the renderer's heap in LocalChromium). */
  limits: {
    maxArgumentBytes: 256 * 1024,
    pageHeapMb: Limits.defaults.pageHeapMb,
    maxPages: Limits.defaults.maxPages,
    maxNavigationsPerCall: Limits.defaults.maxNavigationsPerCall
  },
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
  /** Screenshot answers within what model APIs accept: 8,000 px a side, 5 MiB as sent (base64). */
  screenshot: { maxPx: Screenshot.defaults.maxPx, maxBytes: Screenshot.defaults.maxBytes },
  human: { enabled: false, timeoutMs: 120_000, host: "127.0.0.1" },
  telemetry: { serviceName: "switchyard" },
  /** The agent answers alert/confirm/prompt; leaving a page with unsaved changes is accepted (navigate means it). */
  dialogs: {
    mode: "agent" as "agent" | "accept" | "dismiss",
    beforeunload: "accept" as "agent" | "accept" | "dismiss"
  },
  /** Files are uploaded only from the service's working directory (and below). */
  uploads: { roots: [process.cwd()] as ReadonlyArray<string> },
  /** Each session's downloads in a folder of its own; one past 100 MiB is cancelled. */
  downloads: { dir: join(tmpdir(), "switchyard-downloads"), maxBytes: 100 * 1024 * 1024 },
  /** The agent's JavaScript in the page (browser.evaluate) is off until the operator turns it on. */
  tools: { evaluate: false },
  /** Nothing beyond the address-class defaults; subresources checked like documents. */
  egress: { allow: [] as ReadonlyArray<string>, deny: [] as ReadonlyArray<string>, subresources: true }
} as const
