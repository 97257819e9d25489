/**
 * One browser session and its single automation client (seeds 001, 002), as one service over its parts: Lease,
 * BrowserLife, EngineSwitch, Tabs, Idle and Loss, sharing one SessionState in a Ref; Tracking (where the page is, its
 * saved state), Captures (screenshots around an engine's calls), PageRecords (console, network) and Limits. The page
 * model (tabs, dialogs, file choosers, downloads) and the saved page are kept for every engine level alike. Longer
 * than most modules: it is where a call meets the browser, and the parts' order around a call is read here in one place.
 */
import { Clock, Context, Effect, Exit, FiberHandle, Layer, Option, Ref, Schedule } from "effect"
import type * as CdpConnection from "../Cdp/Connection.ts"
import type { PageRun } from "../Cdp/Session.ts"
import type { Engine, PageState } from "../Engine/Engine.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as Isolated from "../Engine/Isolated.ts"
import * as Page from "../Engine/PageState.ts"
import { BrowserUnavailable } from "../Errors/Browser.ts"
import { CdpClosed } from "../Errors/Engine.ts"
import { DialogOpen, InvalidInput } from "../Errors/Page.ts"
import { HumanInControl } from "../Errors/Service.ts"
import { isSwitchyardError, type SwitchyardError, toErrorInfo } from "../Errors.ts"
import * as HumanCheck from "../Takeover/HumanCheck.ts"
import * as BrowserLife from "./BrowserLife.ts"
import * as Captures from "./Captures.ts"
import * as EngineSwitch from "./EngineSwitch.ts"
import * as Idle from "./Idle.ts"
import * as Lease from "./Lease.ts"
import * as Limits from "./Limits.ts"
import * as Loss from "./Loss.ts"
import * as PageEvent from "./PageEvent.ts"
import type * as Console from "./PageLink/Console.ts"
import * as Dialogs from "./PageLink/Dialogs.ts"
import type { Download } from "./PageLink/Downloads.ts"
import type * as Network from "./PageLink/Network.ts"
import type { MainFrame } from "./PageLink.ts"
import type { Shown } from "./PageRecords.ts"
import * as PageRecords from "./PageRecords.ts"
import type * as SavedPage from "./SavedPage.ts"
import * as SessionState from "./SessionState.ts"
import * as Snapshot from "./Snapshot.ts"
import * as Tabs from "./Tabs.ts"
import * as Tracking from "./Tracking.ts"

export type { PageEvent, Tab } from "./PageEvent.ts"
export type { DialogMode, DialogPolicy, OpenDialog } from "./PageLink/Dialogs.ts"
export type { Download } from "./PageLink/Downloads.ts"
export type { Shown } from "./PageRecords.ts"
export { idleStatus, type SandboxStatus, type SwitchRecord } from "./SessionState.ts"
export type { TabRef } from "./Tabs.ts"

/** What the session's pages hold besides the active page's URL: the state block shows it after every call. */
export interface PageView {
  readonly tabs: ReadonlyArray<PageEvent.Tab>
  /** The dialog open on the active tab, waiting for the agent. */
  readonly dialog: Dialogs.OpenDialog | null
  readonly downloads: ReadonlyArray<Download>
}

