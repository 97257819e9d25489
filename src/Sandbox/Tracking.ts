/**
 * Where the session's page is when a call ends, as the page says it (what answers report), and its URL, cookies and
 * storage read beside the answer and kept for a relaunch or a hibernation (what a restore brings back). Owns that
 * location, that saved page and the read running beside the answer.
 */
import { Context, Effect, FiberHandle, Layer, Option, Ref } from "effect"
import type { Location } from "./PageLink/Targets.ts"
import * as SavedPage from "./SavedPage.ts"
import type { LiveBrowser } from "./SessionState.ts"

export class Tracking extends Context.Service<
  Tracking,
  {
    /**
     * Reads where the page is now and keeps it, and starts reading its cookies and storage beside the answer.
     * Answers whether the page went elsewhere since the last read (earlier screenshots no longer show it). `still`:
     * nothing could have moved the page since the last read (no act, no load, no target event), so it is not asked.
     */
    readonly track: (live: LiveBrowser, still?: boolean) => Effect.Effect<boolean>
    /** Where the session's page was after the last call: what a relaunch restores and what answers report. */
    readonly lastLocation: Effect.Effect<Location | undefined>
    /** The page's URL, cookies and storage as the last call left them: what a crash's relaunch puts back. */
    readonly saved: Effect.Effect<SavedPage.SavedPage | undefined>
    /** The page's state now: read afresh from `live` when it answers, else as the last call left it. */
    readonly savedNow: (live: Option.Option<LiveBrowser>) => Effect.Effect<Option.Option<SavedPage.SavedPage>>
    /** Keeps `page` as the saved page (one just restored into the browser). */
    readonly keep: (page: SavedPage.SavedPage) => Effect.Effect<void>
    /** Forgets where the page was and what it held: a closed session starts afresh, nothing to restore or report. */
    readonly forget: Effect.Effect<void>
  }
>()("switchyard/Sandbox/Tracking") {
  static readonly layer = Layer.effect(
    Tracking,
    Effect.gen(function* () {
      const state = yield* Ref.make<{
        readonly lastLocation: Location | undefined
        readonly saved: SavedPage.SavedPage | undefined
      }>({ lastLocation: undefined, saved: undefined })
      /** The read of the page's cookies and storage after a call, running beside the answer. */
      const saving = yield* FiberHandle.make<void, never>()

      /**
       * The page's cookies and storage as the call left them, kept for a crash's relaunch (bounded: a busy page keeps
       * the storage read before). A page behind a dialog cannot be read: its storage stays as it was.
       */
      const keepSaved = (live: LiveBrowser, url: string, storage: boolean) =>
        Effect.gen(function* () {
          const { saved: previous } = yield* Ref.get(state)
          // A page that cannot be read (crashed, closed, behind a dialog) keeps the storage read before.
          const readable = storage && Option.isNone(yield* live.link.fate(live.targetId))
          const read = yield* live.link
            .run(live.targetId, (cdp, sessionId) =>
              SavedPage.capture(cdp, sessionId, { url, storage: readable, previous })
            )
            .pipe(Effect.timeoutOption(2_000))
          if (Option.isSome(read)) yield* Ref.update(state, (s) => ({ ...s, saved: read.value }))
        }).pipe(Effect.ignore)

      const track = Effect.fn("Tracking.track")(function* (live: LiveBrowser, still = false) {
        // A page behind a dialog answers nothing: its announced location stands.
        const blocked = Option.isSome(yield* live.link.dialog(live.targetId))
        const { lastLocation } = yield* Ref.get(state)
        if (still && lastLocation !== undefined) {
          yield* FiberHandle.run(saving, keepSaved(live, lastLocation.url, !blocked))
          return false
        }
        const page = blocked ? yield* live.link.location(live.targetId) : yield* live.link.current(live.targetId)
        if (Option.isNone(page)) return false
        const before = (yield* Ref.getAndUpdate(state, (s) => ({ ...s, lastLocation: page.value }))).lastLocation
        // Read beside the answer (the latest read wins): the call does not wait for it.
        yield* FiberHandle.run(saving, keepSaved(live, page.value.url, !blocked))
        // A page that went elsewhere by itself (a redirect, a script) is not the one earlier frames show.
        return before?.url !== page.value.url
      })

      const savedNow = Effect.fn("Tracking.savedNow")(function* (live: Option.Option<LiveBrowser>) {
        const { lastLocation } = yield* Ref.get(state)
        if (Option.isSome(live) && lastLocation !== undefined) {
          const blocked = Option.isSome(yield* live.value.link.dialog(live.value.targetId))
          yield* keepSaved(live.value, lastLocation.url, !blocked)
        }
        return Option.fromNullishOr((yield* Ref.get(state)).saved)
      })

      return Tracking.of({
        track,
        lastLocation: Ref.get(state).pipe(Effect.map((s) => s.lastLocation)),
        saved: Ref.get(state).pipe(Effect.map((s) => s.saved)),
        savedNow,
        keep: (page) => Ref.update(state, (s) => ({ ...s, saved: page })),
        forget: FiberHandle.clear(saving).pipe(
          Effect.andThen(Ref.set(state, { lastLocation: undefined, saved: undefined })),
          Effect.withSpan("Tracking.forget")
        )
      })
    })
  )
}
