/**
 * Browser sessions behind the surfaces: a default session for one agent and named sessions for workers, each with
 * its own browser, Sandbox and Router. Calls on one session run one at a time in arrival order (a FIFO lane per
 * name, entered synchronously when the call starts, so every surface gets the order its requests came in); calls on
 * different sessions run in parallel. A cap on sessions (browsers) with a bounded queue in front of it, a bound on
 * calls waiting on one session, and `busy` past either; on shutdown, calls still running answer `shutting_down`.
 * `browser.status` and `browser.close` never open a session: a session not open is idle, and closing one frees its slot.
 * Under pressure, idle sessions hibernate: when a new session needs a browser and the cap is reached, the least recently
 * used session with no call waiting has its page (URL, cookies, storage) saved and its browser closed, and its next
 * call restores it; `busy` is left for when every session is working. An MCP client that went away frees its sessions
 * the same way. The per-name lanes are in Sessions/Lanes.ts, answers no session gave in Sessions/Answers.ts; opening,
 * hibernating and the slot queue share one set of sessions, which keeps them (past 400 lines) in this one file.
 *
 * Why not `LayerMap.make((name) => SessionStack.layer(…), { idleTimeToLive })`: in Effect 4.1 its RcMap keeps a
 * failed build as the key's entry (only an interrupted build is dropped), so a session refused with `busy` or unable
 * to start would give that failure again once a slot is free, the default session (never idle-expired) for good; it
 * has no cap with a queue (RcMap's `capacity` fails at once, and LayerMap does not expose it); `invalidate` on a
 * session in use waits for its calls to end, where `browserClose` must close the browser now and stop the call
 * holding it (`session_closed`); and `contextEffectOption`, the only read of a live session that builds none,
 * retains it and restarts its idle clock, so a status poll would keep a session open.
 */
import { Clock, Context, Deferred, Effect, Exit, Layer, Option, Schedule, Scope, Semaphore } from "effect"
import type { CallMeta, ToolAnswer } from "../Cascade/Router.ts"
import { Router } from "../Cascade/Router.ts"
import * as Tools from "../Cascade/Tools.ts"
import { Busy, SessionClosed, ShuttingDown } from "../Errors/Service.ts"
import type { SwitchyardError } from "../Errors.ts"
import { idleStatus, type PageView, Sandbox, type SandboxStatus } from "../Sandbox/Sandbox.ts"
import { type SavedPage, summary } from "../Sandbox/SavedPage.ts"
import { defaultSession, invalidName, isSessionName } from "./SessionName.ts"
import { refuse, sessionless } from "./Sessions/Answers.ts"
import * as Lanes from "./Sessions/Lanes.ts"

export { defaultSession, sessionNameOf } from "./SessionName.ts"
export { refuse, sessionless } from "./Sessions/Answers.ts"

export interface SessionsOptions {
  /** Sessions (each with a browser) at once. */
  readonly maxBrowsers: number
  /** Calls that may wait for a session slot before `busy`. */
  readonly queue: number
  /** Calls that may wait on one session before `busy`. */
  readonly maxPendingPerSession: number
  /** How long a call waits for a session slot. */
  readonly slotTimeoutMs: number
  /** Named sessions unused this long are closed, freeing their slot; `null` keeps them. */
  readonly idleTimeoutMs: number | null
  /** One session's stack (`SessionStack.layer`): its Router and Sandbox, over its engines and browser. */
  readonly session: (name: string) => Layer.Layer<Router | Sandbox, SwitchyardError>
}

interface Live {
  readonly name: string
  readonly scope: Scope.Closeable
  readonly router: Router["Service"]
  readonly sandbox: Sandbox["Service"]
  /** Completed when the session closes: calls still running on it answer `session_closed` rather than never. */
  readonly closed: Deferred.Deferred<void>
  lastUsed: number
}

export interface SessionStatus extends SandboxStatus {
  readonly session: string
  /** Its browser was closed to free a slot; its page comes back on its next call. */
  readonly hibernated?: true
}

/** A hibernated session: its page, and when it was last used (hibernated pages past the idle timeout are dropped). */
interface Hibernated {
  readonly page: SavedPage
  readonly lastUsed: number
}

/** Hibernated pages kept at most; past it the oldest is dropped (its session then starts afresh). */
const maxHibernated = 1_000

