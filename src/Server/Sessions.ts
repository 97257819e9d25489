/**
 * Browser sessions behind the surfaces: a default session for one agent and named sessions for workers, each with
 * its own browser, Sandbox and Router. Calls on one session run one at a time in arrival order (a FIFO lane per
 * name, joined before the call yields, so every surface gets the order its requests came in); calls on different
 * sessions run in parallel. A cap on sessions (browsers) with a bounded queue in front of it, a bound on calls waiting
 * on one session, and `busy` past either; on shutdown, calls running or waiting answer `shutting_down`.
 * `browser.status` and `browser.close` never open a session: a session not open is idle, and closing one frees its slot.
 * Under pressure, idle sessions hibernate: when a new session needs a browser and the cap is reached, the least recently
 * used session with no call waiting has its page (URL, cookies, storage) saved and its browser closed, and its next
 * call restores it; `busy` is left for when every session is working. An MCP client that went away frees its sessions
 * the same way.
 *
 * Where the state is: the sessions (open, opening, hibernating, hibernated pages, lanes, calls waiting for a slot) are
 * one immutable value in a `Ref` (Sessions/Registry.ts), changed in one step per decision; the cap and its queue are a
 * `Semaphore` whose waiters are served in arrival order (Sessions/Slots.ts); each session's lane is a `Semaphore` of
 * one permit (Sessions/Lanes.ts); a lane that empties while calls wait for a slot hibernates the least recently used
 * idle session, whose permit the first waiter takes; a fiber on a `Schedule` closes named sessions left unused; a
 * `Deferred` per session and one for the service stop the calls a close or a shutdown catches. Answers no session
 * gave are in Sessions/Answers.ts. Opening, hibernating and the slot queue decide together on that one registry,
 * which keeps them (past 400 lines) in this one file.
 *
 * Why not `LayerMap.make((name) => SessionStack.layer(…), { idleTimeToLive })` or an `RcMap` under it: in Effect 4.1
 * RcMap keeps a failed build as the key's entry (only an interrupted build is dropped), so a session refused with
 * `busy` or unable to start would give that failure again once a slot is free, the default session (never
 * idle-expired) for good; it has no cap with a queue (RcMap's `capacity` fails at once, and LayerMap does not expose
 * it); `invalidate` on a session in use waits for its calls to end, where `browserClose` must close the browser now and
 * stop the call holding it (`session_closed`); `contextEffectOption`, the only read of a live session that builds
 * none, retains it and restarts its idle clock, so a status poll would keep a session open. So the registry keeps what
 * an RcMap would, and idle closing is a sweep over it.
 */
import { Clock, Context, Deferred, Effect, Exit, HashMap, Layer, Option, Ref, Schedule, Scope } from "effect"
import type { CallMeta, ToolAnswer } from "../Cascade/Router.ts"
import { Router } from "../Cascade/Router.ts"
import * as Tools from "../Cascade/Tools.ts"
import { Busy, SessionClosed } from "../Errors/Service.ts"
import type { SwitchyardError } from "../Errors.ts"
import { idleStatus, type PageView, Sandbox, type SandboxStatus } from "../Sandbox/Sandbox.ts"
import { type SavedPage, summary } from "../Sandbox/SavedPage.ts"
import { defaultSession, invalidName, isSessionName } from "./SessionName.ts"
import { refuse, sessionless, shuttingDown } from "./Sessions/Answers.ts"
import * as Lanes from "./Sessions/Lanes.ts"
import * as Registry from "./Sessions/Registry.ts"
import * as Slots from "./Sessions/Slots.ts"

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

export interface SessionStatus extends SandboxStatus {
  readonly session: string
  /** Its browser was closed to free a slot; its page comes back on its next call. */
  readonly hibernated?: true
}

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

/** Saves a claimed session's page and closes its browser, giving its slot back with `releaseSlot`. */
type Hibernate = (releaseSlot: boolean) => Effect.Effect<void>

