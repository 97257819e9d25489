/**
 * The fleet's own bookkeeping in the shared store: each runner's heartbeat and browser cap, and which runner holds
 * each session. New sessions go to the live runner with the most free browsers (a hibernated session holds none); a
 * full fleet answers `busy` with a wait hint; a session whose runner stopped beating is given to another, which
 * restores it from its saved state.
 * (The cluster knows runners too, but not their browser caps, and it must never move a session by itself.)
 */
import { Clock, Context, Effect, Layer, Option, Schedule, Semaphore } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Busy } from "../Errors/Service.ts"

export interface FleetOptions {
  /** This runner's name: its shard group is `runner:<name>`. */
  readonly self: string
  /** The runner's cluster address, for people reading the fleet's status. */
  readonly address: string
  /** Sessions (browsers) this runner takes. */
  readonly capacity: number
  /** How often this runner says it is alive. */
  readonly heartbeatMs: number
  /** A runner silent this long is taken for dead and its sessions move. */
  readonly failoverAfterMs: number
}

export interface RunnerRow {
  readonly name: string
  readonly address: string
  readonly capacity: number
  /** Browsers the runner held (or was opening) when it last beat; a hibernated session holds none. */
  readonly open: number
  /** Sessions the fleet gave it, hibernated ones too. */
  readonly assigned: number
  /** Sessions given to it since it last beat: their browsers are not in `open` yet. */
  readonly placed: number
  readonly live: boolean
  readonly heartbeatAgoMs: number
}

export interface Owner {
  readonly runner: string
  readonly live: boolean
}

export class Fleet extends Context.Service<
  Fleet,
  {
    readonly self: string
    readonly failoverAfterMs: number
    /** The runner holding the session, if one was chosen. */
    readonly owner: (session: string) => Effect.Effect<Option.Option<Owner>>
    /** The session's runner: the one it has if that one is alive, else a live one with room (`busy` if none). */
    readonly place: (session: string) => Effect.Effect<{ readonly runner: string; readonly moved?: string }, Busy>
    /** Forgets the session's runner (it was closed). */
    readonly release: (session: string) => Effect.Effect<void>
    readonly runners: Effect.Effect<ReadonlyArray<RunnerRow>>
    readonly sessions: Effect.Effect<ReadonlyArray<{ readonly session: string; readonly runner: string }>>
  }
>()("switchyard/Fleet") {
  static readonly layer = (options: FleetOptions, openSessions: Effect.Effect<number>) =>
    Layer.effect(Fleet, make(options, openSessions))
}

/** Reads the fleet as it is in the store, for `switchyard status` and the front doors. */
export const readRunners = (failoverAfterMs: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    const rows = yield* sql<{
      name: string
      address: string
      capacity: number
      open_sessions: number
      heartbeat_ms: number | string | bigint
      assigned: number | string | bigint
      placed: number | string | bigint
    }>`SELECT r.name, r.address, r.capacity, r.open_sessions, r.heartbeat_ms,
         (SELECT count(*) FROM fleet_sessions s WHERE s.runner = r.name) AS assigned,
         (SELECT count(*) FROM fleet_sessions s WHERE s.runner = r.name AND s.assigned_ms >= r.heartbeat_ms) AS placed
       FROM fleet_runners r ORDER BY r.name`
    return rows.map(
      (r): RunnerRow => ({
        name: r.name,
        address: r.address,
        capacity: Number(r.capacity),
        open: Number(r.open_sessions),
        assigned: Number(r.assigned),
        placed: Number(r.placed),
        live: now - Number(r.heartbeat_ms) <= failoverAfterMs,
        heartbeatAgoMs: now - Number(r.heartbeat_ms)
      })
    )
  })

