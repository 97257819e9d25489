/**
 * The one engine client on the session's browser: connecting it (its Layer built over the running browser),
 * disconnecting it (the browser stays), and the switch protocol between engines (seed 001 §4, steps 3–8) with history.
 * Owns the connected client, the switch history and the engine workers kept loaded for the session.
 */
import { Clock, Context, Effect, Exit, Layer, Option, Ref, Scope } from "effect"
import { BrowserSession } from "../Engine/BrowserSession.ts"
import { Engine, type PageState } from "../Engine/Engine.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as Isolated from "../Engine/Isolated.ts"
import * as Page from "../Engine/PageState.ts"
import * as EngineId from "../EngineId.ts"
import { SwitchFailed } from "../Errors/Browser.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as Events from "../Logging/Events.ts"
import * as Telemetry from "../Logging/Telemetry.ts"
import { type LiveBrowser, type LiveEngine, type SwitchRecord, sessionOf } from "./SessionState.ts"
import { Tracking } from "./Tracking.ts"

export class EngineSwitch extends Context.Service<
  EngineSwitch,
  {
    /** The client for `spec` on `live`: the connected one, a fresh one after a dead connection, or one switched to. */
    readonly engineFor: (spec: EngineSpec, live: LiveBrowser) => Effect.Effect<LiveEngine, SwitchyardError>
    /** Runs the switch protocol to `spec`, even when it is already connected (a fresh client). */
    readonly switchTo: (
      spec: EngineSpec,
      reason: string,
      live: LiveBrowser
    ) => Effect.Effect<SwitchRecord, SwitchyardError>
    /**
     * Disconnects the client, if any, and says why in the `engine_disconnected` event. `behind`: the client's page or
     * browser is gone, and its close (which can take seconds then) finishes in the background, within the session.
     */
    readonly disconnect: (reason: string, behind?: boolean) => Effect.Effect<void>
    /** Ends the engine workers kept loaded for the session: its browser is gone. */
    readonly releaseWorkers: Effect.Effect<void>
    /** The client connected now, if any. */
    readonly current: Effect.Effect<Option.Option<LiveEngine>>
    /** Every run of the switch protocol so far. */
    readonly history: Effect.Effect<ReadonlyArray<SwitchRecord>>
  }
>()("switchyard/Sandbox/EngineSwitch") {
  static readonly layer = (options: EngineSwitchOptions) => Layer.effect(EngineSwitch, make(options))
}

export interface EngineSwitchOptions {
  /** Bound on connecting an engine client. */
  readonly connectTimeoutMs: number
}

/** The client connected now and the switches so far. */
interface Connected {
  readonly engine: LiveEngine | undefined
  readonly history: ReadonlyArray<SwitchRecord>
}

