/**
 * The Sandbox's own line to the browser: one CDP connection kept for its life, with the session's pages attached for
 * reads, target events (PageLink/Targets.ts), dialogs (PageLink/Dialogs.ts), file choosers (PageLink/FileChooser.ts),
 * downloads (PageLink/Downloads.ts) and loads (PageLink/Loads.ts); reopened on a schedule when it drops.
 * Over 400 lines because its contract documents some thirty operations that all share the one kept connection.
 */
import { Effect, Exit, Option, PubSub, Ref, Schedule, Scope, SynchronizedRef } from "effect"
import * as CdpConnection from "../Cdp/Connection.ts"
import type * as Protocol from "../Cdp/Protocol.ts"
import * as Session from "../Cdp/Session.ts"
import { CdpClosed } from "../Errors/Engine.ts"
import * as PageEvent from "./PageEvent.ts"
import * as Console from "./PageLink/Console.ts"
import * as Dialogs from "./PageLink/Dialogs.ts"
import * as Downloads from "./PageLink/Downloads.ts"
import * as FileChooser from "./PageLink/FileChooser.ts"
import * as Loads from "./PageLink/Loads.ts"
import * as Network from "./PageLink/Network.ts"
import * as Targets from "./PageLink/Targets.ts"

export type { MainFrame } from "./PageLink/Loads.ts"

/** A page target of the browser, as `Target.getTargets` lists it. */
export interface PageTarget {
  readonly targetId: string
  readonly url: string
  readonly title: string
  /** The page that opened it (a `target=_blank` link, `window.open`). */
  readonly openerId?: string
  readonly browserContextId?: string
}

