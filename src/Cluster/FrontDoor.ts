/**
 * Any runner's front door: the `Sessions` every surface (MCP, JSON-RPC) and workflow step uses, routed through the
 * cluster to the runner holding each session's browser. A new session goes where the fleet has most room (`busy`
 * with a wait hint when it has none); a session whose runner died moves to a live one, which restores it from its
 * saved state; a call in flight when its runner dies answers `session_closed` (retryable) at once, and the next call
 * answers on the new runner. Calls for sessions this runner holds skip the network.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import type { CallMeta, ToolAnswer } from "../Cascade/Router.ts"
import * as Tools from "../Cascade/Tools.ts"
import { SessionClosed, StepFailed } from "../Errors/Service.ts"
import type { SwitchyardError } from "../Errors.ts"
import { idleStatus } from "../Sandbox/Sandbox.ts"
import { refuse, type SessionStatus, Sessions, sessionNameOf } from "../Server/Sessions.ts"
import { TaskEvents } from "./Events.ts"
import { Fleet } from "./Fleet.ts"
import { BrowserSession, entityId } from "./SessionEntity.ts"
import * as SessionHost from "./SessionHost.ts"

export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const local = yield* Sessions
    const fleet = yield* Fleet
    const events = yield* TaskEvents
    const host = yield* SessionHost.make(local)
    const client = yield* BrowserSession.client
    /** Sessions this front door has seen placed, for the synchronous `isOpen`. */
    const known = new Set<string>()

    /** Fails as soon as the runner stops beating, so a call on a dead runner does not wait for the network. */
    const ownerDies = (runner: string) =>
      fleet.runners.pipe(
        Effect.map((all) => all.find((r) => r.name === runner)?.live ?? false),
        Effect.repeat({ schedule: Schedule.spaced(Duration.millis(250)), while: (live) => live }),
        Effect.asVoid
      )

    /** Where the session runs now, moving it off a dead runner (recorded, with how long the move took). */
    const placed = (session: string) =>
      Effect.gen(function* () {
        const place = yield* fleet.place(session)
        known.add(session)
        if (place.moved !== undefined) {
          yield* events.record(session, "session_failover", { session, from: place.moved, to: place.runner })
          yield* Effect.logWarning(`session ${session}: runner ${place.moved} stopped; moved to ${place.runner}`)
        }
        return place.runner
      })

    const remote = <A, E>(
      runner: string,
      session: string,
      tool: string,
      send: Effect.Effect<A, E>
    ): Effect.Effect<A, SessionClosed | StepFailed> =>
      send.pipe(
        Effect.raceFirst(ownerDies(runner).pipe(Effect.andThen(Effect.fail("runner stopped" as const)))),
        Effect.mapError((cause) =>
          cause instanceof StepFailed
            ? cause
            : new SessionClosed({
                action: tool,
                message: `the runner holding session "${session}" (${runner}) stopped or could not be reached (${typeof cause === "string" ? cause : ((cause as { _tag?: string })._tag ?? "error")}); call again: the session is restored on a live runner`
              })
        )
      )

    const call = Effect.fn("FrontDoor.call")(
      function* (session: unknown, tool: string, args: unknown, meta: CallMeta = {}) {
        const name = yield* sessionNameOf(session)
        const found = Tools.find(tool)
        const canon = Option.isSome(found) ? found.value.name : tool
        const idle = Option.isSome(found) && found.value.whenNotOpen !== undefined
        if (idle && Option.isNone(yield* fleet.owner(name))) return yield* local.call(name, tool, args, meta)
        const runner = yield* placed(name)
        const answer: ToolAnswer =
          runner === fleet.self
            ? yield* host.call(name, tool, args, meta)
            : ((yield* remote(
                runner,
                name,
                canon,
                client(entityId(runner, name)).Call({ session: name, tool, args, meta })
              )) as ToolAnswer)
        if (answer.ok && Option.exists(found, (t) => t.closesSession)) {
          yield* fleet.release(name)
          known.delete(name)
        }
        return answer
      },
      (self, _session, _tool, _args, meta = {}) =>
        self.pipe(Effect.catch((error: SwitchyardError) => Effect.succeed(refuse(error, meta))))
    )

    const status = Effect.fn("FrontDoor.status")(function* (session?: string) {
      const name = session ?? "default"
      const owner = yield* fleet.owner(name)
      if (Option.isNone(owner) || !owner.value.live) return { session: name, ...idleStatus }
      if (owner.value.runner === fleet.self) return yield* local.status(name)
      return yield* remote(
        owner.value.runner,
        name,
        "browser.status",
        client(entityId(owner.value.runner, name)).Status({ session: name })
      ).pipe(
        Effect.map((status) => status as SessionStatus),
        Effect.catch(() => Effect.succeed({ session: name, ...idleStatus }))
      )
    })

    const close = Effect.fn("FrontDoor.close")(function* (session?: string) {
      const name = session ?? "default"
      const owner = yield* fleet.owner(name)
      if (Option.isSome(owner) && owner.value.live) {
        if (owner.value.runner === fleet.self) yield* host.close(name)
        else
          yield* client(entityId(owner.value.runner, name))
            .Close({ session: name })
            .pipe(Effect.timeout("30 seconds"), Effect.ignore)
      }
      yield* fleet.release(name)
      known.delete(name)
    })

    const started = yield* Clock.currentTimeMillis
    yield* Effect.logDebug(`front door of runner ${fleet.self} open at ${started}`)
    return Context.make(
      Sessions,
      Sessions.of({
        ...local,
        call,
        status,
        close,
        isOpen: (session) => local.isOpen(session) || known.has(session ?? "default")
      })
    )
  })
)
