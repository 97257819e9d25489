/**
 * One browser session's stack, built in one place for the service and the scenario runner: Router → Cascade →
 * Sandbox → engines → browser provider; a session a person may take over adds its VNC display and takeover.
 */
import { Effect, Layer } from "effect"
import { Cascade } from "../Cascade/Cascade.ts"
import { Engines, type EnginesOptions } from "../Cascade/Engines.ts"
import { Replay, type ReplayOptions } from "../Cascade/Replay.ts"
import { Router, type RouterOptions } from "../Cascade/Router.ts"
import * as Egress from "../Egress/Egress.ts"
import * as HumanEngine from "../Engine/HumanEngine.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as AttemptLog from "../Logging/AttemptLog.ts"
import type { BrowserProvider } from "../Sandbox/Provider/Browser.ts"
import type * as LocalChromium from "../Sandbox/Provider/LocalChromium.ts"
import { Vnc, type VncOptions } from "../Sandbox/Provider/Vnc.ts"
import { Sandbox, type SandboxOptions } from "../Sandbox/Sandbox.ts"
import { StorageStates } from "../Store/StorageStates.ts"
import { Handoff } from "../Takeover/Handoff.ts"
import { Occupant } from "../Takeover/Occupant.ts"
import type { Takeovers } from "../Takeover/Takeovers.ts"

export interface HumanOptions {
  /** How long a person has before `human_timeout`. */
  readonly timeoutMs: number
  /** The session's name, as resume surfaces take it. */
  readonly session?: string
  /** The service's list of takeovers, which `POST /resume`, `switchyard status` and `switchyard takeover` read. */
  readonly registry?: Takeovers["Service"]
  /** The session's VNC display and noVNC page. */
  readonly vnc?: VncOptions
  /** The session's Chromium, headed on that display. */
  readonly chromium?: Omit<LocalChromium.LocalChromiumOptions, "headless" | "display">
}

export interface SessionStackOptions {
  readonly router?: RouterOptions
  readonly sandbox?: SandboxOptions
  /** The engines' models and options (the person's engine comes with `human`). */
  readonly engines?: Omit<EnginesOptions, "human">
  /** The browser of a session no person takes over. */
  readonly browser: Layer.Layer<BrowserProvider>
  /** A person may take over: each session gets its own VNC display, its Chromium headed on it from the start. */
  readonly human?: HumanOptions
  /** What the session's browser may reach (its own egress proxy and policy); default the stdio defaults. */
  readonly egress?: Egress.EgressOptions
  /** Where named storage states are kept (one store for every session of the service). */
  readonly storage?: StorageStates["Service"]
  /** The replay level in front of the cascade, and the store its resolutions are kept in; none: no replay. */
  readonly replay?: ReplayOptions
}

export type SessionStack = Router | Cascade | Sandbox | Engines

const stack = <E, R1, R2>(
  options: SessionStackOptions,
  engines: Layer.Layer<Engines, E, R1>,
  browser: Layer.Layer<BrowserProvider, never, R2>
) =>
  Router.layer(options.router).pipe(
    Layer.provide(options.storage === undefined ? Layer.empty : Layer.succeed(StorageStates, options.storage)),
    Layer.provide(options.replay === undefined ? Layer.empty : Replay.layer(options.replay)),
    Layer.provideMerge(Cascade.layer),
    Layer.provideMerge(Sandbox.layer(options.sandbox)),
    Layer.provideMerge(engines),
    Layer.provide(browser)
  )

/** A session a person may take over: its VNC display, the takeover, and the person as the cascade's last level. */
const withPerson = (options: SessionStackOptions, human: HumanOptions) =>
  stack(
    options,
    Layer.unwrap(
      Effect.gen(function* () {
        // The engine gives up a little before the level's own limit, so the caller sees human_timeout.
        const person = yield* HumanEngine.spec({ timeoutMs: Math.max(1_000, human.timeoutMs - 5_000) })
        return Engines.layer({ ...options.engines, human: person })
      })
    ),
    Vnc.layerLocalChromium(human.chromium)
  ).pipe(
    Layer.provideMerge(Occupant.layer),
    Layer.provideMerge(
      Handoff.layer({
        timeoutMs: human.timeoutMs,
        ...(human.session === undefined ? {} : { session: human.session }),
        ...(human.registry === undefined ? {} : { registry: human.registry })
      })
    ),
    Layer.provideMerge(Vnc.layerDisplay),
    Layer.provideMerge(Vnc.layer(human.vnc))
  )

/**
 * One session's stack; each build of it is a session of its own (its browser, breakers, Stagehand state, egress
 * proxy). The browser a session launches goes through its egress proxy, the page link guards file:, the Router
 * checks the URLs it opens and the Cascade answers `rejected_by_policy` for what the proxy refused.
 */
export const layer = (options: SessionStackOptions): Layer.Layer<SessionStack, SwitchyardError> =>
  (options.human === undefined
    ? stack(options, Engines.layer(options.engines), options.browser)
    : withPerson(options, options.human)
  ).pipe(Layer.provide(Egress.Egress.layer(options.egress ?? { privateNetworks: true })))

/** Where every session's attempts go: the attempt log under `root`, as the events sink and the artifacts sink. */
export const attemptLog = (
  root: string,
  artifacts: { readonly screenshots?: boolean; readonly snapshots?: boolean } = {}
) =>
  Layer.mergeAll(AttemptLog.layerEvents, AttemptLog.layerArtifacts(artifacts)).pipe(
    Layer.provideMerge(AttemptLog.AttemptLog.layer({ root }))
  )