export const make = Effect.fnUntraced(function* (options: EngineSwitchOptions) {
  const { connectTimeoutMs } = options
  // Created first, so it is closed last: after the engine has given its worker back.
  const keep = yield* Isolated.makeKeep()
  // Where a close left to finish in the background runs: the session's end waits for it.
  const sessionScope = yield* Effect.scope
  const tracking = yield* Tracking
  const state = yield* Ref.make<Connected>({ engine: undefined, history: [] })

  const disconnect = (reason: string, behind = false) =>
    Effect.gen(function* () {
      const current = yield* Ref.modify(state, (s): [LiveEngine | undefined, Connected] => [
        s.engine,
        { ...s, engine: undefined }
      ])
      if (current === undefined) return
      // A broken client may hang on close: bound it, the browser is not ours to wait on.
      const close = Scope.close(current.scope, Exit.void).pipe(Effect.timeoutOption(5_000))
      yield* behind
        ? Effect.asVoid(Effect.forkIn(close, sessionScope, { uninterruptible: true, startImmediately: true }))
        : close
      yield* Events.emit({
        event: "engine_disconnected",
        engine: current.id.kind,
        ...(current.id.mode === undefined ? {} : { mode: current.id.mode }),
        reason
      })
    })

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
        Effect.onError(() => Scope.close(scope, Exit.void)),
        Effect.provideService(Isolated.Keep, keep)
      )
      const connected: LiveEngine = { id: spec.id, engine: Context.get(context, Engine), scope }
      yield* Ref.update(state, (s) => ({ ...s, engine: connected }))
      yield* Events.emit({
        event: "engine_connected",
        engine: spec.id.kind,
        ...(spec.id.mode === undefined ? {} : { mode: spec.id.mode })
      })
      return connected
    })

  /** Step 3: the page's state, from the connected engine if it answers, else over raw CDP, else the last URL. */
  const captureState = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const { engine } = yield* Ref.get(state)
      const lastLocation = yield* tracking.lastLocation
      const fromEngine = engine
        ? yield* engine.engine.pageState().pipe(Effect.timeoutOption(3_000), Effect.orElseSucceed(Option.none))
        : Option.none<PageState>()
      if (Option.isSome(fromEngine)) return fromEngine.value
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      return yield* Page.capture(sessionOf(live)).pipe(
        Effect.orElseSucceed(
          (): PageState => ({
            url: lastLocation?.url ?? "about:blank",
            title: "",
            scrollX: 0,
            scrollY: 0,
            timestamp: now
          })
        )
      )
    })

  const protocol = (spec: EngineSpec, reason: string, live: LiveBrowser) =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const current = (yield* Ref.get(state)).engine
      const from = current === undefined ? "none" : EngineId.label(current.id)
      const record = (pageState: PageState, success: boolean, failedStep?: string) =>
        Effect.gen(function* () {
          const entry: SwitchRecord = {
            from,
            to: EngineId.label(spec.id),
            reason,
            pageState,
            durationMs: (yield* Clock.currentTimeMillis) - started,
            success,
            ...(failedStep === undefined ? {} : { failedStep }),
            timestamp: new Date(yield* Clock.currentTimeMillis).toISOString()
          }
          yield* Ref.update(state, (s) => ({ ...s, history: [...s.history, entry] }))
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

      const pageState = yield* captureState(live) // 3
      yield* disconnect(`switching to ${EngineId.label(spec.id)}`) // 4
      if (!(yield* live.running.alive)) {
        // 5: nothing to switch to; the caller must start over
        yield* record(pageState, false, "verify_browser")
        return yield* new SwitchFailed({
          step: "verify_browser",
          retryable: false,
          engine: spec.id.kind,
          message: `the browser stopped answering during a switch from ${from} to ${EngineId.label(spec.id)}`
        })
      }
      const connectAndVerify = Effect.gen(function* () {
        const connected = yield* connect(spec, live) // 6
        const seen = yield* connected.engine.pageState() // 7
        return { connected, seen }
      })
      const verified = yield* connectAndVerify.pipe(
        Effect.catch(() => disconnect("released").pipe(Effect.andThen(connectAndVerify))), // 7: retry connect once
        Effect.tapError(() => record(pageState, false, "connect"))
      )
      // 8: resume where the agent was; a failure here is logged, the page is usable as it is
      if (Page.isRestorable(pageState.url) && verified.seen.url !== pageState.url) {
        yield* verified.connected.engine
          .navigate(pageState.url)
          .pipe(Effect.catch((e) => Effect.logWarning("switch: could not restore URL", e.message)))
      }
      if (pageState.scrollX !== verified.seen.scrollX || pageState.scrollY !== verified.seen.scrollY) {
        yield* Page.restoreScroll(sessionOf(live), pageState.scrollX, pageState.scrollY).pipe(
          Effect.catch((e) => Effect.logWarning("switch: could not restore scroll", e.message))
        )
      }
      return { record: yield* record(pageState, true), connected: verified.connected }
    })

  const engineFor = (spec: EngineSpec, live: LiveBrowser) =>
    Effect.gen(function* () {
      const current = (yield* Ref.get(state)).engine
      if (current === undefined) return yield* connect(spec, live)
      if (!EngineId.same(current.id, spec.id)) {
        return (yield* protocol(spec, `${EngineId.label(spec.id)} requested`, live)).connected
      }
      if (yield* current.engine.connected()) return current
      // A dead CDP session on a live browser: drop the client and connect a fresh one.
      yield* disconnect("the client lost its connection")
      return yield* connect(spec, live)
    })

  return EngineSwitch.of({
    engineFor: Effect.fn("EngineSwitch.engineFor")(engineFor),
    switchTo: Effect.fn("EngineSwitch.switchTo")(function* (spec: EngineSpec, reason: string, live: LiveBrowser) {
      return (yield* protocol(spec, reason, live)).record
    }),
    disconnect: Effect.fn("EngineSwitch.disconnect")(disconnect),
    releaseWorkers: keep.clear,
    current: Ref.get(state).pipe(Effect.map((s) => Option.fromNullishOr(s.engine))),
    history: Ref.get(state).pipe(Effect.map((s) => s.history))
  })
})