/** The active page for work over the Sandbox's own CDP connection, without an engine (PDF, viewport, cookies). */
export interface OnPage {
  /** Runs commands on a session attached to the active tab. */
  readonly run: PageRun
  /** Runs commands on the browser target. */
  readonly browser: <A, E>(
    f: (cdp: CdpConnection.Connection) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | SwitchyardError>
  /** The active tab's target id, and every tab's. */
  readonly targetId: string
  readonly tabs: ReadonlyArray<string>
  /** Runs commands on a session attached to another tab of the session. */
  readonly runOn: (targetId: string) => PageRun
}

/** How a refused call is told to answer the dialog first. */
const dialogHint = (dialog: Dialogs.OpenDialog) =>
  `a ${dialog.type} dialog is open on the page: ${JSON.stringify(dialog.message.slice(0, 200))}; answer it with browser.dialog {"accept": true} or {"accept": false}${dialog.type === "prompt" ? ' (with "promptText" to type an answer)' : ""} before anything else`

export interface SandboxOptions {
  /** What a hostile page may not run past: pages open at once, loads of the page in one call (Limits.ts). */
  readonly limits?: Limits.LimitsOptions
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
  /** Who answers the pages' dialogs; default: the agent (beforeunload is accepted). */
  readonly dialogs?: Dialogs.DialogPolicy
  /** Where downloads go and their size cap; absent, the browser's own behaviour stays. */
  readonly downloads?: BrowserLife.DownloadSettings
  /** How long a call waits at its end for the downloads it started to finish; default 5 s. */
  readonly downloadWaitMs?: number
}

/** The dialog on the active tab as an error: a call refused because of it, or cut short by it (`openedByCall`). */
export const dialogError = (dialog: Dialogs.OpenDialog, openedByCall: boolean) =>
  new DialogOpen({
    dialog,
    openedByCall,
    sideEffect: openedByCall ? "possible" : "none",
    message: openedByCall ? `the call opened a dialog: ${dialogHint(dialog)}` : dialogHint(dialog)
  })

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
    /**
     * The active page's main frame: the documents it committed so far and, when the latest is the browser's error
     * page, the URL it could not load (read from the kept connection's events, no round trip).
     */
    readonly mainFrame: Effect.Effect<MainFrame>
    /** The browser's error code on the active page's error page (`ERR_CERT_AUTHORITY_INVALID`), when it shows one. */
    readonly errorCode: Effect.Effect<Option.Option<string>>
    /** A digest of the page's URL, title and form state ("" when no page is readable). */
    readonly fingerprint: Effect.Effect<string>
    /** Whether the page shows a human check (a CAPTCHA): what a person is asked for (Takeover/HumanCheck.ts). */
    readonly humanCheck: Effect.Effect<boolean>
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
    /** The tabs, the dialog waiting on the active tab, the downloads: as the last call left them. */
    readonly page: Effect.Effect<PageView>
    /** What happened on the pages since the last answer (tabs opened, dialogs, files chosen, downloads); drained. */
    readonly events: Effect.Effect<ReadonlyArray<PageEvent.PageEvent>>
    /** The tabs now. */
    readonly tabs: Effect.Effect<ReadonlyArray<PageEvent.Tab>, SwitchyardError>
    /** Makes a tab the page the session works on; every engine level then drives it. */
    readonly switchTab: (ref: Tabs.TabRef) => Effect.Effect<ReadonlyArray<PageEvent.Tab>, SwitchyardError>
    /** Closes a tab (the active one when absent); closing the active tab falls back to the previous one. */
    readonly closeTab: (ref?: Tabs.TabRef) => Effect.Effect<ReadonlyArray<PageEvent.Tab>, SwitchyardError>
    /** Answers the dialog open on the active tab. */
    readonly answerDialog: (answer: {
      readonly accept: boolean
      readonly promptText?: string
    }) => Effect.Effect<Dialogs.OpenDialog, SwitchyardError>
    /** The dialog open on the active tab, if any: engine calls are refused while it is. */
    readonly openDialog: Effect.Effect<Option.Option<Dialogs.OpenDialog>>
    /** Runs `self` with any file chooser the active page opens answered with `files` (absolute paths). */
    readonly chooseFiles: <A, E>(
      files: ReadonlyArray<string>,
      self: Effect.Effect<A, E>
    ) => Effect.Effect<readonly [A, number], E | SwitchyardError>
    /**
     * Runs `work` on the active page without an engine, holding the lease (the browser started when there is none);
     * refused while a person has the browser or a dialog waits on the page.
     */
    readonly onPage: <A>(work: (page: OnPage) => Effect.Effect<A, SwitchyardError>) => Effect.Effect<A, SwitchyardError>
    /** The console messages and uncaught errors of the active tab's page since it loaded, or with `since` of every tab
     * since then (a bounded ring since the browser started), redacted. */
    readonly console: (
      query: Console.Query
    ) => Effect.Effect<Omit<Console.Answer, "messages"> & { readonly messages: ReadonlyArray<Shown<Console.Message>> }>
    /** The requests of the active tab's page since it started loading, or with `since` of every tab since then (a
     * bounded ring since the browser started), redacted. */
    readonly network: (
      query: Network.Query
    ) => Effect.Effect<Omit<Network.Answer, "requests"> & { readonly requests: ReadonlyArray<Shown<Network.Request>> }>
    /** One request with its headers and bodies (capped, redacted), while the ring holds it. */
    readonly request: (seq: number) => Effect.Effect<Shown<Network.Details> | undefined>
    /** The page's URL, cookies and storage: read now when the browser answers, else as the last call left them. */
    readonly saved: Effect.Effect<Option.Option<SavedPage.SavedPage>>
    /**
     * Opens a saved page in the session's browser (started if need be): its cookies and storage in place before its
     * first request. The next answer reports it (`pageEvents`: `restored`, with `reason`).
     */
    readonly restore: (
      page: SavedPage.SavedPage,
      reason: SavedPage.RestoreReason
    ) => Effect.Effect<void, SwitchyardError>
    /** Interrupts the call holding the lease and disconnects its engine; the browser stays. */
    readonly forceRelease: Effect.Effect<void>
    /** Disconnects the engine and stops the browser; the next call starts a new one. Idempotent. */
    readonly close: Effect.Effect<void>
  }
