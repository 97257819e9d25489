/**
 * One browser session and the single automation client connected to it: lazy browser start, a one-client lease,
 * the engine switch protocol (seed 001 §4), health checks with relaunch, idle shutdown and status (seed 002).
 */
import { Clock, Context, Effect, Exit, Fiber, FiberHandle, Layer, Option, Scope, Semaphore } from "effect"
import * as Cdp from "../Cdp/Cdp.ts"
import { BrowserSession } from "../Engine/BrowserSession.ts"
import { Engine, type PageState } from "../Engine/Engine.ts"
import type { EngineKind } from "../Engine/EngineId.ts"
import * as EngineId from "../Engine/EngineId.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as Page from "../Engine/PageState.ts"
import { BrowserUnavailable, SwitchFailed } from "../Errors/Browser.ts"
import { CdpClosed } from "../Errors/Engine.ts"
import { HumanInControl, LeaseTimeout, SessionClosed } from "../Errors/Service.ts"
import { type ErrorInfo, type SwitchyardError, toErrorInfo } from "../Errors.ts"
import * as Events from "../Logging/Events.ts"
import * as Telemetry from "../Logging/Telemetry.ts"
import { Occupant } from "../Takeover/Occupant.ts"
import { BrowserProvider, type RunningBrowser } from "./Browser.ts"
import * as PageLink from "./PageLink.ts"
import * as Snapshot from "./Snapshot.ts"

export interface SandboxOptions {
  /** How long a call waits for the one-client lease before failing with `lease_timeout`. */
  readonly leaseTimeoutMs?: number
  /** Close the browser after this long without a call; `null` keeps it open. */
  readonly idleTimeoutMs?: number | null
  /** Relaunch a crashed browser once (providers that started it only) before reporting an error. */
  readonly relaunch?: boolean
  /** Bound on connecting an engine client. */
  readonly connectTimeoutMs?: number
  /** After a failed call, a page that cannot evaluate `1` within this long is replaced (its main thread hangs). */
  readonly hungAfterMs?: number
}

export interface SwitchRecord {
  readonly from: EngineKind | "none"
  readonly to: EngineKind
  readonly reason: string
  readonly pageState: PageState
  readonly durationMs: number
  readonly success: boolean
  readonly failedStep?: string
  readonly timestamp: string
}

