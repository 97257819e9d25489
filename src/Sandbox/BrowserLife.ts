/**
 * The session browser's life: started on first use, checked before each call, relaunched once with its URL restored;
 * a closed page gives way to the previous tab, and the last one (or a crashed or hung one) is replaced at the last URL.
 * Owns the running browser and its kept connection, whether one is starting, and the last call's outcome.
 */
import { Context, Effect, Exit, Fiber, Layer, Option, Ref, Scope } from "effect"
import * as CdpHttp from "../Cdp/Http.ts"
import { Egress } from "../Egress/Egress.ts"
import { BrowserUnavailable } from "../Errors/Browser.ts"
import { DialogOpen } from "../Errors/Page.ts"
import { HumanInControl } from "../Errors/Service.ts"
import { type ErrorInfo, isSwitchyardError, type SwitchyardError, toErrorInfo } from "../Errors.ts"
import { EngineSwitch } from "./EngineSwitch.ts"
import { type DownloadSettings, Folders } from "./Folders.ts"
import * as Limits from "./Limits.ts"
import { restored } from "./PageEvent.ts"
import { PageEvents } from "./PageEvents.ts"
import type { DialogPolicy } from "./PageLink/Dialogs.ts"
import { described, type Fate } from "./PageLink/Targets.ts"
import * as PageLink from "./PageLink.ts"
import { BrowserProvider, type RunningBrowser } from "./Provider/Browser.ts"
import * as SavedPage from "./SavedPage.ts"
import { type LiveBrowser, pageOf, type SessionBrowser } from "./SessionState.ts"
import * as StartTime from "./StartTime.ts"
import { Tabs } from "./Tabs.ts"
import { Tracking } from "./Tracking.ts"

export type { DownloadSettings } from "./Folders.ts"

export interface BrowserLifeOptions {
  /** What a hostile page may not run past, watched on every connection of the browser's page link. */
  readonly limits?: Limits.LimitsOptions | undefined
  /** Relaunch a crashed browser once (providers that started it only) before reporting an error. */
  readonly relaunch: boolean
  /** After a failed call, a page that cannot evaluate `1` within this long is replaced (its main thread hangs). */
  readonly hungAfterMs: number
  /** Who answers the pages' dialogs while automation has the browser. */
  readonly dialogs: DialogPolicy
  /** Where downloads go; absent, the browser's own behaviour stays. */
  readonly downloads: DownloadSettings | undefined
}

