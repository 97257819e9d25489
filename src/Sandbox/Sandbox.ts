/**
 * One browser session and its single automation client (seeds 001, 002), as one service composed of parts, each a
 * service with its own state: Lease (who holds the browser), BrowserLife (the browser, its crashes and restores),
 * EngineSwitch (the connected engine, its switches), Tabs (the active tab), Tracking (where the page is, its saved
 * state), PageEvents (what answers have yet to report), Captures (screenshots around an engine's calls), Idle,
 * Folders and PageRecords; Calls puts them in order around each call. The Sandbox itself keeps no state.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { PageState } from "../Engine/Engine.ts"
import * as Page from "../Engine/PageState.ts"
import { BrowserUnavailable } from "../Errors/Browser.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as HumanCheck from "../Takeover/HumanCheck.ts"
import { BrowserLife, type DownloadSettings } from "./BrowserLife.ts"
import { Calls } from "./Calls.ts"
import * as Captures from "./Captures.ts"
import { EngineSwitch } from "./EngineSwitch.ts"
import { Folders } from "./Folders.ts"
import { Idle } from "./Idle.ts"
import { Lease } from "./Lease.ts"
import type * as Limits from "./Limits.ts"
import type * as PageEvent from "./PageEvent.ts"
import { PageEvents } from "./PageEvents.ts"
import * as Dialogs from "./PageLink/Dialogs.ts"
import type { Download } from "./PageLink/Downloads.ts"
import type { MainFrame } from "./PageLink.ts"
import { PageRecords } from "./PageRecords.ts"
import type * as SavedPage from "./SavedPage.ts"
import * as SessionState from "./SessionState.ts"
import * as Snapshot from "./Snapshot.ts"
import { Tabs } from "./Tabs.ts"
import { Tracking } from "./Tracking.ts"

export { dialogError, type OnPage } from "./Calls.ts"
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
  readonly downloads?: DownloadSettings
  /** How long a call waits at its end for the downloads it started to finish; default 5 s. */
  readonly downloadWaitMs?: number
}

/** What the Sandbox passes through from its parts as they declare it: the calls in order, the page's records. */
type FromParts = Pick<
  Calls["Service"],
  "use" | "switchTo" | "tabs" | "switchTab" | "closeTab" | "answerDialog" | "onPage" | "restore"
> &
  PageRecords["Service"]

export class Sandbox extends Context.Service<
  Sandbox,
  FromParts & {
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
      /** The attempt's masked screenshot, stored in the background or pointed at an equal one (Captures.ts). */
      readonly screenshotLater: (keep: Captures.Keep) => Effect.Effect<void>
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
    /** The dialog open on the active tab, if any: engine calls are refused while it is. */
    readonly openDialog: Effect.Effect<Option.Option<Dialogs.OpenDialog>>
    /** Runs `self` with any file chooser the active page opens answered with `files` (absolute paths). */
    readonly chooseFiles: <A, E>(
      files: ReadonlyArray<string>,
      self: Effect.Effect<A, E>
    ) => Effect.Effect<readonly [A, number], E | SwitchyardError>
    /** The page's URL, cookies and storage: read now when the browser answers, else as the last call left them. */
    readonly saved: Effect.Effect<Option.Option<SavedPage.SavedPage>>
    /** Interrupts the call holding the lease and disconnects its engine; the browser stays. */
    readonly forceRelease: Effect.Effect<void>
    /** Disconnects the engine and stops the browser; the next call starts a new one. Idempotent. */
    readonly close: Effect.Effect<void>
  }
>()("switchyard/Sandbox") {
  static readonly layer = (options: SandboxOptions = {}) =>
    Layer.effect(Sandbox, make()).pipe(Layer.provide(parts(options)))
}

/**
 * The session's parts, each built over those it needs, all of them the session's own (a fresh build, so no two
 * sessions share one). Built bottom up, they close top down: the engine workers, kept by EngineSwitch, last.
 */
const parts = (options: SandboxOptions) => {
  const pages = Layer.mergeAll(PageEvents.layer, Tracking.layer)
  const engines = EngineSwitch.layer({ connectTimeoutMs: options.connectTimeoutMs ?? 30_000 }).pipe(
    Layer.provideMerge(pages)
  )
  const life = BrowserLife.layer({
    limits: options.limits,
    relaunch: options.relaunch ?? true,
    hungAfterMs: options.hungAfterMs ?? 2_000,
    dialogs: options.dialogs ?? Dialogs.defaultPolicy,
    downloads: options.downloads
  }).pipe(Layer.provideMerge(Folders.layer), Layer.provideMerge(Tabs.layer), Layer.provideMerge(engines))
  const idle = Idle.layer({
    idleTimeoutMs: options.idleTimeoutMs === undefined ? 5 * 60_000 : options.idleTimeoutMs
  }).pipe(Layer.provideMerge(Lease.layer({ timeoutMs: options.leaseTimeoutMs ?? 30_000 })), Layer.provideMerge(life))
  const calls = Calls.layer({
    // Well inside an attempt's time limit (15 s on most levels): a slow download must not make its click time out and
    // be clicked again.
    downloadWaitMs: options.downloadWaitMs ?? 5_000
  }).pipe(Layer.provideMerge(Layer.mergeAll(Captures.Captures.layer, PageRecords.layer)), Layer.provideMerge(idle))
  return Layer.fresh(calls)
}

