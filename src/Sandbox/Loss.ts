/**
 * The session's page or browser lost under a call — its tab crashed, hung or closed, its browser process died — as
 * the `cdp_closed` error (with `lost`) that ends the call at once, whatever the engine was doing, and tells the
 * cascade not to retry it there: the next call gets the page back.
 */
import { Deferred, Effect, Exit, Option } from "effect"
import { CdpClosed } from "../Errors/Engine.ts"
import { described, type Fate } from "./PageLink/Targets.ts"
import type { LiveBrowser } from "./SessionState.ts"

export const page = (fate: Fate) =>
  new CdpClosed({
    sideEffect: "possible",
    lost: fate,
    message: `the session's page ${described[fate]} during the call; the next call works on the previous tab, or opens a new page at the last URL with its cookies and storage`
  })

export const browser = new CdpClosed({
  sideEffect: "possible",
  lost: "browser",
  message:
    "the session's browser crashed during the call; the next call relaunches it at the last URL with its cookies and storage"
})

const exited = (live: LiveBrowser) =>
  live.running.exit === undefined ? Effect.never : Deferred.await(live.running.exit)

/**
 * Fails when the page or the browser goes. A tab that closes itself after the click that finished its job (an OAuth
 * popup) gives the call 2 s to end well first; the next call works on the previous tab.
 */
export const watch = (live: LiveBrowser): Effect.Effect<never, CdpClosed> =>
  Effect.raceFirst(
    live.link
      .lost(live.targetId)
      .pipe(
        Effect.flatMap((fate) => (fate === "closed" ? Effect.sleep(2_000) : Effect.void).pipe(Effect.as(page(fate))))
      ),
    exited(live).pipe(Effect.as(browser))
  ).pipe(Effect.flatMap(Effect.fail))

/** Whether the page or the browser went, waiting a moment for the browser's word (it may come after the engine's). */
export const under = (live: LiveBrowser): Effect.Effect<Option.Option<CdpClosed>> =>
  Effect.raceFirst(live.link.lost(live.targetId).pipe(Effect.map(page)), exited(live).pipe(Effect.as(browser))).pipe(
    Effect.timeoutOption(500)
  )

/** Whether the page or the browser is known to be gone now. */
export const now = (live: LiveBrowser): Effect.Effect<boolean> =>
  live.link
    .fate(live.targetId)
    .pipe(
      Effect.map(
        (fate) => Option.isSome(fate) || (live.running.exit !== undefined && Deferred.isDoneUnsafe(live.running.exit))
      )
    )

/** Whether a call ended because its page or browser went. */
export const endedBy = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) &&
  exit.cause.reasons.some((r) => r._tag === "Fail" && r.error instanceof CdpClosed && r.error.lost !== undefined)