export class BrowserLife extends Context.Service<
  BrowserLife,
  {
    /** The session's browser, healthy and on a live page: started, kept, or relaunched once; else an error. */
    readonly ensure: Effect.Effect<LiveBrowser, SwitchyardError>
    /**
     * As `ensure`, except that a relaunched browser's page may still be on its way back to the last URL: the second
     * effect waits for it, so an engine can connect meanwhile. Within the caller's scope.
     */
    readonly ensureRestoring: Effect.Effect<readonly [LiveBrowser, Effect.Effect<void>], SwitchyardError, Scope.Scope>
    /** The running browser on its active tab, as it is now (nothing is started or checked). */
    readonly current: Effect.Effect<Option.Option<LiveBrowser>>
    /** Runs `read` on the running browser, or answers `none` when there is none. */
    readonly onBrowser: <A, E>(
      read: (live: LiveBrowser) => Effect.Effect<A, E>,
      none: Effect.Effect<A, E>
    ) => Effect.Effect<A, E>
    /**
     * Runs `read` on the running browser unless its page cannot answer: a dialog blocks it (reads would wait behind
     * it), or it crashed or closed (they would wait out their time limit).
     */
    readonly unblocked: <A, E>(
      read: (live: LiveBrowser) => Effect.Effect<A, E>,
      blocked: Effect.Effect<A, E>
    ) => Effect.Effect<A, E>
    /** Whether a browser is being started. */
    readonly initializing: Effect.Effect<boolean>
    /** The error of the last call, when it failed. */
    readonly lastError: Effect.Effect<ErrorInfo | null>
    /** Disconnects the engine and stops the browser (its kept engine workers too); the next `ensure` starts anew. */
    readonly stop: Effect.Effect<void>
    /** Puts a saved page (URL, cookies, storage) into the live page, the next answer saying why. */
    readonly restore: (
      live: LiveBrowser,
      page: SavedPage.SavedPage,
      reason: SavedPage.RestoreReason
    ) => Effect.Effect<void>
    /** Paths of `files` the live browser can open itself (copies its own user can read, when it runs as another). */
    readonly readable: (
      live: LiveBrowser,
      files: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<string>, SwitchyardError>
    /** Fails when the page runs past a limit during the call it is raced against (Limits.ts). */
    readonly breach: (live: LiveBrowser) => Effect.Effect<never, SwitchyardError>
    /** Keeps a call's outcome: after a failed (or stopped) call, the next `ensure` checks the browser fully. */
    readonly remember: <A, E>(self: Effect.Effect<A, E>) => Effect.Effect<A, E>
  }
>()("switchyard/Sandbox/BrowserLife") {
  static readonly layer = (options: BrowserLifeOptions) => Layer.effect(BrowserLife, make(options))
}

/** What BrowserLife keeps of its browser between calls. */
interface Life {
  readonly browser: SessionBrowser | undefined
  readonly initializing: boolean
  /** The last call failed: the next one asks the browser whether it is alive instead of trusting the kept socket. */
  readonly suspect: boolean
  readonly lastError: ErrorInfo | null
  /** The URL the page last crashed or hung at, when it was reopened there. */
  readonly failedAt: string | undefined
}

export const make = Effect.fnUntraced(function* (options: BrowserLifeOptions) {
  const { relaunch, hungAfterMs } = options
  const provider = yield* BrowserProvider
  const egress = yield* Effect.serviceOption(Egress)
  const engines = yield* EngineSwitch
  const tabs = yield* Tabs
  const tracking = yield* Tracking
  const events = yield* PageEvents
  const folders = yield* Folders
  const limits = yield* Limits.make(options.limits)
  const state = yield* Ref.make<Life>({
    browser: undefined,
    initializing: false,
    suspect: false,
    lastError: null,
    failedAt: undefined
  })
  // What a dead browser leaves (its process group, its temp profile) is cleaned up beside the relaunch, within the
  // session's life: the session's scope waits for it.
  const sessionScope = yield* Effect.scope

  const current = Effect.gen(function* () {
    const { browser } = yield* Ref.get(state)
    const targetId = yield* tabs.active
    return browser === undefined || targetId === undefined
      ? Option.none<LiveBrowser>()
      : Option.some<LiveBrowser>({ ...browser, targetId })
  })

  const onBrowser = <A, E>(read: (live: LiveBrowser) => Effect.Effect<A, E>, none: Effect.Effect<A, E>) =>
    current.pipe(Effect.flatMap((live) => (Option.isNone(live) ? none : read(live.value))))

  const unblocked = <A, E>(read: (live: LiveBrowser) => Effect.Effect<A, E>, blocked: Effect.Effect<A, E>) =>
    onBrowser(
      (live) =>
        Effect.all([live.link.dialog(live.targetId), live.link.fate(live.targetId)]).pipe(
          Effect.flatMap(([dialog, fate]) => (Option.isSome(dialog) || Option.isSome(fate) ? blocked : read(live)))
        ),
      blocked
    )

  /** `behind`: the browser is already dead, and what it left is cleaned up without waiting for it. */
  const stopping = (behind: boolean) =>
    Effect.gen(function* () {
      yield* engines.disconnect("released")
      const gone = yield* Ref.modify(state, (s): [SessionBrowser | undefined, Life] => [
        s.browser,
        { ...s, browser: undefined }
      ])
      if (gone !== undefined) {
        const close = Scope.close(gone.scope, Exit.void)
        // Forked uninterruptible, so the session's end waits for it rather than cutting it short.
        yield* behind
          ? Effect.asVoid(Effect.forkIn(close, sessionScope, { uninterruptible: true, startImmediately: true }))
          : close
      }
      yield* folders.clear
    })

  /** The page a new browser's session works on: its first page, or a new one when it has none. */
  const firstPage = (running: RunningBrowser, link: PageLink.PageLink) =>
    Effect.gen(function* () {
      const page = (yield* CdpHttp.listTargets(running.httpEndpoint)).find((t) => t.type === "page")
      return page === undefined ? yield* link.openPage : page.id
    })

  // Not counted against the limit of the attempt that needs it: bounded by the provider's own launch limit.
  const start = StartTime.uncounted(
    Effect.gen(function* () {
      yield* Ref.update(state, (s) => ({ ...s, initializing: true }))
      const scope = yield* Scope.make()
      return yield* Effect.gen(function* () {
        // The provider reads the session's egress proxy from here: a browser it started ahead is bound to it.
        const running = yield* (
          Option.isSome(egress) ? Effect.provideService(provider.acquire, Egress, egress.value) : provider.acquire
        ).pipe(Scope.provide(scope))
        // The browser's own DevTools endpoint drives the browser: no page may reach it through the proxy.
        const devtools = new URL(running.httpEndpoint)
        if (Option.isSome(egress) && devtools.port !== "")
          yield* Effect.forEach([`127.0.0.0/8:${devtools.port}`, `[::1]:${devtools.port}`], egress.value.refuse)
        const downloads = options.downloads
        const link = yield* PageLink.make(running.wsEndpoint, {
          // A person in control answers the page's dialogs themselves.
          dialogs: engines.current.pipe(
            Effect.map((engine) =>
              Option.isSome(engine) && engine.value.id.kind === "human" ? Option.none() : Option.some(options.dialogs)
            )
          ),
          ...(downloads === undefined
            ? {}
            : { downloads: { dir: yield* folders.downloads(downloads, running), maxBytes: downloads.maxBytes } }),
          // On each connection: the page limits, and file: refused for every page, frame and popup.
          onConnect: (cdp) =>
            Effect.andThen(limits.watch(cdp), Option.isSome(egress) ? egress.value.guardSchemes(cdp) : Effect.void)
        }).pipe(Scope.provide(scope))
        const targetId = yield* firstPage(running, link)
        yield* link.follow(targetId)
        const browser: SessionBrowser = { running, scope, link }
        yield* tabs.reset(targetId)
        yield* Ref.update(state, (s) => ({ ...s, browser }))
        // The browser's first pages are the session's tabs, not tabs its page opened.
        return yield* tabs.sync({ ...browser, targetId })
      }).pipe(
        Effect.onError(() => Scope.close(scope, Exit.void)),
        Effect.ensuring(Ref.update(state, (s) => ({ ...s, initializing: false })))
      )
    })
  )

  /** Puts `page` into the live page (bounded), reporting it in the next answer when `reason` is given. */
  const restoreInto = (
    live: LiveBrowser,
    page: SavedPage.SavedPage,
    options: { readonly cookies: boolean; readonly why: string; readonly reason?: SavedPage.RestoreReason }
  ) =>
    pageOf(live)((cdp, sessionId) => SavedPage.restore(cdp, sessionId, page, { cookies: options.cookies })).pipe(
      Effect.timeoutOption(30_000),
      Effect.andThen(options.reason === undefined ? Effect.void : events.note([restored(page, options.reason)])),
      Effect.catch((error) => Effect.logWarning(`could not restore the page ${options.why}`, error.message))
    )

  /**
   * Brings the page back to where the session last was, with its cookies and storage before its first request (a
   * fresh page shows about:blank). `cookies: false` when the browser lived on and kept its own; `reason` when the
   * next answer is to say so.
   */
  const restoreLast = (live: LiveBrowser, why: string, cookies: boolean, reason?: SavedPage.RestoreReason) =>
    Effect.gen(function* () {
      const saved = yield* tracking.saved
      const lastLocation = yield* tracking.lastLocation
      const page = saved ?? (lastLocation === undefined ? undefined : SavedPage.atUrl(lastLocation.url))
      if (page === undefined || !SavedPage.isRestorable(page.url)) return
      yield* restoreInto(live, page, { cookies, why, ...(reason === undefined ? {} : { reason }) })
    })

  const fateOf = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const seen = yield* live.link.fate(live.targetId)
      if (Option.isSome(seen)) return seen
      // After a failed call, a page whose main thread no longer answers is as lost as a crashed one.
      const { suspect } = yield* Ref.get(state)
      // A page behind a dialog does not answer either, and is not hung: the dialog waits for its answer.
      const blocked = Option.isSome(yield* live.link.dialog(live.targetId))
      if (suspect && !blocked && !(yield* live.link.responsive(live.targetId, hungAfterMs))) {
        return Option.some<Fate>("hung")
      }
      return Option.none<Fate>()
    })

  /** The session's page was closed, crashed or hung: a new page at the last URL replaces it. */
  const keepPage = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const fate = yield* fateOf(live)
      if (Option.isNone(fate)) return live
      const what = described[fate.value]
      // A closed tab (an OAuth popup that closed itself, a tab the person closed) gives way to the one before it.
      if (fate.value === "closed") {
        const previous = yield* tabs.fallback(live, what)
        if (Option.isSome(previous)) return previous.value
      }
      const lastLocation = yield* tracking.lastLocation
      yield* Effect.logWarning(`the session's page ${what}; opening a new one`, { url: lastLocation?.url })
      yield* engines.disconnect(`the session's page ${what}`)
      const replaced = yield* tabs.replace(live)
      if (fate.value !== "closed") yield* live.link.closePage(live.targetId).pipe(Effect.timeout(5_000), Effect.ignore)
      // A page that crashed or hung again right after being reopened there (memory without end, an endless loop)
      // would do it again: it is not reopened a second time.
      const url = lastLocation?.url
      const { failedAt } = yield* Ref.get(state)
      const again = fate.value !== "closed" && url !== undefined && url === failedAt
      yield* Ref.update(state, (s) => ({ ...s, failedAt: fate.value !== "closed" ? url : undefined }))
      // The browser kept its cookies; the tab's own storage (sessionStorage) went with it.
      if (!again)
        yield* restoreLast(replaced, `after the page ${what}`, false, fate.value === "closed" ? undefined : "crash")
      return replaced
    })

  /** `restoring`: the relaunched page's restore runs beside the caller (in its scope), who waits for it. */
  const ensuring = (restoring: boolean) =>
    Effect.gen(function* () {
      const { suspect } = yield* Ref.get(state)
      const live = yield* current
      if (Option.isNone(live)) return [yield* start, Effect.void] as const
      const kept = live.value
      // After a good call the kept socket is asked (one round trip); after a failed one, the provider's full check.
      if ((!suspect && (yield* kept.link.alive)) || (yield* kept.running.alive))
        return [yield* keepPage(kept), Effect.void] as const
      yield* Effect.logWarning("browser is not responding", { pid: kept.running.pid })
      yield* stopping(true)
      if (!(relaunch && provider.canRelaunch)) {
        return yield* new BrowserUnavailable({
          message: relaunch
            ? `the ${provider.name} browser is gone and cannot be relaunched by Switchyard`
            : "the browser died and relaunch is disabled"
        })
      }
      const fresh = yield* start
      const back = restoreLast(fresh, "after relaunch", true, "crash").pipe(
        Effect.andThen(tracking.lastLocation),
        Effect.flatMap((at) => Effect.logInfo("browser relaunched", { pid: fresh.running.pid, url: at?.url }))
      )
      if (!restoring) {
        yield* back
        return [fresh, Effect.void] as const
      }
      const fiber = yield* Effect.forkScoped(back)
      return [fresh, Fiber.join(fiber)] as const
    })

  const remember = <A, E>(self: Effect.Effect<A, E>) =>
    self.pipe(
      Effect.tapError((error) =>
        // A call refused because a person has the browser, or ended by a dialog, says nothing about the browser.
        error instanceof HumanInControl || error instanceof DialogOpen
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

  return BrowserLife.of({
    ensure: Effect.scoped(ensuring(false)).pipe(
      Effect.map(([live]) => live),
      Effect.withSpan("BrowserLife.ensure")
    ),
    ensureRestoring: ensuring(true).pipe(Effect.withSpan("BrowserLife.ensureRestoring")),
    current,
    onBrowser,
    unblocked,
    initializing: Ref.get(state).pipe(Effect.map((s) => s.initializing)),
    lastError: Ref.get(state).pipe(Effect.map((s) => s.lastError)),
    // Engine workers kept loaded for this session end with its browser.
    stop: stopping(false).pipe(Effect.andThen(engines.releaseWorkers), Effect.withSpan("BrowserLife.stop")),
    readable: Effect.fn("BrowserLife.readable")(function* (live: LiveBrowser, files: ReadonlyArray<string>) {
      return yield* folders.readable(live.running, files)
    }),
    restore: Effect.fn("BrowserLife.restore")(function* (
      live: LiveBrowser,
      page: SavedPage.SavedPage,
      reason: SavedPage.RestoreReason
    ) {
      yield* restoreInto(live, page, { cookies: true, why: `from ${reason}`, reason })
    }),
    breach: (live) => Limits.breachOn(limits, pageOf(live)),
    remember
  })
})