export const make = Effect.fnUntraced(function* (options: SessionsOptions) {
  const registry = yield* Ref.make(Registry.empty)
  const slots = yield* Slots.make(options, registry)
  const stopping = yield* Deferred.make<void>()
  const serviceScope = yield* Effect.scope
  const { release } = slots
  const current = Ref.get(registry)

  /** The session's stack, opened (once, whoever asks first) when it is not open yet. */
  const sessionFor = (name: string): Effect.Effect<Registry.Live, SwitchyardError> =>
    Ref.modify(registry, (r): [Effect.Effect<Registry.Live, SwitchyardError>, Registry.Registry] => {
      const live = HashMap.get(r.open, name)
      if (Option.isSome(live)) return [Effect.succeed(live.value), r]
      const pending = HashMap.get(r.opening, name)
      if (Option.isSome(pending)) return [Deferred.await(pending.value), r]
      // Claimed in the same step, so two first calls for one name open one session.
      const claim = Deferred.makeUnsafe<Registry.Live, SwitchyardError>()
      // Opened on a fiber of its own, so a caller cancelled meanwhile does not leave the claim unsettled.
      const opened = open(name).pipe(
        Effect.onExit((exit) =>
          Ref.update(registry, (now) => ({ ...now, opening: HashMap.remove(now.opening, name) })).pipe(
            Effect.andThen(Deferred.done(claim, exit))
          )
        ),
        Effect.forkIn(serviceScope),
        Effect.andThen(Deferred.await(claim))
      )
      return [opened, { ...r, opening: HashMap.set(r.opening, name, claim) }]
    }).pipe(Effect.flatten)

  /**
   * Takes `live` out of the open sessions (when `when` holds) and marks it hibernating, in one step: what then saves
   * its page and closes its browser, giving its slot back with `releaseSlot` (else the slot passes to the caller).
   */
  const claim = (live: Registry.Live, when?: (r: Registry.Registry) => boolean) =>
    Effect.gen(function* () {
      const done = yield* Deferred.make<void>()
      const taken = yield* Ref.modify(registry, (r) => {
        const [out, next] = Registry.takeOut(r, live, when)
        return [out, Option.isSome(out) ? { ...next, hibernating: HashMap.set(next.hibernating, live.name, done) } : r]
      })
      return Option.map(
        taken,
        (kept): Hibernate =>
          (releaseSlot) =>
            saveAndClose(kept, done, releaseSlot)
      )
    })

  const saveAndClose = (live: Registry.Live, done: Deferred.Deferred<void>, releaseSlot: boolean) =>
    Effect.gen(function* () {
      const page = yield* live.sandbox.saved.pipe(
        Effect.timeoutOption(5_000),
        Effect.map(Option.flatten),
        Effect.orElseSucceed(() => Option.none<SavedPage>())
      )
      if (Option.isSome(page)) {
        const kept = { page: page.value, lastUsed: live.lastUsed }
        yield* Ref.update(registry, (r) => Registry.keep(r, live.name, kept))
        yield* Effect.logInfo(`session ${live.name} hibernated: ${summary(page.value)}`)
      }
      yield* Deferred.done(live.closed, Exit.void)
      yield* Scope.close(live.scope, Exit.void)
      if (releaseSlot) yield* release
    }).pipe(
      Effect.ensuring(
        Ref.update(registry, (r) => ({ ...r, hibernating: HashMap.remove(r.hibernating, live.name) })).pipe(
          Effect.andThen(Deferred.done(done, Exit.void))
        )
      ),
      Effect.uninterruptible
    )

  /** Claims the least recently used session with no call waiting or running and no person at its browser. */
  const claimIdle = Effect.gen(function* () {
    for (const live of Registry.idle(yield* current)) {
      if (yield* live.router.occupied) continue
      // Claimed only if still idle after the yield above: a call may have come meanwhile.
      const hibernate = yield* claim(live, (r) => Registry.pending(r, live.name) === 0)
      if (Option.isSome(hibernate)) return hibernate
    }
    return Option.none<Hibernate>()
  })

  /** Hibernates an idle session for a call that needs a slot: its slot passes to the caller. Whether one was. */
  const hibernateIdle = claimIdle.pipe(
    Effect.flatMap(
      Option.match({ onNone: () => Effect.succeed(false), onSome: (hibernate) => Effect.as(hibernate(false), true) })
    ),
    Effect.uninterruptible
  )

  /**
   * A session's last call ended: while calls wait for a slot, an idle session is claimed at once (before that
   * session's next call can come) and hibernated on a fiber of its own, its slot going to the first waiter; one
   * hibernation under way per waiting call at most, so sessions working in bursts are not all put to sleep at once.
   */
  const onIdle = Effect.gen(function* () {
    const free = yield* Ref.modify(registry, (r): [boolean, Registry.Registry] =>
      r.waiting > r.freeing ? [true, { ...r, freeing: r.freeing + 1 }] : [false, r]
    )
    if (!free) return
    const freed = Ref.update(registry, (r) => ({ ...r, freeing: r.freeing - 1 }))
    const hibernate = yield* claimIdle
    if (Option.isNone(hibernate)) return yield* freed
    yield* Effect.forkIn(hibernate.value(true).pipe(Effect.ensuring(freed)), serviceScope)
  })

  const open = (name: string) =>
    Effect.gen(function* () {
      // A session being hibernated is saved first, so that its page comes back.
      const saving = HashMap.get((yield* current).hibernating, name)
      if (Option.isSome(saving)) yield* Deferred.await(saving.value)
      yield* slots.take(hibernateIdle)
      const scope = yield* Scope.make()
      // A session that cannot start (no VNC tools, say) gives its slot back and answers why.
      const context = yield* Layer.buildWithScope(options.session(name), scope).pipe(
        Effect.onError(() => Scope.close(scope, Exit.void).pipe(Effect.andThen(release)))
      )
      const live: Registry.Live = {
        name,
        scope,
        router: Context.get(context, Router),
        sandbox: Context.get(context, Sandbox),
        closed: yield* Deferred.make<void>(),
        lastUsed: yield* Clock.currentTimeMillis
      }
      const back = yield* Ref.modify(registry, (r) => [
        HashMap.get(r.hibernated, name),
        { ...r, open: HashMap.set(r.open, name, live), hibernated: HashMap.remove(r.hibernated, name) }
      ])
      // A hibernated session's page comes back before its call runs; the answer reports it (`restored`).
      if (Option.isSome(back)) {
        yield* live.sandbox
          .restore(back.value.page, "hibernation")
          .pipe(Effect.catch((error) => Effect.logWarning(`session ${name} could not be restored: ${error.message}`)))
      }
      return live
    })

  /** Closes the open session now (when `when` holds), stopping its calls and freeing its slot. */
  const closeSession = (name: string, when?: (r: Registry.Registry, live: Registry.Live) => boolean) =>
    Ref.modify(registry, (r) => {
      const live = HashMap.get(r.open, name)
      if (Option.isNone(live) || (when !== undefined && !when(r, live.value))) return [Option.none<Registry.Live>(), r]
      return [live, { ...r, open: HashMap.remove(r.open, name) }]
    }).pipe(
      Effect.flatMap(
        Option.match({
          onNone: () => Effect.void,
          onSome: (live) =>
            Deferred.done(live.closed, Exit.void).pipe(
              Effect.andThen(Scope.close(live.scope, Exit.void)),
              Effect.andThen(release)
            )
        })
      )
    )

  const touch = (live: Registry.Live) =>
    Clock.currentTimeMillis.pipe(Effect.flatMap((now) => Ref.update(registry, (r) => Registry.touch(r, live, now))))

  /** Runs a call whose turn has come: status and close of a session not open answer without opening it. */
  const run = (name: string, tool: string, args: unknown, meta: CallMeta) =>
    Effect.gen(function* () {
      const found = Tools.find(tool)
      const idle = Option.isSome(found) ? found.value.whenNotOpen : undefined
      const r = yield* current
      if (idle !== undefined && !HashMap.has(r.open, name) && !HashMap.has(r.opening, name)) {
        return sessionless({ ok: true, result: idle }, meta)
      }
      const live = yield* sessionFor(name)
      yield* touch(live)
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
      else yield* touch(live)
      return answer
    })

  const call = Effect.fn("Sessions.call")(
    function* (session: unknown, tool: string, args: unknown, meta: CallMeta = {}) {
      if (yield* Deferred.isDone(stopping)) return refuse(shuttingDown(), meta)
      if (!isSessionName(session)) return yield* invalidName(session)
      const name = session ?? defaultSession
      const r = yield* current
      const pending = Registry.pending(r, name)
      if (pending >= options.maxPendingPerSession) {
        return yield* new Busy({
          message: `session "${name}" already has ${pending} calls waiting (the limit is ${options.maxPendingPerSession}); calls on one session run one at a time`
        })
      }
      // Calls that must answer while a long call holds the session take no turn: a status read, a close (which stops
      // that call), and a person's takeover and hand-back (the long call may be the one waiting for the person).
      if (Option.exists(Tools.find(tool), (t) => t.outsideLane)) return yield* run(name, tool, args, meta)
      // While a person holds the browser, automation calls are refused at once rather than after the queue. The read
      // does not wait, so the call still joins its lane before it yields.
      const live = HashMap.get(r.open, name)
      if (Option.isSome(live) && (yield* live.value.router.occupied)) return yield* run(name, tool, args, meta)
      // A call whose turn comes after shutdown began does not start.
      const turn = Deferred.isDone(stopping).pipe(
        Effect.flatMap((done) =>
          done ? Effect.succeed(refuse(shuttingDown(tool), meta)) : run(name, tool, args, meta)
        )
      )
      // `raceFirst` starts its first racer at once (not on a later tick): the lane is joined before anything yields.
      return yield* Lanes.run(registry, name, turn, onIdle).pipe(
        Effect.raceFirst(Deferred.await(stopping).pipe(Effect.as(refuse(shuttingDown(tool), meta))))
      )
    },
    (self, _session, _tool, _args, meta = {}) =>
      self.pipe(Effect.catch((error: SwitchyardError) => Effect.succeed(refuse(error, meta))))
  )

  const status = Effect.fn("Sessions.status")(function* (session?: string) {
    const name = session ?? defaultSession
    const r = yield* current
    const live = HashMap.get(r.open, name)
    if (Option.isSome(live)) return { session: name, ...(yield* live.value.sandbox.status) }
    return { session: name, ...idleStatus, ...(HashMap.has(r.hibernated, name) ? { hibernated: true as const } : {}) }
  })

  // Named sessions left unused give their slot back; hibernated pages left unused are dropped.
  if (options.idleTimeoutMs !== null) {
    const limit = options.idleTimeoutMs
    const unused = (now: number) => (r: Registry.Registry, live: Registry.Live) =>
      live.name !== defaultSession && Registry.pending(r, live.name) === 0 && now - live.lastUsed > limit
    yield* Effect.forkScoped(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        for (const name of HashMap.keys((yield* current).open)) yield* closeSession(name, unused(now))
        yield* Ref.update(registry, (r) => ({
          ...r,
          hibernated: HashMap.filter(r.hibernated, (kept) => now - kept.lastUsed <= limit)
        }))
      }).pipe(Effect.repeat(Schedule.spaced(Math.max(1_000, Math.min(60_000, limit / 2)))), Effect.ignore)
    )
  }

  yield* Effect.addFinalizer(() =>
    Deferred.succeed(stopping, undefined).pipe(
      Effect.andThen(current),
      Effect.flatMap((r) =>
        Effect.forEach(HashMap.keys(r.open), (name) => closeSession(name), { concurrency: "unbounded", discard: true })
      )
    )
  )

  /** Waits for the session's page to be saved when it is being hibernated. */
  const saved = (name: string) =>
    current.pipe(
      Effect.flatMap((r) =>
        Option.match(HashMap.get(r.hibernating, name), { onNone: () => Effect.void, onSome: Deferred.await })
      )
    )

  return Sessions.of({
    call,
    status,
    /** Closing forgets a hibernated page too: the session starts afresh. */
    close: Effect.fn("Sessions.close")(function* (session?: string) {
      const name = session ?? defaultSession
      yield* saved(name)
      yield* Ref.update(registry, (r) => ({ ...r, hibernated: HashMap.remove(r.hibernated, name) }))
      yield* closeSession(name)
    }),
    hibernate: Effect.fn("Sessions.hibernate")(function* (session?: string) {
      const live = HashMap.get((yield* current).open, session ?? defaultSession)
      if (Option.isNone(live)) return
      // Not stopped between the claim and the close: a session claimed is always closed and its slot given back.
      yield* claim(live.value).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: (hibernate) => hibernate(true) })),
        Effect.uninterruptible
      )
    }),
    restore: Effect.fn("Sessions.restore")(function* (session: string | undefined, page: SavedPage) {
      const name = session ?? defaultSession
      yield* saved(name)
      // In the session's lane, as a call: a session being restored is not idle, so no other call hibernates it then.
      yield* Lanes.run(
        registry,
        name,
        Effect.gen(function* () {
          // Opening a session hibernated here brings back its own page.
          const r = yield* current
          const fresh = !HashMap.has(r.open, name) && !HashMap.has(r.opening, name) && HashMap.has(r.hibernated, name)
          const live = yield* sessionFor(name)
          if (!fresh) yield* live.sandbox.restore(page, "failover")
        }),
        onIdle
      )
    }),
    isOpen: (session) => Registry.isOpen(Ref.getUnsafe(registry), session ?? defaultSession),
    page: (session) =>
      current.pipe(
        Effect.flatMap((r) =>
          Option.match(HashMap.get(r.open, session ?? defaultSession), {
            onNone: () => Effect.succeedNone,
            onSome: (live) => Effect.map(live.sandbox.page, Option.some)
          })
        ),
        Effect.withSpan("Sessions.page")
      ),
    list: current.pipe(
      Effect.flatMap((r) => Effect.forEach(HashMap.keys(r.open), (name) => status(name))),
      Effect.withSpan("Sessions.list")
    ),
    browsers: Effect.map(current, Registry.browsers),
    shutdown: Deferred.succeed(stopping, undefined).pipe(Effect.asVoid, Effect.withSpan("Sessions.shutdown"))
  })
})
