/**
 * One call on the session's browser, its parts in order: the lease; the browser ensured (relaunched and restored when
 * it died) and its tabs brought up to date; refused while a dialog waits; the engine connected or switched to; raced
 * against the page's loss, a dialog and a limit; at its end the downloads it started, the tabs it opened, where the
 * page went, and the session marked used. Owns nothing: each part keeps its own state.
 */
import { Context, Effect, Exit, Layer, Option, Ref, Schedule } from "effect"
import type * as CdpConnection from "../Cdp/Connection.ts"
import type { PageRun } from "../Cdp/Session.ts"
import type { Engine } from "../Engine/Engine.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import { CdpClosed } from "../Errors/Engine.ts"
import { DialogOpen, InvalidInput } from "../Errors/Page.ts"
import type { SwitchyardError } from "../Errors.ts"
import { BrowserLife } from "./BrowserLife.ts"
import * as Captures from "./Captures.ts"
import { EngineSwitch } from "./EngineSwitch.ts"
import { Idle } from "./Idle.ts"
import { Lease } from "./Lease.ts"
import * as Loss from "./Loss.ts"
import * as PageEvent from "./PageEvent.ts"
import { PageEvents } from "./PageEvents.ts"
import type * as Dialogs from "./PageLink/Dialogs.ts"
import type * as SavedPage from "./SavedPage.ts"
import * as SessionState from "./SessionState.ts"
import * as StartTime from "./StartTime.ts"
import { type TabRef, Tabs } from "./Tabs.ts"
import { Tracking } from "./Tracking.ts"

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

/** The dialog on the active tab as an error: a call refused because of it, or cut short by it (`openedByCall`). */
export const dialogError = (dialog: Dialogs.OpenDialog, openedByCall: boolean) =>
  new DialogOpen({
    dialog,
    openedByCall,
    sideEffect: openedByCall ? "possible" : "none",
    message: openedByCall ? `the call opened a dialog: ${dialogHint(dialog)}` : dialogHint(dialog)
  })

