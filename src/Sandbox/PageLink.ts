/**
 * The Sandbox's own line to the browser: one raw-CDP connection kept for the browser's life. Its reads around
 * calls (the act fingerprint, the page's location, page state, artifacts) run on a session attached to the page
 * once, instead of a new socket and attach per read, and the browser's target events say when the session's page
 * was closed or its renderer crashed. JavaScript dialogs would block every client of the page (Stagehand waits
 * forever on one): the link answers them unless told to leave them to a person. A dropped socket is reopened on the
 * next use.
 */
import { Deferred, Effect, Exit, Option, Queue, Scope, Semaphore } from "effect"
import * as Cdp from "../Cdp/Cdp.ts"
import { CdpClosed } from "../Errors/Engine.ts"

/** What happened to a page: closed (tab closed), crashed (renderer gone) or hung (main thread not answering). */
export type Fate = "closed" | "crashed" | "hung"

export const described: Record<Fate, string> = {
  closed: "was closed",
  crashed: "crashed",
  hung: "stopped responding"
}

export interface PageLink {
  /** Runs `f` with a session attached to the page `targetId` on the kept connection. */
  readonly run: <A, E>(
    targetId: string,
    f: (cdp: Cdp.CdpConnection, sessionId: string) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | CdpClosed>
  /** A page's URL and title as the browser last announced them (target events: no round trip). */
  readonly location: (targetId: string) => Option.Option<{ readonly url: string; readonly title: string }>
  /** Opens a new page target and returns its id. */
  readonly openPage: Effect.Effect<string, CdpClosed>
  /** Closes a page target (a crashed one, replaced). */
  readonly closePage: (targetId: string) => Effect.Effect<void, CdpClosed>
  /** Whether the browser answers on the kept socket (one round trip, bounded); false when the socket is closed. */
  readonly alive: Effect.Effect<boolean>
  /** Attaches to the session's page now and after every reconnect, so its dialogs are seen without a read. */
  readonly follow: (targetId: string) => Effect.Effect<void>
  /** Whether `targetId` was closed or crashed since the link saw it. */
  readonly fate: (targetId: string) => Fate | undefined
  /** Completes when `targetId` is closed or crashes (at once if it already has). */
  readonly lost: (targetId: string) => Effect.Effect<Fate>
  /** Whether the page's main thread answers a trivial evaluation within `timeoutMs`. */
  readonly responsive: (targetId: string, timeoutMs: number) => Effect.Effect<boolean>
}

export interface PageLinkOptions {
  /** Asked when a dialog opens: false leaves it for a person to answer. */
  readonly answerDialogs: Effect.Effect<boolean>
}

interface Dialog {
  readonly sessionId: string
  readonly type: string
  readonly message: string
}

interface Open {
  readonly cdp: Cdp.CdpConnection
  readonly scope: Scope.Closeable
  /** targetId → attached sessionId */
  readonly sessions: Map<string, string>
}

export const make = Effect.fnUntraced(function* (wsEndpoint: string, options: PageLinkOptions) {
  const opening = yield* Semaphore.make(1)
  const dialogs = yield* Queue.unbounded<Dialog>()
  const fates = new Map<string, Fate>()
  const locations = new Map<string, { readonly url: string; readonly title: string }>()
  const watchers = new Map<string, Deferred.Deferred<Fate>>()
  const settle = (targetId: string, fate: Fate) => {
    fates.set(targetId, fate)
    const watcher = watchers.get(targetId)
    watchers.delete(targetId)
    if (watcher !== undefined) Deferred.doneUnsafe(watcher, Effect.succeed(fate))
  }
  let current: Open | undefined
  let followed: string | undefined
  const linkScope = yield* Effect.scope

  const listen = (open: Open) => (event: Cdp.CdpEvent) => {
    const params = event.params
    switch (event.method) {
      case "Target.targetCreated":
      case "Target.targetInfoChanged": {
        const info = params.targetInfo as { targetId: string; type: string; url: string; title: string }
        if (info.type === "page") locations.set(info.targetId, { url: info.url, title: info.title })
        break
      }
      case "Target.targetDestroyed":
        locations.delete(String(params.targetId))
        settle(String(params.targetId), "closed")
        open.sessions.delete(String(params.targetId))
        break
      case "Target.targetCrashed":
        settle(String(params.targetId), "crashed")
        break
      case "Target.detachedFromTarget":
        for (const [targetId, sessionId] of open.sessions) {
          if (sessionId === params.sessionId) open.sessions.delete(targetId)
        }
        break
      case "Page.javascriptDialogOpening":
        if (event.sessionId !== undefined) {
          Queue.offerUnsafe(dialogs, {
            sessionId: event.sessionId,
            type: String(params.type),
            message: String(params.message ?? "")
          })
        }
        break
    }
  }

  const attach = (open: Open, targetId: string) =>
    Effect.gen(function* () {
      const known = open.sessions.get(targetId)
      if (known !== undefined) return known
      const { sessionId } = yield* open.cdp
        .send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true })
        .pipe(
          Effect.timeoutOrElse({
            duration: 5_000,
            orElse: () => Effect.fail(new CdpClosed({ message: `attaching to page ${targetId} took over 5 s` }))
          })
        )
      // Page events carry the dialogs. Not awaited: a page whose main thread hangs would never answer, and the
      // session's later commands queue behind it in the page anyway.
      yield* Effect.forkIn(open.cdp.send("Page.enable", {}, sessionId).pipe(Effect.ignore), linkScope)
      open.sessions.set(targetId, sessionId)
      return sessionId
    })

