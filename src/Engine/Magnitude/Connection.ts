/**
 * The engine's side of the Magnitude worker: starting it on the session's page, one call at a time with a typed
 * outcome, each bounded by its time limit and cut short when the worker sees the browser or the page go away.
 */
import { Deferred, Duration, Effect, type Scope, Semaphore } from "effect"
import { CdpClosed, NotInitialized, Timeout } from "../../Errors/Engine.ts"
import type { SwitchyardError } from "../../Errors.ts"
import * as Isolated from "../Isolated.ts"
import { type Attempt, engine, startError, toEngineError, workerStopped } from "./Errors.ts"
import type { Init, Outcome, Started } from "./Protocol.ts"

const entry = Isolated.sibling("./Worker", import.meta.url)

export interface Connection {
  /** One worker call: typed outcome, bounded by `at.timeoutMs`, cut short by a lost connection. */
  readonly call: <A>(at: Attempt, method: string, ...args: ReadonlyArray<unknown>) => Effect.Effect<A, SwitchyardError>
  readonly connected: () => boolean
}

/**
 * Attaches a worker for the scope's lifetime (the session's kept one when there is one: Isolated.Keep); releasing it
 * detaches the agent and keeps the worker for the session's next connect, or ends it when a call was cut short.
 * `provider` names the model provider in the errors of model calls.
 */
export const connect = (
  init: Init,
  options: { readonly provider: string; readonly releaseTimeoutMs?: number }
): Effect.Effect<Connection, SwitchyardError, Scope.Scope> =>
  Effect.gen(function* () {
    // BAML writes its call logs to the process's stdout (a JSON-RPC channel here) unless BAML_LOG is "off" in the real
    // environment; magnitude-core sets it, but from a worker thread that only changes the worker's copy.
    process.env.BAML_LOG ??= "off"
    const spawnOptions = options.releaseTimeoutMs === undefined ? {} : { detachTimeoutMs: options.releaseTimeoutMs }
    const worker = yield* Isolated.spawn(entry, init, spawnOptions).pipe(
      Effect.mapError((failure) => startError(failure, init.wsEndpoint)),
      Effect.timeoutOrElse({
        duration: Duration.millis(init.connectTimeoutMs),
        orElse: () =>
          Effect.fail(
            new Timeout({
              engine,
              action: "connect",
              timeoutMs: init.connectTimeoutMs,
              message: `magnitude-core did not attach to the session's page within ${init.connectTimeoutMs} ms`
            })
          )
      })
    )
    const { found } = yield* worker
      .call<Started>("started")
      .pipe(Effect.mapError((failure) => startError(failure, init.wsEndpoint)))
    if (found !== "target") {
      yield* Effect.logWarning(
        `MagnitudeEngine: the session's page ${init.targetId} is gone; using ${found === "first" ? "the first open page" : "a new page"}`
      )
    }

    // Resolves when the worker sees the browser connection or the session's page go away; a running call then fails
    // at once with CdpClosed instead of waiting for its model call to come back.
    const gone = yield* Deferred.make<string>()
    yield* worker.watch<string>("disconnected").pipe(
      Effect.flatMap((reason) => Deferred.succeed(gone, reason)),
      Effect.ignore,
      Effect.forkScoped
    )
    const lock = yield* Semaphore.make(1)

    const closedError = (at: Attempt, reason: string) =>
      new CdpClosed({ engine, action: at.action, sideEffect: at.sideEffect, message: `${at.action}: ${reason}` })

    const call = <A>(at: Attempt, method: string, ...args: ReadonlyArray<unknown>): Effect.Effect<A, SwitchyardError> =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          if (Deferred.isDoneUnsafe(gone)) {
            return yield* closedError(at, "the engine is no longer connected to the page")
          }
          if (!worker.alive()) {
            return yield* new NotInitialized({
              engine,
              action: at.action,
              message: `${at.action}: the magnitude worker was stopped (a call timed out or was interrupted); reconnect the engine`
            })
          }
          const outcome = yield* worker.call<Outcome<A>>(method, ...args).pipe(
            Effect.mapError((failure) => workerStopped(failure, at)),
            Effect.raceFirst(
              Deferred.await(gone).pipe(Effect.flatMap((reason) => Effect.fail(closedError(at, reason))))
            ),
            Effect.timeoutOrElse({
              duration: Duration.millis(at.timeoutMs),
              orElse: () =>
                Effect.fail(
                  new Timeout({
                    engine,
                    action: at.action,
                    timeoutMs: at.timeoutMs,
                    sideEffect: at.sideEffect,
                    message: `${at.action} did not finish within ${at.timeoutMs} ms; the magnitude worker was stopped`
                  })
                )
            })
          )
          return outcome.ok ? outcome.value : yield* Effect.fail(toEngineError(outcome.problem, at, options.provider))
        })
      )

    return { call, connected: () => worker.alive() && !Deferred.isDoneUnsafe(gone) } satisfies Connection
  })
