/**
 * Where a session's browser comes from: a provider starts (or attaches to) a browser for a scope. Engines receive
 * the running browser as `BrowserSession` (Engine/BrowserSession.ts) when the Sandbox connects them.
 */
import { Context, type Deferred, type Effect, type Scope } from "effect"
import type { SwitchyardError } from "../../Errors.ts"

/** A browser that is running for as long as the scope that provided it stays open. */
export interface RunningBrowser {
  /** The full `ws://host:port/devtools/browser/<id>` URL: the one form every client library accepts. */
  readonly wsEndpoint: string
  /** `http://host:port`, for the DevTools JSON endpoints. */
  readonly httpEndpoint: string
  /** The browser's process id when this service started it, else null. */
  readonly pid: number | null
  /** The OS user the browser runs as, when it is not this process's: what the browser writes to must be theirs. */
  readonly user?: { readonly uid: number; readonly gid: number }
  /** A directory of the browser's own (its user's), removed with it and reaped with its profile after a crash: copies
   * of files it is to read go there, so none outlives it. */
  readonly tempDir?: string
  /** Cheap liveness check: the process has not exited and the endpoint answers. */
  readonly alive: Effect.Effect<boolean>
  /** Completed when the browser's process exits (crashed, killed or stopped), for browsers this service started. */
  readonly exit?: Deferred.Deferred<void>
}

export class BrowserProvider extends Context.Service<
  BrowserProvider,
  {
    readonly name: "local" | "cdp" | "adspower"
    /** Whether a dead browser can be replaced by launching a new one (only for browsers this service starts). */
    readonly canRelaunch: boolean
    /** Starts or attaches; closing the scope stops what was started and only detaches from what was attached. */
    readonly acquire: Effect.Effect<RunningBrowser, SwitchyardError, Scope.Scope>
  }
>()("switchyard/BrowserProvider") {}