  const ensure = opening.withPermits(1)(
    Effect.gen(function* () {
      if (current?.cdp.isOpen()) return current
      if (current !== undefined) yield* Scope.close(current.scope, Exit.void)
      current = undefined
      const scope = yield* Scope.make()
      const cdp = yield* Cdp.connect(wsEndpoint).pipe(
        Scope.provide(scope),
        Effect.onError(() => Scope.close(scope, Exit.void))
      )
      const open: Open = { cdp, scope, sessions: new Map() }
      cdp.onEvent(listen(open))
      yield* cdp.send("Target.setDiscoverTargets", { discover: true })
      current = open
      if (followed !== undefined) yield* attach(open, followed).pipe(Effect.ignore)
      return open
    })
  )

  // Dialogs are answered off the socket's callback, one at a time: dismissed, except that leaving a page is allowed.
  yield* Effect.forkScoped(
    Effect.forever(
      Effect.gen(function* () {
        const dialog = yield* Queue.take(dialogs)
        if (!(yield* options.answerDialogs)) {
          yield* Effect.logInfo("a page dialog is left for the person in control", { type: dialog.type })
          return
        }
        const accept = dialog.type === "beforeunload"
        yield* Effect.logWarning(
          `the page opened a ${dialog.type} dialog; it was ${accept ? "accepted" : "dismissed"}`,
          {
            message: dialog.message.slice(0, 200)
          }
        )
        const open = current
        if (open === undefined) return
        yield* open.cdp.send("Page.handleJavaScriptDialog", { accept }, dialog.sessionId).pipe(Effect.ignore)
      })
    )
  )
  yield* Effect.addFinalizer(() => (current === undefined ? Effect.void : Scope.close(current.scope, Exit.void)))
  // The first connection is made now so target events are seen from the start; a failure here is retried on use.
  yield* ensure.pipe(Effect.ignore)

  const run = <A, E>(targetId: string, f: (cdp: Cdp.CdpConnection, sessionId: string) => Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      const open = yield* ensure
      return yield* f(open.cdp, yield* attach(open, targetId))
    })

  return {
    run,
    location: (targetId) => Option.fromNullishOr(locations.get(targetId)),
    openPage: Effect.gen(function* () {
      const open = yield* ensure
      const { targetId } = yield* open.cdp.send<{ targetId: string }>("Target.createTarget", { url: "about:blank" })
      return targetId
    }),
    closePage: (targetId) =>
      ensure.pipe(
        Effect.flatMap((open) => open.cdp.send("Target.closeTarget", { targetId })),
        Effect.asVoid
      ),
    // The socket can still look open for a moment after the browser is killed: only an answer proves it alive.
    alive: Effect.suspend(() => {
      const open = current
      if (!open?.cdp.isOpen()) return Effect.succeed(false)
      return open.cdp.send("Browser.getVersion").pipe(
        Effect.timeoutOption(2_000),
        Effect.map(Option.isSome),
        Effect.orElseSucceed(() => false)
      )
    }),
    follow: (targetId) =>
      Effect.suspend(() => {
        followed = targetId
        return run(targetId, () => Effect.void).pipe(Effect.ignore)
      }),
    fate: (targetId) => fates.get(targetId),
    lost: (targetId) =>
      Effect.suspend(() => {
        const seen = fates.get(targetId)
        if (seen !== undefined) return Effect.succeed(seen)
        let watcher = watchers.get(targetId)
        if (watcher === undefined) {
          watcher = Deferred.makeUnsafe<Fate>()
          watchers.set(targetId, watcher)
        }
        return Deferred.await(watcher)
      }),
    responsive: (targetId, timeoutMs) =>
      run(targetId, (cdp, sessionId) => Cdp.evaluateOn(cdp, sessionId, "1")).pipe(
        Effect.timeoutOption(timeoutMs),
        Effect.map(Option.isSome),
        // A closed socket or page says nothing about the main thread: the other checks handle those.
        Effect.orElseSucceed(() => true)
      )
  } satisfies PageLink
})