export const make = Effect.fnUntraced(function* () {
  const calls = yield* Calls
  const lease = yield* Lease
  const life = yield* BrowserLife
  const engines = yield* EngineSwitch
  const tabs = yield* Tabs
  const tracking = yield* Tracking
  const pageEvents = yield* PageEvents
  const captures = yield* Captures.Captures
  const idle = yield* Idle
  const records = yield* PageRecords

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
      yield* tracking.forget
    })
  const close = closeWith((self) => lease.run(self))

  // Shut down first, so a call retried after its interruption cannot start a browser nobody would close.
  yield* Effect.addFinalizer(() => lease.shutDown.pipe(Effect.andThen(closeWith(lease.runLast))))

  return Sandbox.of({
    use: calls.use,
    switchTo: calls.switchTo,
    page: life
      .onBrowser(
        (live) =>
          Effect.gen(function* () {
            return {
              tabs: yield* tabs.listed,
              dialog: Option.getOrNull(yield* live.link.dialog(live.targetId)),
              downloads: yield* live.link.downloads
            }
          }),
        Effect.succeed<PageView>({ tabs: [], dialog: null, downloads: [] })
      )
      .pipe(Effect.withSpan("Sandbox.page")),
    events: Effect.gen(function* () {
      // Dialogs answered by policy and downloads that finished between calls are reported too.
      yield* life.onBrowser((live) => live.link.notices.pipe(Effect.flatMap(pageEvents.note)), Effect.void)
      return yield* pageEvents.drain
    }).pipe(Effect.withSpan("Sandbox.events")),
    tabs: calls.tabs,
    switchTab: calls.switchTab,
    closeTab: calls.closeTab,
    openDialog: life.onBrowser((live) => live.link.dialog(live.targetId), Effect.succeedNone),
    answerDialog: calls.answerDialog,
    chooseFiles: Effect.fn("Sandbox.chooseFiles")(function* <A, E>(
      files: ReadonlyArray<string>,
      self: Effect.Effect<A, E>
    ) {
      const live = yield* life.ensure
      return yield* live.link.chooseFiles(live.targetId, yield* life.readable(live, files), self)
    }),
    pageState: life.onBrowser(
      (live): Effect.Effect<PageState, SwitchyardError> => Page.capture(SessionState.sessionOf(live)),
      Effect.fail(new BrowserUnavailable({ message: "no browser is running in this session" }))
    ),
    // Read when each call ends (track): answers reuse it instead of asking the browser again.
    location: life.onBrowser(() => tracking.lastLocation.pipe(Effect.map(Option.fromNullishOr)), Effect.succeedNone),
    mainFrame: life.onBrowser((live) => live.link.mainFrame(live.targetId), Effect.succeed<MainFrame>({ commits: 0 })),
    errorCode: life.onBrowser((live) => live.link.errorCode(live.targetId), Effect.succeed(Option.none<string>())),
    fingerprint: life.onBrowser(
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
    humanCheck: life.unblocked((live) => HumanCheck.onPage(SessionState.pageOf(live)), Effect.succeed(false)),
    artifacts: {
      screenshotLater: captures.start,
      settled: captures.settled,
      snapshot: (lookedFor?: string) =>
        life.unblocked(
          (live) =>
            Snapshot.failureSnapshot(SessionState.pageOf(live), lookedFor).pipe(
              Effect.timeoutOption(5_000),
              Effect.orElseSucceed(() => Option.none<unknown>())
            ),
          Effect.succeed(Option.none<unknown>())
        )
    },
    status: Effect.gen(function* () {
      const browser = yield* life.current
      const engine = yield* engines.current
      return SessionState.statusOf(
        {
          browser: Option.getOrUndefined(browser),
          engine: Option.getOrUndefined(engine),
          initializing: yield* life.initializing,
          lastError: yield* life.lastError,
          lastUsedAt: yield* idle.lastUsedAt
        },
        yield* Clock.currentTimeMillis
      )
    }).pipe(Effect.withSpan("Sandbox.status")),
    history: engines.history,
    onPage: calls.onPage,
    console: records.console,
    network: records.network,
    request: records.request,
    saved: life.current.pipe(Effect.flatMap(tracking.savedNow), Effect.withSpan("Sandbox.saved")),
    restore: calls.restore,
    forceRelease,
    close
  })
})