export class Calls extends Context.Service<
  Calls,
  {
    /** Runs `f` on the engine `spec` names, inside the lease: starts the browser, connects or switches as needed. */
    readonly use: <A, E>(
      spec: EngineSpec,
      f: (engine: Engine["Service"]) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E | SwitchyardError>
    /** Runs the switch protocol to `spec` even when it is already connected (a fresh client). */
    readonly switchTo: (spec: EngineSpec, reason: string) => Effect.Effect<SessionState.SwitchRecord, SwitchyardError>
    /**
     * Runs `work` on the active page without an engine, holding the lease (the browser started when there is none);
     * refused while a person has the browser or a dialog waits on the page.
     */
    readonly onPage: <A>(work: (page: OnPage) => Effect.Effect<A, SwitchyardError>) => Effect.Effect<A, SwitchyardError>
    /** The tabs now. */
    readonly tabs: Effect.Effect<ReadonlyArray<PageEvent.Tab>, SwitchyardError>
    /** Makes a tab the page the session works on; every engine level then drives it. */
    readonly switchTab: (ref: TabRef) => Effect.Effect<ReadonlyArray<PageEvent.Tab>, SwitchyardError>
    /** Closes a tab (the active one when absent); closing the active tab falls back to the previous one. */
    readonly closeTab: (ref?: TabRef) => Effect.Effect<ReadonlyArray<PageEvent.Tab>, SwitchyardError>
    /** Answers the dialog open on the active tab. */
    readonly answerDialog: (answer: {
      readonly accept: boolean
      readonly promptText?: string
    }) => Effect.Effect<Dialogs.OpenDialog, SwitchyardError>
    /**
     * Opens a saved page in the session's browser (started if need be): its cookies and storage in place before its
     * first request. The next answer reports it (`pageEvents`: `restored`, with `reason`).
     */
    readonly restore: (
      page: SavedPage.SavedPage,
      reason: SavedPage.RestoreReason
    ) => Effect.Effect<void, SwitchyardError>
  }
>()("switchyard/Sandbox/Calls") {
  static readonly layer = (options: CallsOptions) => Layer.effect(Calls, make(options))
}

export interface CallsOptions {
  /** How long a call waits at its end for the downloads it started to finish. */
  readonly downloadWaitMs: number
}

/** How long a call's end waits for a loading page to tell whether its response is a download. */
const downloadStartMs = 1_000

export const make = Effect.fnUntraced(function* (options: CallsOptions) {
  const { downloadWaitMs } = options
  const lease = yield* Lease
  const life = yield* BrowserLife
  const engines = yield* EngineSwitch
  const tabs = yield* Tabs
  const tracking = yield* Tracking
  const pageEvents = yield* PageEvents
  const captures = yield* Captures.Captures
  const idle = yield* Idle

  /** Engine calls begun that may move the page (a navigate, an act, a script, a vision engine's attempt). */
  const moves = yield* Ref.make(0)
  const moved = Ref.update(moves, (n) => n + 1)
  /** The captures as an engine's calls see them: what they say may change the page is counted as a move too. */
  const counting: Captures.Captures["Service"] = {
    ...captures,
    changed: Effect.andThen(moved, captures.changed),
    typing: Effect.andThen(moved, captures.typing),
    choosing: Effect.andThen(moved, captures.choosing)
  }
  /** What could have moved the page, counted when a call's end last read where it is. */
  const lastMark = yield* Ref.make<string | undefined>(undefined)

  /**
   * Where the page is when a call ends; a page that went elsewhere is not the one earlier frames show. `settled`: the
   * end of an engine call, where the page is not asked again when nothing could have moved it since the last end (no
   * navigate, act or script began, no load, no target event: a URL or title change is one).
   */
  const track = (live: SessionState.LiveBrowser, settled = false) =>
    Effect.gen(function* () {
      const mark = `${live.targetId} ${yield* Ref.get(moves)} ${yield* live.link.targetEvents} ${yield* live.link.loadMark}`
      const still = settled && (yield* Ref.getAndSet(lastMark, mark)) === mark
      if (!settled) yield* Ref.set(lastMark, undefined)
      const moved = yield* tracking.track(live, still)
      if (moved) yield* captures.moved
    })

  /**
   * After a call: tabs it opened or closed, where the active page is, and the tab list for the state block. Where the
   * page is is read beside the look for other tabs, and read again on the tab the session moved to when it moved.
   */
  const settleTabs = (live: SessionState.LiveBrowser, settled = false) =>
    Effect.gen(function* () {
      const [now] = yield* Effect.all([tabs.sync(live), track(live, settled)], { concurrency: 2 })
      if (now.targetId !== live.targetId) yield* track(now)
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
        yield* pageEvents.note((yield* started).filter((d) => d.state === "in_progress").map(PageEvent.downloaded))
      }
    }).pipe(Effect.withSpan("Calls.settleDownloads"))

  const use = Effect.fn("Calls.use")(function* <A, E>(
    spec: EngineSpec,
    f: (engine: Engine["Service"]) => Effect.Effect<A, E>
  ) {
    return yield* lease
      .run(
        Effect.scoped(
          Effect.gen(function* () {
            // The engine's modules load while the browser starts (only the first time costs anything; neither counts
            // against the attempt's limit); tabs the page opened since the last call (a window.open after a fetch) are
            // the page to work on now. A relaunched browser's page goes back to its URL while the engine connects.
            const [[started, restored]] = yield* Effect.all(
              [life.ensureRestoring, StartTime.uncounted(spec.warm ?? Effect.void)],
              { concurrency: 2 }
            )
            const live = yield* tabs.sync(started)
            const person = spec.id.kind === "human"
            const waiting = yield* live.link.dialog(live.targetId)
            // Every engine would wait behind the dialog: the agent answers it first.
            if (Option.isSome(waiting) && !person) return yield* dialogError(waiting.value, false)
            const work = Effect.gen(function* () {
              const before = yield* engines.current
              const connected = yield* engines.engineFor(spec, live)
              yield* restored
              // A client that connected now may have pointed the browser's downloads elsewhere (Playwright does): they
              // are claimed back. A client kept from the last call left them where they were.
              if (Option.isNone(before) || before.value !== connected) yield* live.link.claimDownloads
              const mark = yield* live.link.downloadMark
              const loads = yield* live.link.loadMark
              const engine = yield* Captures.guard(
                counting,
                spec,
                connected.engine,
                live.link.mainFrame(live.targetId).pipe(Effect.map((main) => main.loads ?? 0))
              ).pipe(Effect.withSpan("Calls.guard"))
              // A page that runs past a limit ends the call; a reload loop is left for about:blank so it stops.
              const runaway = life.breach(live)
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
                    yield* captures.ended
                    // A call stopped by its time limit, or whose page or browser went, does not wait for its
                    // downloads: the release stays short.
                    if (!Exit.hasInterrupts(exit) && !Loss.endedBy(exit)) yield* settleDownloads(live, mark, loads)
                    // A person's moves go through no engine call: their page is always asked.
                    yield* settleTabs(live, !person)
                    yield* live.link.notices.pipe(Effect.flatMap(pageEvents.note))
                    yield* idle.touch
                  }).pipe(Effect.withSpan("Calls.settle"))
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
      .pipe(life.remember)
  })

  const switchTo = Effect.fn("Calls.switchTo")(function* (spec: EngineSpec, reason: string) {
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
      .pipe(life.remember)
  })

  /** Work on the tabs: under the lease, so no call runs on a tab while it changes. */
  const onTabs = (work: (live: SessionState.LiveBrowser) => Effect.Effect<SessionState.LiveBrowser, SwitchyardError>) =>
    lease
      .run(
        Effect.gen(function* () {
          const live = yield* life.ensure.pipe(Effect.flatMap(tabs.sync))
          // A frame held for the page before is taken of that page, not of the tab shown next.
          yield* captures.settled
          const now = yield* work(live)
          yield* track(now)
          yield* tabs.list(now)
          return yield* tabs.listed
        })
      )
      .pipe(life.remember)

  const onPage = Effect.fn("Calls.onPage")(function* <A>(work: (page: OnPage) => Effect.Effect<A, SwitchyardError>) {
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
            tabs: (yield* tabs.listed).map((t) => t.id),
            runOn: (targetId) => (f) => live.link.run(targetId, f)
          })
          yield* track(live)
          yield* tabs.list(live)
          yield* idle.touch
          return result
        }),
        "automation"
      )
      .pipe(life.remember)
  })

  const answerDialog = Effect.fn("Calls.answerDialog")(function* ({
    accept,
    promptText
  }: {
    readonly accept: boolean
    readonly promptText?: string
  }) {
    const browser = yield* life.current
    const dialog = Option.isNone(browser) ? Option.none() : yield* browser.value.link.dialog(browser.value.targetId)
    if (Option.isNone(browser) || Option.isNone(dialog)) {
      return yield* new InvalidInput({ field: "dialog", message: "no dialog is open on the page" })
    }
    const live = browser.value
    yield* live.link.answerDialog(live.targetId, accept, promptText)
    yield* pageEvents.note([PageEvent.dialogAnswered(dialog.value, accept, "agent")])
    // What the answer led to (a submission, a navigation) shows in the state block of this answer.
    yield* Effect.sleep(100)
    yield* track(live)
    yield* tabs.list(live)
    return dialog.value
  })

  const restore = Effect.fn("Calls.restore")(function* (page: SavedPage.SavedPage, reason: SavedPage.RestoreReason) {
    yield* lease
      .run(
        Effect.gen(function* () {
          const live = yield* life.ensure
          yield* life.restore(live, page, reason)
          yield* tracking.keep(page)
          yield* settleTabs(live)
          yield* idle.touch
        })
      )
      .pipe(life.remember)
  })

  return Calls.of({
    use,
    switchTo,
    onPage,
    tabs: onTabs(Effect.succeed).pipe(Effect.withSpan("Calls.tabs")),
    switchTab: Effect.fn("Calls.switchTab")(function* (ref: TabRef) {
      return yield* onTabs((live) => tabs.switchTo(live, ref))
    }),
    closeTab: Effect.fn("Calls.closeTab")(function* (ref?: TabRef) {
      return yield* onTabs((live) => tabs.close(live, ref))
    }),
    answerDialog,
    restore
  })
})