export const make = Effect.fnUntraced(function* (options: FleetOptions, openSessions: Effect.Effect<number>) {
  const sql = yield* SqlClient.SqlClient

  const beat = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const open = yield* openSessions
    yield* sql`INSERT INTO fleet_runners (name, address, capacity, open_sessions, heartbeat_ms)
      VALUES (${options.self}, ${options.address}, ${options.capacity}, ${open}, ${now})
      ON CONFLICT (name) DO UPDATE SET address = excluded.address, capacity = excluded.capacity,
      open_sessions = excluded.open_sessions, heartbeat_ms = excluded.heartbeat_ms`
  })
  yield* beat.pipe(Effect.orDie)
  yield* beat.pipe(
    Effect.catch((error) => Effect.logWarning(`fleet heartbeat not written: ${error.message}`)),
    Effect.repeat(Schedule.spaced(options.heartbeatMs)),
    Effect.forkScoped
  )
  // A runner stopping on purpose leaves at once: its sessions move without waiting out the silence.
  yield* Effect.addFinalizer(() =>
    sql`UPDATE fleet_runners SET heartbeat_ms = 0 WHERE name = ${options.self}`.pipe(Effect.ignore)
  )

  const runners = readRunners(options.failoverAfterMs).pipe(
    Effect.provideService(SqlClient.SqlClient, sql),
    Effect.orDie
  )

  const owner = (session: string) =>
    Effect.gen(function* () {
      const rows = yield* sql<{ runner: string }>`SELECT runner FROM fleet_sessions WHERE session = ${session}`
      if (rows[0] === undefined) return Option.none<Owner>()
      const all = yield* runners
      const runner = rows[0].runner
      return Option.some({ runner, live: all.some((r) => r.name === runner && r.live) })
    }).pipe(Effect.orDie)

  /**
   * The live runner with the most free browsers (this one on a tie, so a session starts where it was asked for): its
   * cap less the browsers it reported and the sessions placed on it since. A session it hibernated (its page saved,
   * its browser closed) holds none; it gets one again when it is called, the runner hibernating an idle one if it must.
   */
  const choose = Effect.gen(function* () {
    const live = (yield* runners).filter((r) => r.live)
    const free = (r: RunnerRow) => r.capacity - (r.open + r.placed)
    const best = live
      .filter((r) => free(r) > 0)
      .sort((a, b) => free(b) - free(a) || Number(b.name === options.self) - Number(a.name === options.self))[0]
    if (best === undefined) {
      const total = live.reduce((n, r) => n + r.capacity, 0)
      return yield* new Busy({
        retryAfterMs: 5_000,
        message: `every runner is full (${live.length} live runners, ${total} sessions in all); retry in about 5 s or close a session`
      })
    }
    return best.name
  })

  // One placement at a time through this front door, so sessions opened together see each other's places (two front
  // doors placing at the same instant may still both pick one runner: its own queue then takes the extra call).
  const placing = yield* Semaphore.make(1)

  /** Places a session that has no live runner: under the lock, looking again first. */
  const placeAnew = (session: string) =>
    Effect.gen(function* () {
      const current = yield* owner(session)
      if (Option.isSome(current) && current.value.live) return { runner: current.value.runner }
      const chosen = yield* choose
      const now = yield* Clock.currentTimeMillis
      if (Option.isNone(current)) {
        yield* sql`INSERT INTO fleet_sessions (session, runner, assigned_ms) VALUES (${session}, ${chosen}, ${now})
          ON CONFLICT (session) DO NOTHING`.pipe(Effect.orDie)
      } else {
        // Only if no other front door moved it first.
        yield* sql`UPDATE fleet_sessions SET runner = ${chosen}, assigned_ms = ${now}
          WHERE session = ${session} AND runner = ${current.value.runner}`.pipe(Effect.orDie)
      }
      const placed = yield* owner(session)
      const runner = Option.isSome(placed) ? placed.value.runner : chosen
      return Option.isSome(current) ? { runner, moved: current.value.runner } : { runner }
    }).pipe(placing.withPermits(1))

  const place = (session: string) =>
    owner(session).pipe(
      Effect.flatMap((current) =>
        Option.isSome(current) && current.value.live
          ? Effect.succeed({ runner: current.value.runner })
          : placeAnew(session)
      )
    )

  return Fleet.of({
    self: options.self,
    failoverAfterMs: options.failoverAfterMs,
    owner,
    place,
    release: (session) => sql`DELETE FROM fleet_sessions WHERE session = ${session}`.pipe(Effect.asVoid, Effect.orDie),
    runners,
    sessions: sql<{
      session: string
      runner: string
    }>`SELECT session, runner FROM fleet_sessions ORDER BY session`.pipe(Effect.orDie)
  })
})
