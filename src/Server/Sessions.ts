/**
 * Browser sessions behind the surfaces: a default session for one agent and named sessions for workers, each with
 * its own browser, Sandbox and Router. A cap on sessions (browsers) with a bounded queue in front of it, a bound on
 * calls waiting on one session, and `busy` past either; on shutdown, calls still running answer `shutting_down`.
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
import { toolNames } from "../Cascade/Tools.ts"
import { InvalidInput } from "../Errors/Page.ts"
import { Busy, ShuttingDown } from "../Errors/Service.ts"
import { type SwitchyardError, toErrorInfo } from "../Errors.ts"
import { idleStatus, Sandbox, type SandboxStatus } from "../Sandbox/Sandbox.ts"

export const defaultSession = "default"

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
  pending: number
  lastUsed: number
}

export interface SessionStatus extends SandboxStatus {
  readonly session: string
}

const sessionName = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** A session's name as given (absent: the default session), or `invalid_input` for a name that is not one. */
export const checkSessionName = (session: string | undefined): Effect.Effect<string, InvalidInput> =>
  session === undefined || sessionName.test(session)
    ? Effect.succeed(session ?? defaultSession)
    : Effect.fail(
        new InvalidInput({
          field: "session",
          message: `session names are 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit; got "${String(session).slice(0, 80)}"`
        })
      )

export class Sessions extends Context.Service<
  Sessions,
  {
    readonly call: (
      session: string | undefined,
      tool: string,
      args: unknown,
      meta?: CallMeta
    ) => Effect.Effect<ToolAnswer>
    readonly status: (session?: string) => Effect.Effect<SessionStatus>
    readonly close: (session?: string) => Effect.Effect<void>
    readonly list: Effect.Effect<ReadonlyArray<SessionStatus>>
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
  let waiting = 0

  /** An answer for a call no session took: the same shape as any other, with an empty state. */
  const refuse = (error: SwitchyardError, meta: CallMeta): ToolAnswer => {
    const traceId = meta.traceId ?? crypto.randomUUID()
    return {
      ok: false,
      error: toErrorInfo(error),
      traceId,
      ...(meta.stepId === undefined ? {} : { stepId: meta.stepId }),
      attemptId: `${traceId}#0`,
      state: {
        engine: null,
        level: null,
        disabled: [],
        url: null,
        title: null,
        tools: { available: toolNames, masked: {} }
      }
    }
  }

  const sessionFor = (name: string): Effect.Effect<Live, SwitchyardError> =>
    Effect.suspend(() => {
      // Claimed synchronously, so two first calls for one name open one session.
      const live = sessions.get(name)
      if (live) return Effect.succeed(live)
      const pending = opening.get(name)
      if (pending) return Deferred.await(pending)
      const claim = Deferred.makeUnsafe<Live, SwitchyardError>()
      opening.set(name, claim)
      // A call stopped while it opens the session (a JSON-RPC cancel) still settles the claim, so the calls
      // waiting on it get an answer (`busy`, retryable) instead of waiting for good.
      const settled = (exit: Exit.Exit<Live, SwitchyardError>) =>
        Exit.hasInterrupts(exit)
          ? Exit.fail(new Busy({ message: `the call opening session "${name}" was stopped; retry` }))
          : exit
      return open(name).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => opening.delete(name)).pipe(Effect.andThen(Deferred.done(claim, settled(exit))))
        )
      )
    })

  const open = (name: string) =>
    Effect.gen(function* () {
      // A free slot is taken at once; otherwise the call queues, if the queue has room.
      if (!(yield* slots.takeIfAvailable(1))) {
        if (waiting >= options.queue) {
          return yield* new Busy({
            message: `${sessions.size} sessions are open (the limit is ${options.maxBrowsers}) and ${waiting} calls already wait for one; retry later or close a session`
          })
        }
        waiting++
        const slot = yield* slots
          .take(1)
          .pipe(Effect.timeoutOption(options.slotTimeoutMs), Effect.ensuring(Effect.sync(() => void waiting--)))
        if (Option.isNone(slot)) {
          return yield* new Busy({
            message: `no session slot freed within ${options.slotTimeoutMs} ms (${options.maxBrowsers} sessions are open)`
          })
        }
      }
      const scope = yield* Scope.make()
      // A session that cannot start (no VNC tools, say) gives its slot back and answers why.
      const context = yield* Layer.buildWithScope(options.session(name), scope).pipe(
        Effect.onError(() => Scope.close(scope, Exit.void).pipe(Effect.andThen(slots.release(1))))
      )
      const live: Live = {
        name,
        scope,
        router: Context.get(context, Router),
        sandbox: Context.get(context, Sandbox),
        pending: 0,
        lastUsed: yield* Clock.currentTimeMillis
      }
      sessions.set(name, live)
      return live
    })

  const closeSession = (name: string) =>
    Effect.gen(function* () {
      const live = sessions.get(name)
      if (!live) return
      sessions.delete(name)
      yield* Scope.close(live.scope, Exit.void)
      yield* slots.release(1)
    })

  const call = (session: string | undefined, tool: string, args: unknown, meta: CallMeta = {}) =>
    Effect.gen(function* () {
      if (yield* Deferred.isDone(stopping))
        return refuse(new ShuttingDown({ message: "the service is shutting down" }), meta)
      const name = yield* checkSessionName(session)
      const live = yield* sessionFor(name)
      if (live.pending >= options.maxPendingPerSession) {
        return yield* new Busy({
          message: `session "${name}" already has ${live.pending} calls waiting (the limit is ${options.maxPendingPerSession}); calls on one session run one at a time`
        })
      }
      live.pending++
      live.lastUsed = yield* Clock.currentTimeMillis
      const answer = yield* live.router
        .call(tool, args, meta)
        .pipe(
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
          Effect.ensuring(Effect.sync(() => void live.pending--))
        )
      live.lastUsed = yield* Clock.currentTimeMillis
      return answer
    }).pipe(Effect.catch((error: SwitchyardError) => Effect.succeed(refuse(error, meta))))

  const status = (session?: string) =>
    Effect.gen(function* () {
      const name = session ?? defaultSession
      const live = sessions.get(name)
      return { session: name, ...(live ? yield* live.sandbox.status : idleStatus) }
    })

  // Named sessions left unused give their slot back.
  if (options.idleTimeoutMs !== null) {
    const limit = options.idleTimeoutMs
    yield* Effect.forkScoped(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        for (const live of [...sessions.values()]) {
          if (live.name !== defaultSession && live.pending === 0 && now - live.lastUsed > limit) {
            yield* closeSession(live.name)
          }
        }
      }).pipe(Effect.repeat(Schedule.spaced(Math.max(1_000, Math.min(60_000, limit / 2)))), Effect.ignore)
    )
  }

  yield* Effect.addFinalizer(() =>
    Deferred.succeed(stopping, undefined).pipe(
      Effect.andThen(Effect.forEach([...sessions.keys()], closeSession, { concurrency: "unbounded", discard: true }))
    )
  )

  return Sessions.of({
    call,
    status,
    close: (session) => closeSession(session ?? defaultSession),
    list: Effect.forEach([...sessions.keys()], (name) => status(name)),
    shutdown: Deferred.succeed(stopping, undefined).pipe(Effect.asVoid)
  })
})