export interface PageLink {
  /** Runs `f` on the browser target over the kept connection (cookies, downloads, windows). */
  readonly onBrowser: <A, E>(
    f: (cdp: CdpConnection.Connection) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | CdpClosed>
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
  /**
   * Whether the browser answers on the kept socket (one round trip, bounded: its page list, read afresh for `pages`,
   * so a page it no longer lists is known closed); false when the socket is closed.
   */
  readonly alive: Effect.Effect<boolean>
  /** Attaches to the session's page now and after every reconnect, so its dialogs are seen without a read. */
  readonly follow: (targetId: string) => Effect.Effect<void>
  /** Whether `targetId` was closed or crashed since the link saw it. */
  readonly fate: (targetId: string) => Effect.Effect<Option.Option<Targets.Fate>>
  /** Counts the target events seen (a page opened, closed, crashed, or its URL or title changed). */
  readonly targetEvents: Effect.Effect<number>
  /** Completes when `targetId` is closed or crashes (at once if it already has). */
  readonly lost: (targetId: string) => Effect.Effect<Targets.Fate>
  /** Whether the page's main thread answers a trivial evaluation within `timeoutMs`. */
  readonly responsive: (targetId: string, timeoutMs: number) => Effect.Effect<boolean>
  /**
   * The browser's page targets now, as it lists them (one round trip; none while no page opened, closed or crashed
   * since the last: their URLs and titles are then those of that read, `location` has the announced ones).
   */
  readonly pages: Effect.Effect<ReadonlyArray<PageTarget>, CdpClosed>
  /** Attaches to a page so its dialogs and file choosers are seen (a tab in the background). */
  readonly watch: (targetId: string) => Effect.Effect<void>
  /** Brings a page to the front. */
  readonly activate: (targetId: string) => Effect.Effect<void>
  /** The dialog open on `targetId` and held for the agent, if any. */
  readonly dialog: (targetId: string) => Effect.Effect<Option.Option<Dialogs.OpenDialog>>
  /** Completes when a dialog held for the agent is open on `targetId`. */
  readonly dialogOpened: (targetId: string) => Effect.Effect<Dialogs.OpenDialog>
  /** Answers the dialog open on `targetId`. */
  readonly answerDialog: (targetId: string, accept: boolean, promptText?: string) => Effect.Effect<void, CdpClosed>
  /** Every download of the session so far, and a mark to tell later ones apart. */
  readonly downloads: Effect.Effect<ReadonlyArray<Downloads.Download>>
  readonly downloadMark: Effect.Effect<number>
  readonly downloadsSince: (mark: number) => Effect.Effect<ReadonlyArray<Downloads.Download>>
  /** Has downloads saved into the session's folder again (an engine client that connected may have changed it). */
  readonly claimDownloads: Effect.Effect<void>
  /**
   * Runs `self` with file choosers on `targetId` answered with `files` (absolute paths): a click that opens one gets
   * them. Answers how many choosers were answered.
   */
  readonly chooseFiles: <A, E>(
    targetId: string,
    files: ReadonlyArray<string>,
    self: Effect.Effect<A, E>
  ) => Effect.Effect<readonly [A, number], E | CdpClosed>
  /** What happened on the pages since the last call of it (dialogs answered by policy, downloads, files chosen). */
  readonly notices: Effect.Effect<ReadonlyArray<PageEvent.PageEvent>>
  /** The pages' console messages and uncaught errors, kept in a ring, redacted when read. */
  readonly console: (query: Console.Query) => Effect.Effect<Console.Answer>
  /** The pages' requests, kept in a ring, redacted when read. */
  readonly network: (query: Network.Query) => Effect.Effect<Network.Answer>
  /** One request with its headers and the start of its bodies (the response's read from the browser if it still
   * holds it), redacted; undefined when the ring no longer holds it. */
  readonly request: (seq: number) => Effect.Effect<Network.Details | undefined>
  /**
   * The main-frame documents `targetId` committed so far, and the URL the latest could not load when it is the
   * browser's error page (a refused tunnel, a TLS failure): no round trip.
   */
  readonly mainFrame: (targetId: string) => Effect.Effect<Loads.MainFrame>
  /** The browser's error code on `targetId`'s error page (`ERR_CERT_AUTHORITY_INVALID`), when it shows one. */
  readonly errorCode: (targetId: string) => Effect.Effect<Option.Option<string>>
  /** How many loads the pages' frames have started, and how many committed a new document: marks for `loaded`. */
  readonly loadMark: Effect.Effect<readonly [started: number, committed: number]>
  /**
   * Waits, at most `maxMs`, while a frame of `targetId` is loading, when a load started since `mark`: a click on a
   * link whose response is a download only tells it is one when the response comes.
   */
  readonly loaded: (
    targetId: string,
    mark: readonly [started: number, committed: number],
    maxMs: number
  ) => Effect.Effect<"none" | "committed" | "no_document">
}

export interface PageLinkOptions {
  /** Read when a dialog opens: who answers it; `none` leaves it for the person in control of the browser. */
  readonly dialogs: Effect.Effect<Option.Option<Dialogs.DialogPolicy>>
  /** Where downloads go and how large they may grow; absent, the browser's own behaviour stays. */
  readonly downloads?: Downloads.DownloadOptions
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

/** Console messages and requests kept per session (each ring); the oldest go first. */
const ringSize = 500

/** Bound on reading a response body from the browser. */
const bodyTimeoutMs = 2_000
const maxResponseBody = 16_384

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
  const dialogs = yield* Dialogs.make(options.dialogs)
  const downloads = options.downloads === undefined ? undefined : yield* Downloads.make(options.downloads)
  const notes = yield* Ref.make<ReadonlyArray<PageEvent.PageEvent>>([])
  const consoleRing = yield* Console.make(ringSize)
  const network = yield* Network.make(ringSize)
  const loads = yield* Loads.make
  const note = (event: PageEvent.PageEvent) => Ref.update(notes, (all) => [...all, event])
  const chooser = yield* FileChooser.make(note)

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
      // Page events carry the dialogs; Inspector's say at once that the renderer crashed (the browser-wide
      // Target.targetCrashed can come seconds later). Not awaited: a page whose main thread hangs would never answer,
      // and the session's later commands queue behind it in the page anyway.
      yield* Effect.forkIn(open.cdp.send("Page.enable", {}, sessionId).pipe(Effect.ignore), linkScope)
      // The console, uncaught errors, the browser's own messages and the requests, for the session's rings.
      yield* Effect.forkIn(
        Effect.all(
          [
            open.cdp.send("Runtime.enable", {}, sessionId),
            open.cdp.send("Log.enable", {}, sessionId),
            open.cdp.send(
              "Network.enable",
              { maxTotalBufferSize: 16 * 1024 * 1024, maxResourceBufferSize: 2 * 1024 * 1024 },
              sessionId
            )
          ],
          { concurrency: "unbounded", discard: true }
        ).pipe(Effect.ignore),
        linkScope
      )
      yield* Effect.forkIn(open.cdp.send("Inspector.enable", {}, sessionId).pipe(Effect.ignore), linkScope)
      yield* Ref.update(open.sessions, (m) => new Map(m).set(targetId, sessionId))
      return sessionId
    })

  /** The page target a flat session on this connection belongs to. */
  const targetOf = (open: Open, sessionId: string | undefined) =>
    Ref.get(open.sessions).pipe(
      Effect.map((m) => (sessionId === undefined ? undefined : [...m].find(([, s]) => s === sessionId)?.[0]))
    )

  /** Dialogs, file choosers and downloads, as the pages and the browser announce them on one connection. */
  const pageEvents = (open: Open, events: PubSub.Subscription<Protocol.Event>): Effect.Effect<never> =>
    PubSub.take(events).pipe(
      Effect.flatMap((event) =>
        Effect.gen(function* () {
          const targetId = yield* targetOf(open, event.sessionId)
          if (event.method === "Target.targetDestroyed") yield* dialogs.closed(event.params.targetId)
          const answered = yield* dialogs.observe(event, targetId, (accept) =>
            open.cdp.send("Page.handleJavaScriptDialog", { accept }, event.sessionId).pipe(Effect.ignore)
          )
          if (Option.isSome(answered)) {
            yield* note(PageEvent.dialogAnswered(answered.value.dialog, answered.value.accepted, "policy"))
          }
          if (event.method === "Page.fileChooserOpened") yield* chooser.opened(open.cdp, event)
          yield* consoleRing.observe(event, targetId)
          yield* network.observe(event, targetId)
          yield* loads.observe(event, targetId)
          if (downloads !== undefined && event.sessionId === undefined) {
            const done = yield* downloads.observe(open.cdp, event)
            if (Option.isSome(done)) yield* note(PageEvent.downloaded(done.value))
          }
        })
      ),
      Effect.forever
    )

  /** A new connection: its events feed the target bookkeeping and the dialog answerer from the first one on. */
  const connect = Effect.gen(function* () {
    const scope = yield* Scope.make()
    return yield* Effect.gen(function* () {
      const cdp = yield* CdpConnection.connect(wsEndpoint)
      const open: Open = { cdp, scope, sessions: yield* Ref.make<ReadonlyMap<string, string>>(new Map()) }
      const events = yield* cdp.events
      yield* PubSub.take(events).pipe(
        Effect.flatMap((event) =>
          // A session's own events name no target: the page they come from is looked up.
          targetOf(open, event.sessionId).pipe(
            Effect.flatMap((targetId) => targets.observe(event, targetId)),
            Effect.andThen(forgetSessions(open, event))
          )
        ),
        Effect.forever,
        Effect.forkScoped
      )
      yield* pageEvents(open, yield* cdp.events).pipe(Effect.forkScoped)
      if (downloads !== undefined) yield* downloads.claim(cdp)
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

  /** The last page list read, on which connection and at which count of target events. */
  const listed = yield* Ref.make<
    { readonly open: Open; readonly members: number; readonly pages: ReadonlyArray<PageTarget> } | undefined
  >(undefined)

  /**
   * The page targets as the browser lists them now (one round trip), kept for `pages`. A page seen before that the
   * list no longer holds is closing: it is known closed now, not when its events come.
   */
  const readPages = (open: Open) =>
    Effect.gen(function* () {
      const known = yield* targets.known
      const members = yield* targets.members
      const { targetInfos } = yield* open.cdp.send("Target.getTargets", {}).pipe(
        Effect.timeoutOrElse({
          duration: answerTimeoutMs,
          orElse: () => Effect.fail(new CdpClosed({ message: "the browser did not answer Target.getTargets" }))
        })
      )
      yield* targets.listed(known, new Set(targetInfos.map((t) => t.targetId)))
      const read = targetInfos
        .filter((t) => t.type === "page")
        .map(
          (t): PageTarget => ({
            targetId: t.targetId,
            url: t.url,
            title: t.title,
            ...(t.openerId === undefined ? {} : { openerId: t.openerId }),
            ...(t.browserContextId === undefined ? {} : { browserContextId: t.browserContextId })
          })
        )
      yield* Ref.set(listed, { open, members, pages: read })
      return read
    })

  /**
   * The page targets: the list read before while no page opened, closed or crashed on the same connection since that
   * read was sent, else read again. A URL or title change needs no read: the announced ones (`location`) are newer.
   */
  const pages = Effect.gen(function* () {
    const open = yield* ensure
    // Events that came on the socket are taken in by their own fiber: it runs first, so none is left uncounted.
    yield* Effect.yieldNow
    const kept = yield* Ref.get(listed)
    if (kept !== undefined && kept.open === open && kept.members === (yield* targets.members)) return kept.pages
    return yield* readPages(open)
  })

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
    onBrowser: (f) => ensure.pipe(Effect.flatMap((open) => f(open.cdp))),
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
      // The list read before no longer holds, whether or not the new page's event was taken in yet.
      Effect.tap(() => Ref.set(listed, undefined)),
      Effect.flatMap((open) => open.cdp.send("Target.createTarget", { url: "about:blank" })),
      Effect.tap(() => Ref.set(listed, undefined)),
      Effect.map((created) => created.targetId)
    ),
    closePage: (targetId) =>
      ensure.pipe(
        Effect.flatMap((open) => open.cdp.send("Target.closeTarget", { targetId })),
        Effect.tap(() => Ref.set(listed, undefined)),
        Effect.asVoid
      ),
    // The socket can still look open for a moment after the browser is killed: only an answer proves it alive. The
    // answer is the page list, read afresh: a call starts on what the browser lists, not on events still to come.
    alive: Effect.gen(function* () {
      const open = yield* SynchronizedRef.get(current)
      if (typeof open !== "object" || !(yield* open.cdp.isOpen)) return false
      return yield* readPages(open).pipe(
        Effect.timeoutOption(2_000),
        Effect.map(Option.isSome),
        Effect.orElseSucceed(() => false)
      )
    }),
    follow: (targetId) =>
      Ref.set(followed, targetId).pipe(Effect.andThen(run(targetId, () => Effect.void)), Effect.ignore),
    fate: targets.fate,
    targetEvents: targets.generation,
    lost: targets.lost,
    responsive: (targetId, timeoutMs) =>
      run(targetId, (cdp, sessionId) => Session.evaluateOn(cdp, sessionId, "1")).pipe(
        Effect.timeoutOption(timeoutMs),
        Effect.map(Option.isSome),
        // A closed socket or page says nothing about the main thread: the other checks handle those.
        Effect.orElseSucceed(() => true)
      ),
    pages,
    watch: (targetId) => run(targetId, () => Effect.void).pipe(Effect.ignore),
    activate: (targetId) =>
      ensure.pipe(
        Effect.flatMap((open) => open.cdp.send("Target.activateTarget", { targetId })),
        Effect.timeoutOption(answerTimeoutMs),
        Effect.ignore
      ),
    dialog: dialogs.open,
    dialogOpened: dialogs.opened,
    answerDialog: (targetId, accept, promptText) =>
      run(targetId, (cdp, sessionId) =>
        cdp.send(
          "Page.handleJavaScriptDialog",
          { accept, ...(promptText === undefined ? {} : { promptText }) },
          sessionId
        )
      ).pipe(Effect.andThen(dialogs.closed(targetId))),
    downloads: downloads === undefined ? Effect.succeed([]) : downloads.list,
    downloadMark: downloads === undefined ? Effect.succeed(0) : downloads.count,
    downloadsSince: (mark) => (downloads === undefined ? Effect.succeed([]) : downloads.since(mark)),
    claimDownloads:
      downloads === undefined
        ? Effect.void
        : ensure.pipe(
            Effect.flatMap((open) => downloads.claim(open.cdp)),
            Effect.ignore
          ),
    chooseFiles: (targetId, files, self) =>
      chooser.choose(
        (enabled) =>
          run(targetId, (cdp, sessionId) => cdp.send("Page.setInterceptFileChooserDialog", { enabled }, sessionId)),
        files,
        self
      ),
    notices: Ref.getAndSet(notes, []),
    console: consoleRing.read,
    network: network.read,
    request: (seq) =>
      Effect.gen(function* () {
        const kept = yield* network.find(seq)
        if (kept === undefined) return undefined
        const { requestId, sessionId, started: _started, ...details } = kept
        // The browser holds a response's body a while after it came: read it on the tab's session, when it can.
        const body =
          sessionId === undefined || details.status === undefined
            ? undefined
            : yield* ensure.pipe(
                Effect.flatMap((open) => open.cdp.send("Network.getResponseBody", { requestId }, sessionId)),
                Effect.timeoutOption(bodyTimeoutMs),
                Effect.map((read) =>
                  read._tag === "None"
                    ? undefined
                    : read.value.base64Encoded
                      ? `(binary, ${Buffer.byteLength(read.value.body, "base64")} bytes)`
                      : read.value.body.length > maxResponseBody
                        ? `${read.value.body.slice(0, maxResponseBody)}… (${read.value.body.length} characters in all)`
                        : read.value.body
                ),
                Effect.orElseSucceed(() => undefined)
              )
        return Network.redactDetails({ ...details, ...(body === undefined ? {} : { responseBody: body }) })
      }),
    mainFrame: loads.mainFrame,
    errorCode: (targetId) =>
      run(targetId, (cdp, sessionId) =>
        Session.evaluateOn<string | null>(
          cdp,
          sessionId,
          `(() => { const text = document.querySelector(".error-code")?.textContent?.trim(); return text || (typeof loadTimeData === "object" && loadTimeData?.data_?.errorCode) || null })()`
        )
      ).pipe(
        Effect.timeoutOption(currentTimeoutMs),
        Effect.map((code) =>
          Option.flatMap(code, (c) => Option.fromNullishOr(c?.replace(/^net::/i, "").toUpperCase()))
        ),
        Effect.orElseSucceed(() => Option.none<string>())
      ),
    loadMark: loads.mark,
    loaded: loads.loaded
  } satisfies PageLink
})
