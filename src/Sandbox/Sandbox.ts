/**
 * One browser session and its single automation client (seeds 001, 002), as one service over its parts: Lease,
 * BrowserLife, EngineSwitch and Idle, sharing one SessionState in a Ref.
 */
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import type { Engine, PageState } from "../Engine/Engine.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as Page from "../Engine/PageState.ts"
import { BrowserUnavailable } from "../Errors/Browser.ts"
import { CdpClosed } from "../Errors/Engine.ts"
import { HumanInControl } from "../Errors/Service.ts"
import { isSwitchyardError, type SwitchyardError, toErrorInfo } from "../Errors.ts"
import * as BrowserLife from "./BrowserLife.ts"
import * as Captures from "./Captures.ts"
import * as EngineSwitch from "./EngineSwitch.ts"
import * as Idle from "./Idle.ts"
import * as Lease from "./Lease.ts"
import { described } from "./PageLink/Targets.ts"
import * as SessionState from "./SessionState.ts"
import * as Snapshot from "./Snapshot.ts"

export { idleStatus, type SandboxStatus, type SwitchRecord } from "./SessionState.ts"

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

export class Sandbox extends Context.Service<
  Sandbox,
  {
    /** Runs `f` on the engine `spec` names, inside the lease: starts the browser, connects or switches as needed. */
    readonly use: <A, E>(
      spec: EngineSpec,
      f: (engine: Engine["Service"]) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E | SwitchyardError>
    /** Runs the switch protocol to `spec` even when it is already connected (a fresh client). */
    readonly switchTo: (spec: EngineSpec, reason: string) => Effect.Effect<SessionState.SwitchRecord, SwitchyardError>
    /** The page's state as the browser sees it, without any engine. */
    readonly pageState: Effect.Effect<PageState, SwitchyardError>
    /** The session page's URL and title as read when the last call ended: cheap, for every answer's state. */
    readonly location: Effect.Effect<Option.Option<{ readonly url: string; readonly title: string }>>
    /** A digest of the page's URL, title and form state ("" when no page is readable). */
    readonly fingerprint: Effect.Effect<string>
    /** Artifacts over raw CDP, whatever engine is connected: a masked screenshot, a failure snapshot. */
    readonly artifacts: {
      /** A masked screenshot taken now and handed to `save` in the background (Captures.ts). */
      readonly screenshotLater: (save: (image: Uint8Array) => Effect.Effect<void>) => Effect.Effect<void>
      /** Waits until the screenshots in flight are saved. */
      readonly settled: Effect.Effect<void>
      readonly snapshot: (lookedFor?: string) => Effect.Effect<Option.Option<unknown>>
    }
    readonly status: Effect.Effect<SessionState.SandboxStatus>
    readonly history: Effect.Effect<ReadonlyArray<SessionState.SwitchRecord>>
    /** Interrupts the call holding the lease and disconnects its engine; the browser stays. */
    readonly forceRelease: Effect.Effect<void>
    /** Disconnects the engine and stops the browser; the next call starts a new one. Idempotent. */
    readonly close: Effect.Effect<void>
  }
>()("switchyard/Sandbox") {
  static readonly layer = (options: SandboxOptions = {}) => Layer.effect(Sandbox, make(options))
}

export const make = Effect.fnUntraced(function* (options: SandboxOptions = {}) {
  const state = yield* Ref.make(SessionState.initial)
  const lease = yield* Lease.make({ state, timeoutMs: options.leaseTimeoutMs ?? 30_000 })
  const engines = EngineSwitch.make({ state, connectTimeoutMs: options.connectTimeoutMs ?? 30_000 })
  const life = yield* BrowserLife.make({
    state,
    engines,
    relaunch: options.relaunch ?? true,
    hungAfterMs: options.hungAfterMs ?? 2_000
  })
  const idle = yield* Idle.make({
    state,
    idleTimeoutMs: options.idleTimeoutMs === undefined ? 5 * 60_000 : options.idleTimeoutMs,
    closeIdle: lease.run(life.stop)
  })

  /** Where the page is when a call ends, as the page says it: what answers report and what a relaunch restores. */
  const track = (live: SessionState.LiveBrowser) =>
    live.link
      .current(live.targetId)
      .pipe(
        Effect.flatMap((page) =>
          Option.isSome(page) ? Ref.update(state, (s) => ({ ...s, lastLocation: page.value })) : Effect.void
        )
      )

  /** Keeps the outcome of each call: a failed (or stopped) call makes the next one check the browser fully. */
  const remember = <A, E>(self: Effect.Effect<A, E>) =>
    self.pipe(
      Effect.tapError((error) =>
        // A call refused because a person has the browser says nothing about the browser.
        error instanceof HumanInControl
          ? Effect.void
          : Ref.update(state, (s) => ({
              ...s,
              suspect: true,
              lastError: isSwitchyardError(error) ? toErrorInfo(error) : s.lastError
            }))
      ),
      Effect.tap(() => Ref.update(state, (s) => ({ ...s, suspect: false, lastError: null }))),
      // A call stopped by its time limit is a failed call too: the page may be what stopped it.
      Effect.onInterrupt(() => Ref.update(state, (s) => ({ ...s, suspect: true })))
    )

  /**
   * The engine as a call sees it: what may navigate (navigate, act) or reads the page's pixels (a screenshot, any call
   * of a vision engine) first waits for the attempt screenshot in flight — a capture cut by a navigation would hang
   * on its frame; reads (extract, observe, page state) run beside it.
   */
  const guarded = (spec: EngineSpec, engine: Engine["Service"]): Effect.Effect<Engine["Service"]> => {
    if (spec.capabilities.vision) return Effect.as(captures.settled, engine)
    const after =
      <Args extends ReadonlyArray<unknown>, A, E>(f: (...args: Args) => Effect.Effect<A, E>) =>
      (...args: Args) =>
        Effect.andThen(captures.settled, f(...args))
    return Effect.succeed({
      ...engine,
      navigate: after(engine.navigate),
      act: after(engine.act),
      screenshot: after(engine.screenshot)
    })
  }

  const use = <A, E>(spec: EngineSpec, f: (engine: Engine["Service"]) => Effect.Effect<A, E>) =>
    lease
      .run(
        Effect.gen(function* () {
          // The engine's modules load while the browser starts (only the first time costs anything).
          const [live] = yield* Effect.all([life.ensure, spec.warm ?? Effect.void], { concurrency: 2 })
          const connected = yield* engines.engineFor(spec, live)
          const engine = yield* guarded(spec, connected.engine)
          // A page closed or crashed under a call would leave the engine waiting out its time limit: end it now.
          const pageLost = live.link.lost(live.targetId).pipe(
            Effect.flatMap((fate) =>
              Effect.fail(
                new CdpClosed({
                  sideEffect: "possible",
                  message: `the session's page ${described[fate]} during the call; the next call opens a new page at the last URL`
                })
              )
            )
          )
          return yield* f(engine).pipe(
            Effect.raceFirst(pageLost),
            // An interrupted call (a timeout) may leave the SDK mid-flight: drop that client before the lease goes.
            Effect.onInterrupt(() => engines.disconnect("the call was interrupted")),
            Effect.ensuring(track(live).pipe(Effect.andThen(idle.touch))),
            Effect.tapError(() =>
              // A client whose connection dropped mid-call is useless: the next call reconnects.
              connected.engine
                .connected()
                .pipe(
                  Effect.flatMap((ok) =>
                    ok ? Effect.void : engines.disconnect("the connection dropped during a call")
                  )
                )
            )
          )
        }),
        spec
      )
      .pipe(remember)

  const switchTo = (spec: EngineSpec, reason: string) =>
    lease
      .run(
        Effect.gen(function* () {
          const live = yield* life.ensure
          const entry = yield* engines.switchTo(spec, reason, live)
          yield* track(live)
          yield* idle.touch
          return entry
        }),
        spec
      )
      .pipe(remember)

  const forceRelease = lease.interruptHolder.pipe(Effect.andThen(engines.disconnect("released")))

  /** Stops the call holding the lease, then the browser, with `holding` (the lease, or its last use). */
  const closeWith = (holding: (self: Effect.Effect<void>) => Effect.Effect<void, unknown>) =>
    Effect.gen(function* () {
      yield* forceRelease
      // The last attempt's screenshot is taken before its browser goes.
      yield* captures.settled
      yield* idle.cancel
      yield* holding(life.stop).pipe(Effect.ignore)
      // A closed session starts afresh: nothing to restore or report.
      yield* Ref.update(state, (s) => ({ ...s, lastLocation: undefined }))
    })
  const close = closeWith((self) => lease.run(self))

  // Shut down first, so a call retried after its interruption cannot start a browser nobody would close.
  yield* Effect.addFinalizer(() => lease.shutDown.pipe(Effect.andThen(closeWith(lease.runLast))))

  /** Runs `read` on the running browser, or answers `none` when there is none. */
  const onBrowser = <A, E>(read: (live: SessionState.LiveBrowser) => Effect.Effect<A, E>, none: Effect.Effect<A, E>) =>
    Ref.get(state).pipe(Effect.flatMap((s) => (s.browser === undefined ? none : read(s.browser))))

  const screenshot = onBrowser(
    (live) =>
      Snapshot.screenshot(SessionState.pageOf(live)).pipe(
        Effect.timeoutOption(5_000),
        Effect.orElseSucceed(() => Option.none<Uint8Array>())
      ),
    Effect.succeed(Option.none<Uint8Array>())
  )

  const captures = yield* Captures.make(screenshot)

  return Sandbox.of({
    use,
    switchTo,
    pageState: onBrowser(
      (live): Effect.Effect<PageState, SwitchyardError> => Page.capture(SessionState.sessionOf(live)),
      Effect.fail(new BrowserUnavailable({ message: "no browser is running in this session" }))
    ),
    // Read when each call ends (track): answers reuse it instead of asking the browser again.
    location: Ref.get(state).pipe(
      Effect.map((s) => (s.browser === undefined ? Option.none() : Option.fromNullishOr(s.lastLocation)))
    ),
    fingerprint: onBrowser((live) => Page.fingerprint(SessionState.pageOf(live)), Effect.succeed("")),
    artifacts: {
      screenshotLater: captures.start,
      settled: captures.settled,
      snapshot: (lookedFor?: string) =>
        onBrowser(
          (live) =>
            Snapshot.failureSnapshot(SessionState.pageOf(live), lookedFor).pipe(
              Effect.timeoutOption(5_000),
              Effect.orElseSucceed(() => Option.none<unknown>())
            ),
          Effect.succeed(Option.none<unknown>())
        )
    },
    status: Effect.gen(function* () {
      return SessionState.statusOf(yield* Ref.get(state), yield* Clock.currentTimeMillis)
    }),
    history: Ref.get(state).pipe(Effect.map((s) => s.history)),
    forceRelease,
    close
  })
})
