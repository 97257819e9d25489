/**
 * Browsers started before anyone asks: a provider that hands out a browser it already started, and starts the next
 * in the background, so a new session (or a crashed one's relaunch) skips Chromium's start. Each is started through a
 * relay of its own (Egress/Relay.ts) that refuses everything until the session that takes it binds it to its egress
 * proxy: a warm browser reaches nothing its session's policy refuses, as one launched for the session.
 */
import { Deferred, Effect, Exit, Option, Scope } from "effect"
import * as CdpHttp from "../../Cdp/Http.ts"
import * as Session from "../../Cdp/Session.ts"
import { Egress } from "../../Egress/Egress.ts"
import * as Relay from "../../Egress/Relay.ts"
import type { SwitchyardError } from "../../Errors.ts"
import { BrowserProvider, type RunningBrowser } from "./Browser.ts"

/** Starts a browser for a scope, through the egress proxy named (none: as configured). */
export type Launch = (egressProxy: string | undefined) => Effect.Effect<RunningBrowser, SwitchyardError, Scope.Scope>

export interface WarmPoolOptions {
  /** Browsers kept started and unused. */
  readonly size: number
  /** Browsers at once, in use and warm together: a warm one is started only below it. */
  readonly maxBrowsers: number
  /** How long after a browser is taken the next one starts; default 500 ms. Chromium's start takes most of a core
   * for a while: started at once, it would slow the first call of the session that just took its browser. */
  readonly refillAfterMs?: number
  /** A browser already starting behind a relay of its own (the early launch's): the pool's first start takes it. */
  readonly adopt?: Effect.Effect<Started, SwitchyardError, Scope.Scope>
}

/** A browser started for the pool, with the relay it goes through. */
export interface Started {
  readonly browser: RunningBrowser
  readonly relay: Relay.Relay
}

interface Warm extends Started {
  readonly scope: Scope.Closeable
}

/**
 * A warm browser is fresh: started for nobody by `launch` (a local launch: its own temp profile), handed out once,
 * and stopped with the scope of the session that took it like any other; it never returns to the pool, so nothing
 * one session left in it (cookies, storage, history, downloads) reaches another.
 */
export const make = (
  launch: Launch,
  options: WarmPoolOptions
): Effect.Effect<BrowserProvider["Service"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const pool = yield* Effect.scope
    // Changed only in synchronous steps, so the counts never race. `warm` holds the browsers started ahead, in the
    // order they were started, each as the answer of its start (undefined when it failed).
    const warm: Array<Deferred.Deferred<Warm | undefined>> = []
    let inUse = 0
    let adopt = options.adopt

    /** Starts a browser and readies it for a first client (its page's renderer up), outside any session. */
    const startOne = (done: Deferred.Deferred<Warm | undefined>, first: WarmPoolOptions["adopt"]) =>
      Effect.gen(function* () {
        const scope = yield* Scope.fork(pool)
        // The relay first, so it closes after its browser.
        const fresh = Relay.start.pipe(
          Effect.flatMap((relay) => launch(relay.url).pipe(Effect.map((browser) => ({ browser, relay }))))
        )
        const started = yield* (first ?? fresh).pipe(
          Scope.provide(scope),
          Effect.tap(({ browser }) =>
            CdpHttp.listTargets(browser.httpEndpoint).pipe(
              Effect.flatMap((targets) => {
                const page = targets.find((t) => t.type === "page")
                return page === undefined ? Effect.void : Session.evaluate(browser.wsEndpoint, page.id, "1")
              }),
              Effect.timeoutOption(5_000),
              Effect.ignore
            )
          ),
          Effect.exit
        )
        if (Exit.isFailure(started)) yield* Scope.close(scope, started)
        yield* Deferred.succeed(done, Exit.isSuccess(started) ? { ...started.value, scope } : undefined)
      }).pipe(Effect.onInterrupt(() => Deferred.succeed(done, undefined)))

    /** Tops the pool up to its size within the cap; a start that fails is not retried until the next take. */
    const fill: Effect.Effect<void> = Effect.suspend(() => {
      const wanted = Math.min(options.size - warm.length, options.maxBrowsers - inUse - warm.length)
      if (wanted <= 0) return Effect.void
      const starts = Array.from({ length: wanted }, () => Deferred.makeUnsafe<Warm | undefined>())
      warm.push(...starts)
      const first = adopt
      adopt = undefined
      return Effect.forkIn(
        Effect.forEach(starts, (done, i) => startOne(done, i === 0 ? first : undefined), {
          concurrency: "unbounded",
          discard: true
        }),
        pool
      )
    }).pipe(Effect.asVoid)

    /** The oldest browser started ahead, waiting for it when it is still starting (it is further along than a new one). */
    const takeWarm: Effect.Effect<Warm | undefined> = Effect.suspend(() => {
      const next = warm.shift()
      if (next === undefined) return Effect.succeed(undefined)
      return Deferred.await(next).pipe(
        Effect.flatMap((taken) =>
          taken === undefined
            ? takeWarm
            : taken.browser.alive.pipe(
                Effect.flatMap((alive) =>
                  alive ? Effect.succeed(taken) : Scope.close(taken.scope, Exit.void).pipe(Effect.andThen(takeWarm))
                )
              )
        )
      )
    })

    /** Tops the pool up a while after a take or a release, so the first calls of a session that just took its
     * browser (or relaunched a crashed one) have the cores. */
    const refill = Effect.asVoid(
      Effect.forkIn(Effect.sleep(options.refillAfterMs ?? 500).pipe(Effect.andThen(fill)), pool)
    )

    const acquire = Effect.gen(function* () {
      const egress = yield* Effect.serviceOption(Egress)
      inUse++
      // Added first, so it runs last: the session's browser is stopped before the pool starts another.
      yield* Effect.addFinalizer(() => Effect.sync(() => inUse--).pipe(Effect.andThen(refill)))
      // A session without an egress proxy gets a browser launched as configured, as from LocalChromium.layer.
      const taken = Option.isSome(egress) ? yield* takeWarm : undefined
      if (Option.isNone(egress) || taken === undefined) {
        const browser = yield* launch(Option.getOrUndefined(egress)?.proxyUrl)
        yield* refill
        return browser
      }
      yield* Effect.addFinalizer((exit) => Scope.close(taken.scope, exit))
      // No page of the session may reach the relay itself (it would loop back into the proxy).
      yield* egress.value.refuse(`127.0.0.0/8:${taken.relay.port}`)
      yield* taken.relay.bind(egress.value.proxyUrl)
      yield* refill
      return taken.browser
    })

    yield* fill
    // Not taken by a first start (a pool with no room): stopped at once.
    if (adopt !== undefined) yield* Effect.scoped(adopt).pipe(Effect.ignore)
    return BrowserProvider.of({ name: "local", canRelaunch: true, acquire })
  })
