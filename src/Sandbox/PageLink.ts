/**
 * The Sandbox's own line to the browser: one CDP connection kept for its life, with the session's page attached for
 * reads, target events (PageLink/Targets.ts) and dialogs (PageLink/Dialogs.ts); reopened on a schedule when it drops.
 */
import { Effect, Exit, Option, PubSub, Ref, Schedule, Scope, SynchronizedRef } from "effect"
import * as CdpConnection from "../Cdp/Connection.ts"
import type * as Protocol from "../Cdp/Protocol.ts"
import * as Session from "../Cdp/Session.ts"
import { CdpClosed } from "../Errors/Engine.ts"
import * as Dialogs from "./PageLink/Dialogs.ts"
import * as Targets from "./PageLink/Targets.ts"

export interface PageLink {
  /** Runs `f` with a session attached to the page `targetId` on the kept connection. */
  readonly run: <A, E>(
    targetId: string,
    f: (cdp: CdpConnection.Connection, sessionId: string) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | CdpClosed>
  /** A page's URL and title as the browser last announced them (target events: no round trip). */
  readonly location: (targetId: string) => Effect.Effect<Option.Option<Targets.Location>>
  /**
   * A page's URL and `document.title` as the page itself says them now (one round trip, bounded): the announced
   * title lags a navigation and stands in the URL for a page without a title. The announced one when it cannot answer.
   */
  readonly current: (targetId: string) => Effect.Effect<Option.Option<Targets.Location>>
  /** Opens a new page target and returns its id. */
  readonly openPage: Effect.Effect<string, CdpClosed>
  /** Closes a page target (a crashed one, replaced). */
  readonly closePage: (targetId: string) => Effect.Effect<void, CdpClosed>
  /** Whether the browser answers on the kept socket (one round trip, bounded); false when the socket is closed. */
  readonly alive: Effect.Effect<boolean>
  /** Attaches to the session's page now and after every reconnect, so its dialogs are seen without a read. */
  readonly follow: (targetId: string) => Effect.Effect<void>
  /** Whether `targetId` was closed or crashed since the link saw it. */
  readonly fate: (targetId: string) => Effect.Effect<Option.Option<Targets.Fate>>
  /** Completes when `targetId` is closed or crashes (at once if it already has). */
  readonly lost: (targetId: string) => Effect.Effect<Targets.Fate>
  /** Whether the page's main thread answers a trivial evaluation within `timeoutMs`. */
  readonly responsive: (targetId: string, timeoutMs: number) => Effect.Effect<boolean>
}

export interface PageLinkOptions {
  /** Asked when a dialog opens: false leaves it for a person to answer. */
  readonly answerDialogs: Effect.Effect<boolean>
  /** Set up on each new connection, for that connection's life (the egress guard for file:, which lasts as long as
   * the connection that enabled it). */
  readonly onConnect?: (cdp: CdpConnection.Connection) => Effect.Effect<void, CdpClosed, Scope.Scope>
}

/** One connection of the link's life, with the pages attached on it. */
interface Open {
  readonly cdp: CdpConnection.Connection
  readonly scope: Scope.Closeable
  /** targetId → attached sessionId */
  readonly sessions: Ref.Ref<ReadonlyMap<string, string>>
}

/** After the socket drops with the browser still there (a reset connection), a few quick tries to reopen it. */
const reopenSchedule = Schedule.exponential("100 millis").pipe(Schedule.upTo({ times: 5 }))

/** Bound on the browser answering the link's own set-up commands (attach, target discovery). */
const answerTimeoutMs = 5_000

/** How long `current` waits for the page (a hung main thread or an open dialog never answers). */
const currentTimeoutMs = 500

/** Forgets the sessions of pages that were destroyed or detached on this connection. */
const forgetSessions = (open: Open, event: Protocol.Event) => {
  switch (event.method) {
    case "Target.targetDestroyed":
      return Ref.update(open.sessions, (m) => {
        const next = new Map(m)
        next.delete(event.params.targetId)
        return next
      })
    case "Target.detachedFromTarget":
      return Ref.update(
        open.sessions,
        (m) => new Map([...m].filter(([, sessionId]) => sessionId !== event.params.sessionId))
      )
    default:
      return Effect.void
  }
}

export const make = Effect.fnUntraced(function* (wsEndpoint: string, options: PageLinkOptions) {
  const linkScope = yield* Effect.scope
  const targets = yield* Targets.make
  /** The connection now; `"closed"` once the link closed with the browser, so nothing opens one after that. */
  const current = yield* SynchronizedRef.make<Open | undefined | "closed">(undefined)
  const followed = yield* Ref.make<string | undefined>(undefined)

  const attach = (open: Open, targetId: string) =>
    Effect.gen(function* () {
      const known = (yield* Ref.get(open.sessions)).get(targetId)
      if (known !== undefined) return known
      const { sessionId } = yield* open.cdp.send("Target.attachToTarget", { targetId, flatten: true }).pipe(
        Effect.timeoutOrElse({
          duration: answerTimeoutMs,
          orElse: () => Effect.fail(new CdpClosed({ message: `attaching to page ${targetId} took over 5 s` }))
        })
      )
      // Page events carry the dialogs. Not awaited: a page whose main thread hangs would never answer, and the
      // session's later commands queue behind it in the page anyway.
      yield* Effect.forkIn(open.cdp.send("Page.enable", {}, sessionId).pipe(Effect.ignore), linkScope)
      yield* Ref.update(open.sessions, (m) => new Map(m).set(targetId, sessionId))
      return sessionId
    })

  /** A new connection: its events feed the target bookkeeping and the dialog answerer from the first one on. */
  const connect = Effect.gen(function* () {
    const scope = yield* Scope.make()
    return yield* Effect.gen(function* () {
      const cdp = yield* CdpConnection.connect(wsEndpoint)
      const open: Open = { cdp, scope, sessions: yield* Ref.make<ReadonlyMap<string, string>>(new Map()) }
      const events = yield* cdp.events
      yield* PubSub.take(events).pipe(
        Effect.flatMap((event) => Effect.andThen(targets.observe(event), forgetSessions(open, event))),
        Effect.forever,
        Effect.forkScoped
      )
      yield* Dialogs.answer(cdp, yield* cdp.events, options.answerDialogs).pipe(Effect.forkScoped)
      if (options.onConnect !== undefined) yield* options.onConnect(cdp)
      yield* cdp.send("Target.setDiscoverTargets", { discover: true }).pipe(
        Effect.timeoutOrElse({
          duration: answerTimeoutMs,
          orElse: () => Effect.fail(new CdpClosed({ message: "the browser did not answer Target.setDiscoverTargets" }))
        })
      )
      return open
    }).pipe(
      Scope.provide(scope),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
  })

  /** The open connection, reopened when the socket dropped; one opener at a time. */
  const ensure: Effect.Effect<Open, CdpClosed> = Effect.gen(function* () {
    const known = yield* SynchronizedRef.get(current)
    if (typeof known === "object" && (yield* known.cdp.isOpen)) return known
    return yield* SynchronizedRef.modifyEffect(current, (stale) =>
      Effect.gen(function* () {
        if (stale === "closed") return yield* new CdpClosed({ message: "the browser's page link is closed" })
        if (stale !== undefined && (yield* stale.cdp.isOpen)) return [stale, stale] as const
        if (stale !== undefined) yield* Scope.close(stale.scope, Exit.void)
        const open = yield* connect
        const page = yield* Ref.get(followed)
        if (page !== undefined) yield* attach(open, page).pipe(Effect.ignore)
        // A socket that drops while the browser lives (a reset connection) is reopened before anyone needs it.
        yield* open.cdp.closed.pipe(
          Effect.andThen(Effect.logDebug("the kept CDP connection dropped; reopening it")),
          Effect.andThen(Effect.suspend(() => ensure).pipe(Effect.retry(reopenSchedule))),
          Effect.ignore,
          Effect.forkIn(linkScope)
        )
        return [open, open] as const
      })
    )
  })

  yield* Effect.addFinalizer(() =>
    SynchronizedRef.modifyEffect(current, (open) =>
      (typeof open === "object" ? Scope.close(open.scope, Exit.void) : Effect.void).pipe(
        Effect.as([undefined, "closed"] as const)
      )
    )
  )
  // The first connection is made now so target events are seen from the start; a failure here is retried on use.
  yield* ensure.pipe(Effect.ignore)

  const run = <A, E>(
    targetId: string,
    f: (cdp: CdpConnection.Connection, sessionId: string) => Effect.Effect<A, E>
  ): Effect.Effect<A, E | CdpClosed> =>
    Effect.gen(function* () {
      const open = yield* ensure
      return yield* f(open.cdp, yield* attach(open, targetId))
    })

  return {
    run,
    location: targets.location,
    current: (targetId) =>
      targets.fate(targetId).pipe(
        Effect.flatMap((fate) =>
          Option.isSome(fate)
            ? Effect.succeed(Option.none<Targets.Location>())
            : run(targetId, (cdp, sessionId) =>
                Session.evaluateOn<Targets.Location>(cdp, sessionId, "({ url: location.href, title: document.title })")
              ).pipe(Effect.timeoutOption(currentTimeoutMs))
        ),
        Effect.orElseSucceed(() => Option.none<Targets.Location>()),
        Effect.flatMap((read) => (Option.isSome(read) ? Effect.succeed(read) : targets.location(targetId)))
      ),
    openPage: ensure.pipe(
      Effect.flatMap((open) => open.cdp.send("Target.createTarget", { url: "about:blank" })),
      Effect.map((created) => created.targetId)
    ),
    closePage: (targetId) =>
      ensure.pipe(
        Effect.flatMap((open) => open.cdp.send("Target.closeTarget", { targetId })),
        Effect.asVoid
      ),
    // The socket can still look open for a moment after the browser is killed: only an answer proves it alive.
    alive: Effect.gen(function* () {
      const open = yield* SynchronizedRef.get(current)
      if (typeof open !== "object" || !(yield* open.cdp.isOpen)) return false
      return yield* open.cdp.send("Browser.getVersion").pipe(
        Effect.timeoutOption(2_000),
        Effect.map(Option.isSome),
        Effect.orElseSucceed(() => false)
      )
    }),
    follow: (targetId) =>
      Ref.set(followed, targetId).pipe(Effect.andThen(run(targetId, () => Effect.void)), Effect.ignore),
    fate: targets.fate,
    lost: targets.lost,
    responsive: (targetId, timeoutMs) =>
      run(targetId, (cdp, sessionId) => Session.evaluateOn(cdp, sessionId, "1")).pipe(
        Effect.timeoutOption(timeoutMs),
        Effect.map(Option.isSome),
        // A closed socket or page says nothing about the main thread: the other checks handle those.
        Effect.orElseSucceed(() => true)
      )
  } satisfies PageLink
})