export class Sessions extends Context.Service<
  Sessions,
  {
    /** Runs a tool on a session (`undefined` is the default session; a name that is not a string is invalid). */
    readonly call: (session: unknown, tool: string, args: unknown, meta?: CallMeta) => Effect.Effect<ToolAnswer>
    readonly status: (session?: string) => Effect.Effect<SessionStatus>
    /** Closes the session now, freeing its slot; a session not open is left alone (nothing opens). */
    readonly close: (session?: string) => Effect.Effect<void>
    /** Saves the session's page and closes its browser; its next call restores the page. Nothing when not open. */
    readonly hibernate: (session?: string) => Effect.Effect<void>
    /**
     * Opens the session (if need be) on a page saved elsewhere (another process that held it is gone), its cookies
     * and storage in place before its first request. A session hibernated here comes back from its own, fresher page.
     */
    readonly restore: (session: string | undefined, page: SavedPage) => Effect.Effect<void, SwitchyardError>
    /** Whether the session has a browser stack open (or opening) now, or is hibernated with its page kept. */
    readonly isOpen: (session?: string) => boolean
    /** The tabs, dialog and downloads of a session open in this process, read without a call (nothing drained). */
    readonly page: (session?: string) => Effect.Effect<Option.Option<PageView>>
    readonly list: Effect.Effect<ReadonlyArray<SessionStatus>>
    /** Browsers the sessions hold or are opening now: a hibernated session holds none. */
    readonly browsers: Effect.Effect<number>
    /** Stops taking calls; calls in flight answer `shutting_down`. */
    readonly shutdown: Effect.Effect<void>
  }
>()("switchyard/Sessions") {
  static readonly layer = (options: SessionsOptions) => Layer.effect(Sessions, make(options))
}