export interface SandboxStatus {
  readonly active: boolean
  readonly engine: EngineKind | null
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

interface LiveBrowser {
  readonly running: RunningBrowser
  readonly scope: Scope.Closeable
  /** The kept raw-CDP connection: reads around calls, target events, dialogs. */
  readonly link: PageLink.PageLink
  targetId: string
}

interface LiveEngine {
  readonly id: EngineId.EngineId
  readonly engine: Engine["Service"]
  readonly scope: Scope.Closeable
}

export class Sandbox extends Context.Service<
  Sandbox,
  {
    /** Runs `f` on the engine `spec` names, inside the lease: starts the browser, connects or switches as needed. */
    readonly use: <A, E>(
      spec: EngineSpec,
      f: (engine: Engine["Service"]) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E | SwitchyardError>
    /** Runs the switch protocol to `spec` even when it is already connected (a fresh client). */
    readonly switchTo: (spec: EngineSpec, reason: string) => Effect.Effect<SwitchRecord, SwitchyardError>
    /** The page's state as the browser sees it, without any engine. */
    readonly pageState: Effect.Effect<PageState, SwitchyardError>
    /** The session page's URL and title from the DevTools target list: cheap, for every answer's state. */
    readonly location: Effect.Effect<Option.Option<{ readonly url: string; readonly title: string }>>
    /** A digest of the page's URL, title and form state ("" when no page is readable). */
    readonly fingerprint: Effect.Effect<string>
    /** Artifacts over raw CDP, whatever engine is connected: a masked screenshot, a failure snapshot. */
    readonly artifacts: {
      readonly screenshot: Effect.Effect<Option.Option<Uint8Array>>
      readonly snapshot: (lookedFor?: string) => Effect.Effect<Option.Option<unknown>>
    }
    readonly status: Effect.Effect<SandboxStatus>
    readonly history: Effect.Effect<ReadonlyArray<SwitchRecord>>
    /** Interrupts the call holding the lease and disconnects its engine; the browser stays. */
    readonly forceRelease: Effect.Effect<void>
    /** Disconnects the engine and stops the browser; the next call starts a new one. Idempotent. */
    readonly close: Effect.Effect<void>
  }
>()("switchyard/Sandbox") {
  static readonly layer = (options: SandboxOptions = {}) => Layer.effect(Sandbox, make(options))
}

export const make = Effect.fnUntraced(function* (options: SandboxOptions = {}) {
  const provider = yield* BrowserProvider
  const occupant = yield* Effect.serviceOption(Occupant)
  const leaseTimeoutMs = options.leaseTimeoutMs ?? 30_000
  const idleTimeoutMs = options.idleTimeoutMs === undefined ? 5 * 60_000 : options.idleTimeoutMs
  const relaunch = options.relaunch ?? true
  const connectTimeoutMs = options.connectTimeoutMs ?? 30_000
  const hungAfterMs = options.hungAfterMs ?? 2_000

  const semaphore = yield* Semaphore.make(1)
  const idleTimer = yield* FiberHandle.make<void, never>()
  let browser: LiveBrowser | undefined
  let engine: LiveEngine | undefined
  let holder: Fiber.Fiber<unknown, unknown> | undefined
  let initializing = false
  let shutdown = false
  let lastError: ErrorInfo | null = null
  let lastUsedAt: number | null = null
  /** The last call failed: the next one asks the browser whether it is alive instead of trusting the kept socket. */
  let suspect = false
  /** Where the session page was after the last call: what a relaunch restores and what answers report. */
  let lastLocation: { readonly url: string; readonly title: string } | undefined
  const history: Array<SwitchRecord> = []

  const sessionOf = (live: LiveBrowser) =>
    BrowserSession.of({
      wsEndpoint: live.running.wsEndpoint,
      httpEndpoint: live.running.httpEndpoint,
      pid: live.running.pid,
      targetId: live.targetId
    })
  const pageOf =
    (live: LiveBrowser): Cdp.PageRun =>
    (f) =>
      live.link.run(live.targetId, f)

  // --- lease -----------------------------------------------------------------------------------------------------

  /** For automation calls: refused while someone else holds the browser, also while waiting for the lease. */
  const gateFor = (spec: EngineSpec | undefined) =>
    spec === undefined || spec.id.kind === "human" || Option.isNone(occupant) ? undefined : occupant.value

  const withLease = <A, E>(
    self: Effect.Effect<A, E>,
    spec?: EngineSpec
  ): Effect.Effect<A, E | LeaseTimeout | SessionClosed | SwitchyardError> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        if (shutdown) return yield* new SessionClosed({ message: "the session is shut down" })
        const gate = gateFor(spec)
        const take =
          gate === undefined
            ? semaphore.take(1)
            : semaphore.take(1).pipe(Effect.raceFirst(gate.arrival.pipe(Effect.flatMap(Effect.fail))))
        const taken = yield* restore(take).pipe(Effect.timeoutOption(leaseTimeoutMs))
        if (Option.isNone(taken)) {
          return yield* new LeaseTimeout({
            timeoutMs: leaseTimeoutMs,
            message: `another call held the browser for more than ${leaseTimeoutMs} ms`
          })
        }
        // The call runs on its own fiber so forceRelease/close can stop it and its caller still gets an answer.
        return yield* Effect.gen(function* () {
          // Someone may have taken the browser while the lease was being handed over.
          const occupied = gate === undefined ? Option.none() : yield* gate.current
          if (Option.isSome(occupied)) return yield* Effect.fail(occupied.value)
          const call = yield* Effect.forkChild(restore(self))
          holder = call
          const exit = yield* restore(Fiber.await(call)).pipe(Effect.onInterrupt(() => Fiber.interrupt(call)))
          if (Exit.isFailure(exit) && Exit.hasInterrupts(exit) && !Exit.hasFails(exit)) {
            return yield* new SessionClosed({
              message: "the session's browser was closed or released while this call ran; call again to start afresh"
            })
          }
          return yield* exit
        }).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              holder = undefined
            }).pipe(Effect.andThen(semaphore.release(1)))
          )
        )
      })
    )

  // --- engine client ---------------------------------------------------------------------------------------------

  const disconnectFor = (reason: string) =>
    Effect.suspend(() => {
      const current = engine
      engine = undefined
      if (current === undefined) return Effect.void
      // A broken client may hang on close: bound it, the browser is not ours to wait on.
      return Scope.close(current.scope, Exit.void).pipe(
        Effect.timeoutOption(5_000),
        Effect.andThen(
          Events.emit({
            event: "engine_disconnected",
            engine: current.id.kind,
            ...(current.id.mode === undefined ? {} : { mode: current.id.mode }),
            reason
          })
        )
      )
    })
  const disconnect = disconnectFor("released")

  const connect = (spec: EngineSpec, live: LiveBrowser) =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        spec.layer.pipe(Layer.provide(Layer.succeed(BrowserSession, sessionOf(live)))),
        scope
      ).pipe(
        Effect.timeoutOrElse({
          duration: connectTimeoutMs,
          orElse: () =>
            Effect.fail(
              new SwitchFailed({
                step: "connect",
                retryable: true,
                engine: spec.id.kind,
                message: `${EngineId.label(spec.id)} did not connect within ${connectTimeoutMs} ms`
              })
            )
        }),
        Effect.onError(() => Scope.close(scope, Exit.void))
      )
      const connected: LiveEngine = {
        id: spec.id,
        engine: Context.get(context, Engine),
        scope
      }
      engine = connected
      yield* Events.emit({
        event: "engine_connected",
        engine: spec.id.kind,
        ...(spec.id.mode === undefined ? {} : { mode: spec.id.mode })
      })
      return connected
    })

  // --- browser ---------------------------------------------------------------------------------------------------

  const stopBrowser = Effect.gen(function* () {
    yield* disconnect
    const current = browser
    browser = undefined
    if (current !== undefined) yield* Scope.close(current.scope, Exit.void)
  })

  /** The page a new browser's session works on: its first page, or a new one when it has none. */
  const pageTarget = (running: RunningBrowser, link: PageLink.PageLink) =>
    Effect.gen(function* () {
      const page = (yield* Cdp.listTargets(running.httpEndpoint)).find((t) => t.type === "page")
      return page === undefined ? yield* link.openPage : page.id
    })

  const startBrowser = Effect.gen(function* () {
    initializing = true
    const scope = yield* Scope.make()
    return yield* Effect.gen(function* () {
      const running = yield* provider.acquire.pipe(Scope.provide(scope))
      // A person in control answers the page's dialogs themselves.
      const link = yield* PageLink.make(running.wsEndpoint, {
        answerDialogs: Effect.sync(() => engine?.id.kind !== "human")
      }).pipe(Scope.provide(scope))
      const targetId = yield* pageTarget(running, link)
      yield* link.follow(targetId)
      const live: LiveBrowser = { running, scope, link, targetId }
      browser = live
      return live
    }).pipe(
      Effect.onError(() => Scope.close(scope, Exit.void)),
      Effect.ensuring(
        Effect.sync(() => {
          initializing = false
        })
      )
    )
  })

  const restore = (live: LiveBrowser, why: string) =>
    Effect.gen(function* () {
      const lastUrl = lastLocation?.url
      if (!Page.isRestorable(lastUrl)) return
      yield* pageOf(live)((cdp, sessionId) => Cdp.navigateOn(cdp, sessionId, lastUrl)).pipe(
        Effect.timeoutOption(30_000),
        Effect.catch((error) => Effect.logWarning(`could not restore the page ${why}`, error.message))
      )
    })

  const fateOf = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const seen = live.link.fate(live.targetId)
      if (seen !== undefined) return seen
      // After a failed call, a page whose main thread no longer answers is as lost as a crashed one.
      if (suspect && !(yield* live.link.responsive(live.targetId, hungAfterMs))) return "hung" as const
      return undefined
    })

  /** The session's page was closed, crashed or hung: a new page at the last URL replaces it. */
  const keepPage = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const fate = yield* fateOf(live)
      if (fate === undefined) return live
      const what = PageLink.described[fate]
      yield* Effect.logWarning(`the session's page ${what}; opening a new one`, { url: lastLocation?.url })
      yield* disconnectFor(`the session's page ${what}`)
      const old = live.targetId
      live.targetId = yield* live.link.openPage
      yield* live.link.follow(live.targetId)
      if (fate !== "closed") yield* live.link.closePage(old).pipe(Effect.timeout(5_000), Effect.ignore)
      yield* restore(live, `after the page ${what}`)
      return live
    })

  /** Health check before each call: a dead browser is relaunched once (URL restored) or reported. */
  const ensureBrowser = Effect.gen(function* () {
    const current = browser
    if (current === undefined) return yield* startBrowser
    // After a good call the kept socket is asked (one round trip); after a failed one, the provider's full check.
    if ((!suspect && (yield* current.link.alive)) || (yield* current.running.alive)) return yield* keepPage(current)
    yield* Effect.logWarning("browser is not responding", { pid: current.running.pid })
    yield* stopBrowser
    if (!(relaunch && provider.canRelaunch)) {
      return yield* new BrowserUnavailable({
        message: relaunch
          ? `the ${provider.name} browser is gone and cannot be relaunched by Switchyard`
          : "the browser died and relaunch is disabled"
      })
    }
    const fresh = yield* startBrowser
    yield* restore(fresh, "after relaunch")
    yield* Effect.logInfo("browser relaunched", { pid: fresh.running.pid, url: lastLocation?.url })
    return fresh
  })

  // --- switch protocol (seed 001 §4, steps 3-8) -------------------------------------------------------------------

  const captureState = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const fromEngine = engine
        ? yield* engine.engine.pageState().pipe(Effect.timeoutOption(3_000), Effect.orElseSucceed(Option.none))
        : Option.none<PageState>()
      if (Option.isSome(fromEngine)) return fromEngine.value
      return yield* Page.capture({ ...sessionOf(live) }).pipe(
        Effect.orElseSucceed(
          (): PageState => ({
            url: lastLocation?.url ?? "about:blank",
            title: "",
            scrollX: 0,
            scrollY: 0,
            timestamp: new Date().toISOString()
          })
        )
      )
    })

  const runSwitch = (spec: EngineSpec, reason: string, live: LiveBrowser) =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const from: EngineKind | "none" = engine?.id.kind ?? "none"
      const record = (pageState: PageState, success: boolean, failedStep?: string) =>
        Effect.gen(function* () {
          const entry: SwitchRecord = {
            from,
            to: spec.id.kind,
            reason,
            pageState,
            durationMs: (yield* Clock.currentTimeMillis) - started,
            success,
            ...(failedStep === undefined ? {} : { failedStep }),
            timestamp: new Date().toISOString()
          }
          history.push(entry)
          yield* Telemetry.recordSwitch(entry.from, entry.to, success, entry.durationMs)
          yield* Events.emit({
            event: "engine_switch",
            from: entry.from,
            to: entry.to,
            reason,
            durationMs: entry.durationMs,
            success,
            url: pageState.url
          })
          return entry
        })

      const state = yield* captureState(live) // 3
      yield* disconnectFor(`switching to ${EngineId.label(spec.id)}`) // 4
      if (!(yield* live.running.alive)) {
        // 5: nothing to switch to; the caller must start over
        yield* record(state, false, "verify_browser")
        return yield* new SwitchFailed({
          step: "verify_browser",
          retryable: false,
          engine: spec.id.kind,
          message: `the browser stopped answering during a switch from ${from} to ${spec.id.kind}`
        })
      }
      const connectAndVerify = Effect.gen(function* () {
        const connected = yield* connect(spec, live) // 6
        const seen = yield* connected.engine.pageState() // 7
        return { connected, seen }
      })
      const verified = yield* connectAndVerify.pipe(
        Effect.catch(() => disconnect.pipe(Effect.andThen(connectAndVerify))), // 7: retry connect once
        Effect.tapError(() => record(state, false, "connect"))
      )
      // 8: resume where the agent was; a failure here is logged, the page is usable as it is
      if (Page.isRestorable(state.url) && verified.seen.url !== state.url) {
        yield* verified.connected.engine
          .navigate(state.url)
          .pipe(Effect.catch((e) => Effect.logWarning("switch: could not restore URL", e.message)))
      }
      if (state.scrollX !== verified.seen.scrollX || state.scrollY !== verified.seen.scrollY) {
        yield* Page.restoreScroll(sessionOf(live), state.scrollX, state.scrollY).pipe(
          Effect.catch((e) => Effect.logWarning("switch: could not restore scroll", e.message))
        )
      }
      return yield* record(state, true)
    })

  // --- calls -----------------------------------------------------------------------------------------------------

  const touch = Effect.gen(function* () {
    lastUsedAt = yield* Clock.currentTimeMillis
    if (idleTimeoutMs !== null) {
      yield* FiberHandle.run(
        idleTimer,
        Effect.sleep(idleTimeoutMs).pipe(
          Effect.andThen(withLease(stopBrowser)),
          Effect.andThen(Effect.logInfo("browser closed after idle timeout", { idleTimeoutMs })),
          Effect.ignore
        )
      )
    }
  })

  const track = (live: LiveBrowser) =>
    Effect.sync(() => {
      const page = live.link.location(live.targetId)
      if (Option.isSome(page)) lastLocation = page.value
    })

  const remember = <A, E>(self: Effect.Effect<A, E>) =>
    self.pipe(
      Effect.tapError((error) =>
        Effect.sync(() => {
          // A call refused because a person has the browser says nothing about the browser.
          if (error instanceof HumanInControl) return
          suspect = true
          if (typeof error === "object" && error !== null && "type" in error && "retryable" in error) {
            lastError = toErrorInfo(error as unknown as SwitchyardError)
          }
        })
      ),
      Effect.tap(() =>
        Effect.sync(() => {
          suspect = false
          lastError = null
        })
      ),
      // A call stopped by its time limit is a failed call too: the page may be what stopped it.
      Effect.onInterrupt(() =>
        Effect.sync(() => {
          suspect = true
        })
      )
    )

  const use = <A, E>(spec: EngineSpec, f: (engine: Engine["Service"]) => Effect.Effect<A, E>) =>
    withLease(
      Effect.gen(function* () {
        const live = yield* ensureBrowser
        let current = engine
        if (current !== undefined && EngineId.same(current.id, spec.id) && !(yield* current.engine.connected())) {
          // A dead CDP session on a live browser: drop the client and connect a fresh one.
          yield* disconnectFor("the client lost its connection")
          current = undefined
        }
        if (current === undefined) current = yield* connect(spec, live)
        else if (!EngineId.same(current.id, spec.id)) {
          yield* runSwitch(spec, `${EngineId.label(spec.id)} requested`, live)
          current = engine!
        }
        const connected = current
        // A page closed or crashed under a call would leave the engine waiting out its time limit: end the call now.
        const pageLost = live.link.lost(live.targetId).pipe(
          Effect.flatMap((fate) =>
            Effect.fail(
              new CdpClosed({
                sideEffect: "possible",
                message: `the session's page ${PageLink.described[fate]} during the call; the next call opens a new page at the last URL`
              })
            )
          )
        )
        return yield* f(connected.engine).pipe(
          Effect.raceFirst(pageLost),
          // An interrupted call (a timeout) may leave the SDK mid-flight: drop that client before the lease goes.
          Effect.onInterrupt(() => disconnectFor("the call was interrupted")),
          Effect.ensuring(track(live).pipe(Effect.andThen(touch))),
          Effect.tapError(() =>
            // A client whose connection dropped mid-call is useless: the next call reconnects.
            connected.engine
              .connected()
              .pipe(Effect.flatMap((ok) => (ok ? Effect.void : disconnectFor("the connection dropped during a call"))))
          )
        )
      }),
      spec
    ).pipe(remember)

  const switchTo = (spec: EngineSpec, reason: string) =>
    withLease(
      Effect.gen(function* () {
        const live = yield* ensureBrowser
        const entry = yield* runSwitch(spec, reason, live)
        yield* track(live)
        yield* touch
        return entry
      }),
      spec
    ).pipe(remember)

  const forceRelease = Effect.gen(function* () {
    const fiber = holder
    const self = yield* Effect.fiber
    if (fiber !== undefined && fiber !== self) yield* Fiber.interrupt(fiber)
    yield* disconnect
  })

  const status = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    return {
      active: browser !== undefined,
      engine: engine?.id.kind ?? null,
      mode: engine?.id.mode ?? null,
      lastUsedAt,
      idleMs: lastUsedAt === null ? null : now - lastUsedAt,
      initializing,
      lastError,
      browserPid: browser?.running.pid ?? null,
      wsEndpoint: browser?.running.wsEndpoint ?? null
    } satisfies SandboxStatus
  })

  const close = Effect.gen(function* () {
    yield* forceRelease
    yield* FiberHandle.clear(idleTimer)
    yield* withLease(stopBrowser).pipe(Effect.ignore)
    // A closed session starts afresh: nothing to restore or report.
    lastLocation = undefined
  })

  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      yield* close
      shutdown = true
    })
  )

  return Sandbox.of({
    use,
    switchTo,
    pageState: Effect.suspend(
      (): Effect.Effect<PageState, SwitchyardError> =>
        browser === undefined
          ? Effect.fail(new BrowserUnavailable({ message: "no browser is running in this session" }))
          : Page.capture(sessionOf(browser))
    ),
    // Read when each call ends (track): answers reuse it instead of asking the browser again.
    location: Effect.sync(() => (browser === undefined ? Option.none() : Option.fromNullishOr(lastLocation))),
    fingerprint: Effect.suspend(() => (browser === undefined ? Effect.succeed("") : Page.fingerprint(pageOf(browser)))),
    artifacts: {
      screenshot: Effect.suspend(() =>
        browser === undefined
          ? Effect.succeed(Option.none<Uint8Array>())
          : Snapshot.screenshot(pageOf(browser)).pipe(
              Effect.timeoutOption(5_000),
              Effect.orElseSucceed(() => Option.none<Uint8Array>())
            )
      ),
      snapshot: (lookedFor?: string) =>
        Effect.suspend(() =>
          browser === undefined
            ? Effect.succeed(Option.none<unknown>())
            : Snapshot.failureSnapshot(pageOf(browser), lookedFor).pipe(
                Effect.timeoutOption(5_000),
                Effect.orElseSucceed(() => Option.none<unknown>())
              )
        )
    },
    status,
    history: Effect.sync(() => [...history]),
    forceRelease,
    close
  })
})
