/**
 * Where the session's page is when a call ends, as the page says it (what answers report), and its URL, cookies and
 * storage read beside the answer and kept for a relaunch or a hibernation (what a restore brings back).
 */
import { Effect, FiberHandle, Option, Ref } from "effect"
import * as SavedPage from "./SavedPage.ts"
import type * as SessionState from "./SessionState.ts"

export interface TrackingOptions {
  readonly state: Ref.Ref<SessionState.SessionState>
  /** The read of the page's cookies and storage after a call, running beside the answer. */
  readonly saving: FiberHandle.FiberHandle<void, never>
  /** Tells the captures the page moved: earlier frames no longer show it. */
  readonly changed: Effect.Effect<void>
}

export const make = (options: TrackingOptions) => {
  const { state, saving } = options
  /** Where the page is when a call ends, as the page says it: what answers report and what a relaunch restores. */
  const track = (live: SessionState.LiveBrowser) =>
    Effect.gen(function* () {
      // A page behind a dialog answers nothing: its announced location stands.
      const blocked = Option.isSome(yield* live.link.dialog(live.targetId))
      const page = blocked ? yield* live.link.location(live.targetId) : yield* live.link.current(live.targetId)
      if (Option.isNone(page)) return
      const before = (yield* Ref.getAndUpdate(state, (s) => ({ ...s, lastLocation: page.value }))).lastLocation
      // A page that went elsewhere by itself (a redirect, a script) is not the one earlier frames show.
      if (before?.url !== page.value.url) yield* options.changed
      // Read beside the answer (the latest read wins): the call does not wait for it.
      yield* FiberHandle.run(saving, keepSaved(live, page.value.url, !blocked))
    })

  /**
   * The page's cookies and storage as the call left them, kept for a crash's relaunch (bounded: a busy page keeps
   * the storage read before). A page behind a dialog cannot be read: its storage stays as it was.
   */
  const keepSaved = (live: SessionState.LiveBrowser, url: string, storage: boolean) =>
    Effect.gen(function* () {
      const { saved: previous } = yield* Ref.get(state)
      // A page that cannot be read (crashed, closed, behind a dialog) keeps the storage read before.
      const readable = storage && Option.isNone(yield* live.link.fate(live.targetId))
      const read = yield* live.link
        .run(live.targetId, (cdp, sessionId) => SavedPage.capture(cdp, sessionId, { url, storage: readable, previous }))
        .pipe(Effect.timeoutOption(2_000))
      if (Option.isSome(read)) yield* Ref.update(state, (s) => ({ ...s, saved: read.value }))
    }).pipe(Effect.ignore)

  /** The page's state now (read afresh when the browser answers, else as the last call left it). */
  const savedNow = Effect.gen(function* () {
    const { browser, lastLocation } = yield* Ref.get(state)
    if (browser !== undefined && lastLocation !== undefined) {
      const blocked = Option.isSome(yield* browser.link.dialog(browser.targetId))
      yield* keepSaved(browser, lastLocation.url, !blocked)
    }
    return Option.fromNullishOr((yield* Ref.get(state)).saved)
  })

  return { track, savedNow }
}