export const make = Effect.fnUntraced(function* (options: SessionsOptions) {
  const slots = yield* Semaphore.make(options.maxBrowsers)
  /** Sessions being opened: a second call for the same name waits for the first to finish opening it. */
  const opening = new Map<string, Deferred.Deferred<Live, SwitchyardError>>()
  const stopping = yield* Deferred.make<void>()
  const sessions = new Map<string, Live>()
  const lanes = Lanes.make(() => signal())
  const { enter, leave } = lanes
  const pendingOn = lanes.pending
  const serviceScope = yield* Effect.scope
  let waiting = 0
  /** Pages of hibernated sessions, oldest first. */
  const hibernated = new Map<string, Hibernated>()
  /** Sessions being hibernated: a call for one waits until its page is saved. */
  const hibernating = new Map<string, Deferred.Deferred<void>>()
  /** Completed (and replaced) whenever a slot is given back or a session's last call ends: a call waiting looks again. */
  let changed = Deferred.makeUnsafe<void>()
  const signal = () => {
    const was = changed
    changed = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(was, Effect.void)
  }
  /** Gives a slot back and wakes the calls waiting for one. */
  const release = slots.release(1).pipe(Effect.andThen(Effect.sync(signal)))

  const sessionFor = (name: string): Effect.Effect<Live, SwitchyardError> =>
    Effect.suspend(() => {
      // Claimed synchronously, so two first calls for one name open one session.
      const live = sessions.get(name)
      if (live) return Effect.succeed(live)
      const pending = opening.get(name)
      if (pending) return Deferred.await(pending)
      const claim = Deferred.makeUnsafe<Live, SwitchyardError>()
      opening.set(name, claim)
      // Opened on a fiber of its own, so a caller cancelled meanwhile does not leave the claim unsettled.
      return open(name).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => opening.delete(name)).pipe(Effect.andThen(Deferred.done(claim, exit)))
        ),
        Effect.forkIn(serviceScope),
        Effect.andThen(Deferred.await(claim))
      )
    })

  /**
   * Picks the least recently used session with no call waiting or running (and no person at its browser), saves its
   * page and closes its browser; its slot passes to the caller. Whether one was found.
   */
  const hibernateIdle = Effect.gen(function* () {
    const idle = [...sessions.values()]
      .filter((live) => pendingOn(live.name) === 0)
      .sort((a, b) => a.lastUsed - b.lastUsed)
    for (const live of idle) {
      if (yield* live.router.occupied) continue
      // Checked again after the yield above: a call may have come meanwhile.
      if (sessions.get(live.name) !== live || pendingOn(live.name) > 0) continue
      yield* hibernateLive(live, false)
      return true
    }
    return false
  })

  /** Saves the page of `live` (taken out of the open sessions at once) and closes its browser. */
  const hibernateLive = (live: Live, releaseSlot: boolean) =>
    Effect.suspend(() => {
      const done = Deferred.makeUnsafe<void>()
      sessions.delete(live.name)
      hibernating.set(live.name, done)
      return Effect.gen(function* () {
        const page = yield* live.sandbox.saved.pipe(
          Effect.timeoutOption(5_000),
          Effect.map(Option.flatten),
          Effect.orElseSucceed(() => Option.none<SavedPage>())
        )
        if (Option.isSome(page)) {
          hibernated.delete(live.name)
          hibernated.set(live.name, { page: page.value, lastUsed: live.lastUsed })
          for (const name of hibernated.keys()) {
            if (hibernated.size <= maxHibernated) break
            hibernated.delete(name)
          }
          yield* Effect.logInfo(`session ${live.name} hibernated: ${summary(page.value)}`)
        }
        Deferred.doneUnsafe(live.closed, Effect.void)
        yield* Scope.close(live.scope, Exit.void)
        if (releaseSlot) yield* release
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            hibernating.delete(live.name)
            Deferred.doneUnsafe(done, Effect.void)
          })
        ),
        Effect.uninterruptible
      )
    })

  /** A slot for a new session: a free one, an idle session's (hibernated), or the next freed, while the queue has room. */
  const slot = Effect.gen(function* () {
    if (yield* slots.takeIfAvailable(1)) return
    if (yield* hibernateIdle) return
    if (waiting >= options.queue) {
      return yield* new Busy({
        message: `${sessions.size} sessions are open (the limit is ${options.maxBrowsers}), each working, and ${waiting} calls already wait for one; retry later or close a session`
      })
    }
    waiting++
    // Looks again whenever a slot is given back or a session's last call ends (it hibernates then). Never a take
    // raced against the signal: a take that won a lost race would keep its permit for good.
    const freed: Effect.Effect<void> = Effect.suspend(() => {
      const next = changed
      return slots.takeIfAvailable(1).pipe(
        Effect.flatMap((taken) => (taken ? Effect.succeed(true) : hibernateIdle)),
        Effect.flatMap((ok) => (ok ? Effect.void : Deferred.await(next).pipe(Effect.andThen(freed))))
      )
    })
    const got = yield* freed.pipe(
      Effect.timeoutOption(options.slotTimeoutMs),
      Effect.ensuring(Effect.sync(() => void waiting--))
    )
    if (Option.isNone(got)) {
      return yield* new Busy({
        message: `no session slot freed within ${options.slotTimeoutMs} ms (${options.maxBrowsers} sessions are open, each working)`
      })
    }
  })

  const open = (name: string) =>
    Effect.gen(function* () {
      // A session being hibernated is saved first, so that its page comes back.
      const saving = hibernating.get(name)
      if (saving !== undefined) yield* Deferred.await(saving)
      yield* slot
      const scope = yield* Scope.make()
      // A session that cannot start (no VNC tools, say) gives its slot back and answers why.
      const context = yield* Layer.buildWithScope(options.session(name), scope).pipe(
        Effect.onError(() => Scope.close(scope, Exit.void).pipe(Effect.andThen(release)))
      )
      const live: Live = {
        name,
        scope,
        router: Context.get(context, Router),
        sandbox: Context.get(context, Sandbox),
        closed: Deferred.makeUnsafe<void>(),
        lastUsed: yield* Clock.currentTimeMillis
      }
      sessions.set(name, live)
      // A hibernated session's page comes back before its call runs; the answer reports it (`restored`).
      const back = hibernated.get(name)
      if (back !== undefined) {
        hibernated.delete(name)
        yield* live.sandbox
          .restore(back.page, "hibernation")
          .pipe(Effect.catch((error) => Effect.logWarning(`session ${name} could not be restored: ${error.message}`)))
      }
      return live
    })

  const closeSession = (name: string) =>
    Effect.gen(function* () {
      const live = sessions.get(name)
      if (!live) return
      sessions.delete(name)
      Deferred.doneUnsafe(live.closed, Effect.void)
      yield* Scope.close(live.scope, Exit.void)
      yield* release
    })

  /** Runs a call whose turn has come: status and close of a session not open answer without opening it. */
  const run = (name: string, tool: string, args: unknown, meta: CallMeta) =>
    Effect.gen(function* () {
      const found = Tools.find(tool)
      const idle = Option.isSome(found) ? found.value.whenNotOpen : undefined
      if (idle !== undefined && !sessions.has(name) && !opening.has(name)) {
        return sessionless({ ok: true, result: idle }, meta)
      }
      const live = yield* sessionFor(name)
      live.lastUsed = yield* Clock.currentTimeMillis
      const answer = yield* live.router.call(tool, args, meta).pipe(
        Effect.raceFirst(
          Deferred.await(live.closed).pipe(
            Effect.as(
              refuse(
                new SessionClosed({
                  action: tool,
                  message: `session "${name}" was closed while this call ran; call again to start afresh`
                }),
                meta
              )
            )
          )
        )
      )
      // Closing the browser ends the session, so its slot is free at once.
      if (answer.ok && Option.exists(found, (t) => t.closesSession)) yield* closeSession(name)
      else live.lastUsed = yield* Clock.currentTimeMillis
      return answer
    })

  const call = Effect.fn("Sessions.call")(
    function* (session: unknown, tool: string, args: unknown, meta: CallMeta = {}) {
      if (Deferred.isDoneUnsafe(stopping))
        return refuse(new ShuttingDown({ message: "the service is shutting down" }), meta)
      if (!isSessionName(session)) return yield* invalidName(session)
      const name = session ?? defaultSession
      const pending = pendingOn(name)
      if (pending >= options.maxPendingPerSession) {
        return yield* new Busy({
          message: `session "${name}" already has ${pending} calls waiting (the limit is ${options.maxPendingPerSession}); calls on one session run one at a time`
        })
      }
      // Calls that must answer while a long call holds the session take no turn: a status read, a close (which stops
      // that call), and a person's takeover and hand-back (the long call may be the one waiting for the person).
      if (Option.exists(Tools.find(tool), (t) => t.outsideLane)) return yield* run(name, tool, args, meta)
      const turn = enter(name)
      const live = sessions.get(name)
      // While a person holds the browser, automation calls are refused at once rather than after the queue.
      const person = live === undefined ? Effect.succeed(false) : live.router.occupied
      const inLane = (turn === undefined ? Effect.void : Deferred.await(turn)).pipe(
        Effect.andThen(run(name, tool, args, meta)),
        Effect.raceFirst(
          Deferred.await(stopping).pipe(
            Effect.as(
              refuse(
                new ShuttingDown({ action: tool, message: "the service is shutting down; the call was stopped" }),
                meta
              )
            )
          )
        ),
        Effect.ensuring(Effect.sync(() => leave(name, turn)))
      )
      return yield* person.pipe(
        Effect.flatMap((occupied) =>
          occupied ? Effect.sync(() => leave(name, turn)).pipe(Effect.andThen(run(name, tool, args, meta))) : inLane
        )
      )
    },
    (self, _session, _tool, _args, meta = {}) =>
      self.pipe(Effect.catch((error: SwitchyardError) => Effect.succeed(refuse(error, meta))))
  )

  const status = Effect.fn("Sessions.status")(function* (session?: string) {
    const name = session ?? defaultSession
    const live = sessions.get(name)
    if (live) return { session: name, ...(yield* live.sandbox.status) }
    return { session: name, ...idleStatus, ...(hibernated.has(name) ? { hibernated: true as const } : {}) }
  })

  // Named sessions left unused give their slot back.
  if (options.idleTimeoutMs !== null) {
    const limit = options.idleTimeoutMs
    yield* Effect.forkScoped(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        for (const live of [...sessions.values()]) {
          if (live.name !== defaultSession && pendingOn(live.name) === 0 && now - live.lastUsed > limit) {
            yield* closeSession(live.name)
          }
        }
        for (const [name, kept] of [...hibernated]) if (now - kept.lastUsed > limit) hibernated.delete(name)
      }).pipe(Effect.repeat(Schedule.spaced(Math.max(1_000, Math.min(60_000, limit / 2)))), Effect.ignore)
    )
  }

  yield* Effect.addFinalizer(() =>
    Deferred.succeed(stopping, undefined).pipe(
      Effect.andThen(Effect.forEach([...sessions.keys()], closeSession, { concurrency: "unbounded", discard: true }))
    )
  )

  /** Closing forgets a hibernated page too: the session starts afresh. */
  const close = Effect.fn("Sessions.close")(function* (session?: string) {
    const name = session ?? defaultSession
    const saving = hibernating.get(name)
    if (saving !== undefined) yield* Deferred.await(saving)
    hibernated.delete(name)
    yield* closeSession(name)
  })

  return Sessions.of({
    call,
    status,
    close,
    hibernate: Effect.fn("Sessions.hibernate")(function* (session?: string) {
      const live = sessions.get(session ?? defaultSession)
      if (live !== undefined) yield* hibernateLive(live, true)
    }),
    restore: Effect.fn("Sessions.restore")(function* (session: string | undefined, page: SavedPage) {
      const name = session ?? defaultSession
      const saving = hibernating.get(name)
      if (saving !== undefined) yield* Deferred.await(saving)
      // Opening a session hibernated here brings back its own page.
      const fresh = !sessions.has(name) && !opening.has(name) && hibernated.has(name)
      const live = yield* sessionFor(name)
      if (!fresh) yield* live.sandbox.restore(page, "failover")
    }),
    isOpen: (session) => {
      const name = session ?? defaultSession
      return sessions.has(name) || opening.has(name) || hibernated.has(name) || hibernating.has(name)
    },
    page: (session) => {
      const live = sessions.get(session ?? defaultSession)
      return live === undefined ? Effect.succeedNone : Effect.map(live.sandbox.page, Option.some)
    },
    list: Effect.suspend(() => Effect.forEach([...sessions.keys()], (name) => status(name))),
    browsers: Effect.sync(() => sessions.size + [...opening.keys()].filter((name) => !sessions.has(name)).length),
    shutdown: Deferred.succeed(stopping, undefined).pipe(Effect.asVoid)
  })
})