>()("switchyard/Sandbox") {
  static readonly layer = (options: SandboxOptions = {}) => Layer.effect(Sandbox, make(options))
}

export const make = Effect.fnUntraced(function* (options: SandboxOptions = {}) {
  // Created first, so it is closed last: after the engine has given its worker back.
  const keep = yield* Isolated.makeKeep()
  const state = yield* Ref.make(SessionState.initial)
  /** The read of the page's cookies and storage after a call, running beside the answer. */
  const saving = yield* FiberHandle.make<void, never>()
  const lease = yield* Lease.make({ state, timeoutMs: options.leaseTimeoutMs ?? 30_000 })
  const engines = EngineSwitch.make({
    state,
    connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
    keep,
    sessionScope: yield* Effect.scope
  })
  const limits = yield* Limits.make(options.limits)
  const records = PageRecords.make(state)
  const tabs = Tabs.make({ state, engines })
  const life = yield* BrowserLife.make({
    state,
    engines,
    limits,
    relaunch: options.relaunch ?? true,
    hungAfterMs: options.hungAfterMs ?? 2_000,
    tabs,
    dialogs: options.dialogs ?? Dialogs.defaultPolicy,
    downloads: options.downloads
  })
  // Engine workers kept loaded for this session end with its browser.
  const stopBrowser = life.stop.pipe(Effect.andThen(keep.clear))
  // Well inside an attempt's time limit (15 s on most levels): a slow download must not make its click time out and be
  // clicked again.
  const downloadWaitMs = options.downloadWaitMs ?? 5_000
  /** How long a call's end waits for a loading page to tell whether its response is a download. */
  const downloadStartMs = 1_000
  const idle = yield* Idle.make({
    state,
    idleTimeoutMs: options.idleTimeoutMs === undefined ? 5 * 60_000 : options.idleTimeoutMs,
    closeIdle: lease.run(stopBrowser)
  })

  // Where the page is when a call ends, and its cookies and storage kept for a relaunch.
  const { track, savedNow } = Tracking.make({ state, saving, changed: Effect.suspend(() => captures.changed) })

  const note = (events: ReadonlyArray<PageEvent.PageEvent>) =>
    events.length === 0 ? Effect.void : Ref.update(state, (s) => ({ ...s, events: [...s.events, ...events] }))

  /** After a call: tabs it opened or closed, where the active page is, and the tab list for the state block. */
  const settleTabs = (live: SessionState.LiveBrowser) =>
    Effect.gen(function* () {
      const now = yield* tabs.sync(live)
      yield* track(now)
      yield* tabs.list(now)
    })

  /** Waits, bounded, for the downloads a call started to finish, so its answer reports them. */
  const settleDownloads = (live: SessionState.LiveBrowser, mark: number, loads: readonly [number, number]) =>
    Effect.gen(function* () {
      const load = yield* live.link.loaded(live.targetId, loads, downloadStartMs)
      const started = live.link.downloadsSince(mark)
      // The browser announces the download a moment after the page stops loading it.
      if (load === "no_document") {
        yield* started.pipe(
          Effect.repeat({ until: (all) => all.length > 0, schedule: Schedule.spaced("25 millis") }),
          Effect.timeoutOption(downloadStartMs)
        )
      }
      const settled = yield* started.pipe(
        Effect.repeat({
          until: (all) => all.every((d) => d.state !== "in_progress"),
          schedule: Schedule.spaced("100 millis")
        }),
        Effect.timeoutOption(downloadWaitMs)
      )
      // One still under way is reported now (its end comes in a later answer): the call that started it is done.
      if (Option.isNone(settled)) {
        yield* note((yield* started).filter((d) => d.state === "in_progress").map(PageEvent.downloaded))
      }
    })

  /** Keeps the outcome of each call: a failed (or stopped) call makes the next one check the browser fully. */
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

  const use = Effect.fn("Sandbox.use")(function* <A, E>(
    spec: EngineSpec,
    f: (engine: Engine["Service"]) => Effect.Effect<A, E>
  ) {
    return yield* lease
      .run(
        Effect.scoped(
          Effect.gen(function* () {
            // The engine's modules load while the browser starts (only the first time costs anything); tabs the page
            // opened since the last call (a window.open after a fetch) are the page to work on now.
            // A relaunched browser's page goes back to its URL while the engine connects.
            const [[started, restored]] = yield* Effect.all([life.ensureRestoring, spec.warm ?? Effect.void], {
              concurrency: 2
            })
            const live = yield* tabs.sync(started)
            const person = spec.id.kind === "human"
            const waiting = yield* live.link.dialog(live.targetId)
            // Every engine would wait behind the dialog: the agent answers it first.
            if (Option.isSome(waiting) && !person) return yield* dialogError(waiting.value, false)
            const work = Effect.gen(function* () {
              const connected = yield* engines.engineFor(spec, live)
              yield* restored
              yield* live.link.claimDownloads
              const mark = yield* live.link.downloadMark
              const loads = yield* live.link.loadMark
              const engine = yield* Captures.guard(captures, spec, connected.engine)
              // A page that runs past a limit ends the call; a reload loop is left for about:blank so it stops.
              const runaway = Limits.breachOn(limits, SessionState.pageOf(live))
              // A dialog blocks every engine: the call ends at once and the answer reports the dialog.
              const dialogOpened = person
                ? Effect.never
                : live.link.dialogOpened(live.targetId).pipe(Effect.flatMap((dialog) => dialogError(dialog, true)))
              return yield* f(engine).pipe(
                // An engine that saw its connection go first is told apart from one whose page or browser went.
                Effect.catch((error: E | SwitchyardError) =>
                  error instanceof CdpClosed && error.lost === undefined
                    ? Loss.under(live).pipe(Effect.flatMap((lost) => Effect.fail(Option.getOrElse(lost, () => error))))
                    : Effect.fail(error)
                ),
                Effect.raceFirst(dialogOpened),
                Effect.raceFirst(runaway),
                // An interrupted call (a timeout) may leave the SDK mid-flight: drop that client before the lease goes.
                // A client whose page or browser went is closed in the background: the answer does not wait for it.
                Effect.onInterrupt(() =>
                  Loss.now(live).pipe(Effect.flatMap((lost) => engines.disconnect("the call was interrupted", lost)))
                ),
                Effect.onExit((exit) =>
                  Effect.gen(function* () {
                    // A call stopped by its time limit, or whose page or browser went, does not wait for its
                    // downloads: the release stays short.
                    if (!Exit.hasInterrupts(exit) && !Loss.endedBy(exit)) yield* settleDownloads(live, mark, loads)
                    yield* settleTabs(live)
                    yield* live.link.notices.pipe(Effect.flatMap(note))
                    yield* idle.touch
                  })
                ),
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
            })
            // A page closed or crashed under a call, or a browser that died, would leave the engine waiting out its
            // time limit (or failing as if the page were at fault): the call ends now with cdp_closed, whatever it was
            // doing, connecting its engine included.
            return yield* work.pipe(Effect.raceFirst(Loss.watch(live)))
          })
        ),
        spec
      )
      .pipe(remember)
  })

  const switchTo = Effect.fn("Sandbox.switchTo")(function* (spec: EngineSpec, reason: string) {
    return yield* lease
      .run(
        Effect.gen(function* () {
          const live = yield* life.ensure
          const entry = yield* engines.switchTo(spec, reason, live)
          yield* live.link.claimDownloads
          yield* settleTabs(live)
          yield* idle.touch
          return entry
        }),
        spec
      )
      .pipe(remember)
  })

  const forceRelease = lease.interruptHolder.pipe(Effect.andThen(engines.disconnect("released")))

  /** Stops the call holding the lease, then the browser, with `holding` (the lease, or its last use). */
  const closeWith = (holding: (self: Effect.Effect<void>) => Effect.Effect<void, unknown>) =>
    Effect.gen(function* () {
      yield* forceRelease
      // The last attempt's screenshot is taken before its browser goes.
      yield* captures.settled
      yield* idle.cancel
      yield* holding(stopBrowser).pipe(Effect.ignore)
      // A closed session starts afresh: nothing to restore or report.
      yield* FiberHandle.clear(saving)
      yield* Ref.update(state, (s) => ({ ...s, lastLocation: undefined, saved: undefined }))
    })
  const close = closeWith((self) => lease.run(self))

  // Shut down first, so a call retried after its interruption cannot start a browser nobody would close.
  yield* Effect.addFinalizer(() => lease.shutDown.pipe(Effect.andThen(closeWith(lease.runLast))))

  /** Runs `read` on the running browser, or answers `none` when there is none. */
  const onBrowser = <A, E>(read: (live: SessionState.LiveBrowser) => Effect.Effect<A, E>, none: Effect.Effect<A, E>) =>
    Ref.get(state).pipe(Effect.flatMap((s) => (s.browser === undefined ? none : read(s.browser))))

  /**
   * Runs `read` on the running browser unless its page cannot answer: a dialog blocks it (reads would wait behind
   * it), or it crashed or closed (they would wait out their time limit).
   */
  const unblocked = <A, E>(
    read: (live: SessionState.LiveBrowser) => Effect.Effect<A, E>,
    blocked: Effect.Effect<A, E>
  ) =>
    onBrowser(
      (live) =>
        Effect.all([live.link.dialog(live.targetId), live.link.fate(live.targetId)]).pipe(
          Effect.flatMap(([dialog, fate]) => (Option.isSome(dialog) || Option.isSome(fate) ? blocked : read(live)))
        ),
      blocked
    )

  /** Work on the tabs: under the lease, so no call runs on a tab while it changes. */
  const onTabs = (work: (live: SessionState.LiveBrowser) => Effect.Effect<SessionState.LiveBrowser, SwitchyardError>) =>
    lease
      .run(
        Effect.gen(function* () {
          const live = yield* life.ensure.pipe(Effect.flatMap(tabs.sync))
          const now = yield* work(live)
          yield* track(now)
          yield* tabs.list(now)
          return (yield* Ref.get(state)).tabs.list
        })
      )
      .pipe(remember)

  const openDialog = Ref.get(state).pipe(
    Effect.flatMap((s) => (s.browser === undefined ? Effect.succeedNone : s.browser.link.dialog(s.browser.targetId)))
  )

  const screenshot = unblocked(
    (live) =>
      Snapshot.screenshot(SessionState.pageOf(live)).pipe(
        Effect.timeoutOption(5_000),
        Effect.orElseSucceed(() => Option.none<Uint8Array>())
      ),
    Effect.succeed(Option.none<Uint8Array>())
  )

  const captures = yield* Captures.make(screenshot)

  const onPage = Effect.fn("Sandbox.onPage")(function* <A>(work: (page: OnPage) => Effect.Effect<A, SwitchyardError>) {
    return yield* lease
      .run(
        Effect.gen(function* () {
          const live = yield* life.ensure.pipe(Effect.flatMap(tabs.sync))
          const waiting = yield* live.link.dialog(live.targetId)
          if (Option.isSome(waiting)) return yield* dialogError(waiting.value, false)
          // The work may move the page (a storage state loads pages of its origins): no capture is cut by it.
          yield* captures.settled
          yield* captures.changed
          const result = yield* work({
            run: SessionState.pageOf(live),
            browser: live.link.onBrowser,
            targetId: live.targetId,
            tabs: (yield* Ref.get(state)).tabs.list.map((t) => t.id),
            runOn: (targetId) => (f) => live.link.run(targetId, f)
          })
          yield* track(live)
          yield* tabs.list(live)
          yield* idle.touch
          return result
        }),
        "automation"
      )
      .pipe(remember)
  })

  return Sandbox.of({
    use,
    switchTo,
    page: Effect.gen(function* () {
      const s = yield* Ref.get(state)
      if (s.browser === undefined) return { tabs: [], dialog: null, downloads: [] }
      return {
        tabs: s.tabs.list,
        dialog: Option.getOrNull(yield* s.browser.link.dialog(s.browser.targetId)),
        downloads: yield* s.browser.link.downloads
      }
    }),
    events: Effect.gen(function* () {
      const s = yield* Ref.get(state)
      // Dialogs answered by policy and downloads that finished between calls are reported too.
      if (s.browser !== undefined) yield* note(yield* s.browser.link.notices)
      return yield* Ref.modify(state, (now): [ReadonlyArray<PageEvent.PageEvent>, SessionState.SessionState] => [
        now.events,
        { ...now, events: [] }
      ])
    }),
    tabs: onTabs(Effect.succeed),
    switchTab: Effect.fn("Sandbox.switchTab")(function* (ref: Tabs.TabRef) {
      return yield* onTabs((live) => tabs.switchTo(live, ref))
    }),
    closeTab: Effect.fn("Sandbox.closeTab")(function* (ref?: Tabs.TabRef) {
      return yield* onTabs((live) => tabs.close(live, ref))
    }),
    openDialog,
    answerDialog: Effect.fn("Sandbox.answerDialog")(function* ({
      accept,
      promptText
    }: {
      readonly accept: boolean
      readonly promptText?: string
    }) {
      const { browser } = yield* Ref.get(state)
      const dialog = browser === undefined ? Option.none() : yield* browser.link.dialog(browser.targetId)
      if (browser === undefined || Option.isNone(dialog)) {
        return yield* new InvalidInput({ field: "dialog", message: "no dialog is open on the page" })
      }
      yield* browser.link.answerDialog(browser.targetId, accept, promptText)
      yield* note([PageEvent.dialogAnswered(dialog.value, accept, "agent")])
      // What the answer led to (a submission, a navigation) shows in the state block of this answer.
      yield* Effect.sleep(100)
      yield* track(browser)
      yield* tabs.list(browser)
      return dialog.value
    }),
    chooseFiles: Effect.fn("Sandbox.chooseFiles")(function* <A, E>(
      files: ReadonlyArray<string>,
      self: Effect.Effect<A, E>
    ) {
      const live = yield* life.ensure
      return yield* live.link.chooseFiles(live.targetId, yield* life.readable(live, files), self)
    }),
    pageState: onBrowser(
      (live): Effect.Effect<PageState, SwitchyardError> => Page.capture(SessionState.sessionOf(live)),
      Effect.fail(new BrowserUnavailable({ message: "no browser is running in this session" }))
    ),
    // Read when each call ends (track): answers reuse it instead of asking the browser again.
    location: Ref.get(state).pipe(
      Effect.map((s) => (s.browser === undefined ? Option.none() : Option.fromNullishOr(s.lastLocation)))
    ),
    mainFrame: onBrowser((live) => live.link.mainFrame(live.targetId), Effect.succeed<MainFrame>({ commits: 0 })),
    errorCode: onBrowser((live) => live.link.errorCode(live.targetId), Effect.succeed(Option.none<string>())),
    fingerprint: onBrowser(
      (live) =>
        live.link
          .dialog(live.targetId)
          .pipe(
            Effect.flatMap((dialog) =>
              Option.isSome(dialog)
                ? Effect.succeed(`dialog:${dialog.value.type}:${dialog.value.message}`)
                : Page.fingerprint(SessionState.pageOf(live))
            )
          ),
      Effect.succeed("")
    ),
    humanCheck: unblocked((live) => HumanCheck.onPage(SessionState.pageOf(live)), Effect.succeed(false)),
    artifacts: {
      screenshotLater: captures.start,
      settled: captures.settled,
      snapshot: (lookedFor?: string) =>
        unblocked(
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
    onPage,
    console: records.console,
    network: records.network,
    request: records.request,
    saved: savedNow,
    restore: Effect.fn("Sandbox.restore")(function* (page: SavedPage.SavedPage, reason: SavedPage.RestoreReason) {
      yield* lease
        .run(
          Effect.gen(function* () {
            const live = yield* life.ensure
            yield* life.restore(live, page, reason)
            yield* Ref.update(state, (s) => ({ ...s, saved: page }))
            yield* settleTabs(live)
            yield* idle.touch
          })
        )
        .pipe(remember)
    }),
    forceRelease,
    close
  })
})
