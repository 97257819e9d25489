/**
 * How the service runs a surface: until stdin closes or a signal arrives (graceful first, forced on the second), and,
 * on stdio, reading requests from its first moments while the service's modules load and its layers build behind
 * the surface. What needs no browser (MCP `initialize`, the tool list) is answered at once; a session call waits.
 */
import { type Context, Deferred, Effect, Fiber, type Scope } from "effect"
import * as Events from "../Logging/Events.ts"
import * as EarlyBrowser from "../Sandbox/Provider/EarlyBrowser.ts"
import type { Sessions } from "./Sessions.ts"

/**
 * Runs `surface` until it ends (stdin closed) or a signal arrives. The surface gets `stop` to watch; on the first
 * SIGINT/SIGTERM it completes, the surface answers what is in flight and returns; a second signal exits at once.
 */
export const run = <E, R>(surface: (stop: Effect.Effect<void>) => Effect.Effect<void, E, R>) =>
  Effect.gen(function* () {
    const stop = yield* Deferred.make<void>()
    let signals = 0
    const onSignal = (signal: NodeJS.Signals) => {
      signals++
      if (signals > 1) {
        process.stderr.write(`switchyard: ${signal} again: exiting now\n`)
        process.exit(130)
      }
      process.stderr.write(`switchyard: ${signal}: shutting down (send it again to exit at once)\n`)
      Deferred.doneUnsafe(stop, Effect.void)
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        process.on("SIGINT", onSignal)
        process.on("SIGTERM", onSignal)
      }),
      () =>
        Effect.sync(() => {
          process.off("SIGINT", onSignal)
          process.off("SIGTERM", onSignal)
        })
    )
    yield* surface(Deferred.await(stop))
  })

/** The built service: its Sessions and the context its calls run in (its loggers, event and artifact sinks). */
export interface Built {
  readonly sessions: Sessions["Service"]
  readonly context: Context.Context<never>
}

/** The Sessions while the service is being built: each call waits for it, then runs in the service's context. */
export const pending = (built: Deferred.Deferred<Built>): Sessions["Service"] => {
  let ready: Built | undefined
  // The call runs in the service's context; who watches its events (a client's progress) comes along.
  const inService = <A, E>(use: (sessions: Sessions["Service"]) => Effect.Effect<A, E>, b: Built) =>
    Effect.gen(function* () {
      const watcher = yield* Events.Watcher
      return yield* Effect.provideContext(
        use(b.sessions).pipe(Effect.provideService(Events.Watcher, watcher)),
        b.context
      )
    })
  const on = <A, E = never>(use: (sessions: Sessions["Service"]) => Effect.Effect<A, E>) =>
    ready === undefined
      ? Deferred.await(built).pipe(
          Effect.flatMap((b) => {
            ready = b
            return inService(use, b)
          })
        )
      : inService(use, ready)
  return {
    call: (session, tool, args, meta) => on((s) => s.call(session, tool, args, meta)),
    status: (session) => on((s) => s.status(session)),
    close: (session) => on((s) => s.close(session)),
    hibernate: (session) => on((s) => s.hibernate(session)),
    restore: (session, page) => on((s) => s.restore(session, page)),
    // Nothing is open before the service is built.
    isOpen: (session) => ready?.sessions.isOpen(session) ?? false,
    page: (session) => on((s) => s.page(session)),
    list: on((s) => s.list),
    browsers: on((s) => s.browsers),
    shutdown: on((s) => s.shutdown)
  }
}

// Loading modules holds the event loop for its whole length (one import() of a module graph never yields): the
// surface gets a turn of the event loop first, so what a client sent at spawn (MCP `initialize`) is read and answered.
const afterPendingInput = Effect.promise(
  () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))
)

/**
 * Serves `surface` over Sessions that wait for `build` (which loads the service's modules and builds its layers in
 * the scope), started once the surface has read what is already waiting. A failed build ends the service with its
 * error, as a configuration error found while building always has.
 */
export const serveWhileBuilding = <E, E2, R>(
  build: Effect.Effect<Built, E2, Scope.Scope>,
  surface: (stop: Effect.Effect<void>, sessions: Sessions["Service"]) => Effect.Effect<void, E, R>
) =>
  run((stop) =>
    Effect.gen(function* () {
      const built = yield* Deferred.make<Built>()
      const building = yield* afterPendingInput.pipe(
        // The surface reads requests: from here the early browser's start is what a session call waits for.
        Effect.tap(() => Effect.sync(() => EarlyBrowser.fullShare())),
        Effect.andThen(build),
        Effect.flatMap((b) => Deferred.succeed(built, b)),
        Effect.forkScoped
      )
      const failed = Fiber.join(building).pipe(Effect.andThen(Effect.never))
      yield* Effect.raceFirst(surface(stop, pending(built)), failed)
    })
  )
