/**
 * The session's takeover by a person: whether someone has the browser, since when, why, and their way in, which lasts
 * that takeover only. Shared by the human engine (which asks and waits), the Router's masking and the resume surfaces.
 */
import { Context, DateTime, Deferred, Effect, Exit, Layer, Option, Semaphore } from "effect"
import { HumanInControl, HumanTimeout } from "../Errors/Service.ts"
import * as Events from "../Logging/Events.ts"
import { Display } from "./Display.ts"
import { resumeOf, type Takeover, type Takeovers } from "./Takeovers.ts"

export type { Takeover } from "./Takeovers.ts"

export interface HandoffOptions {
  /** How long `await` waits for the person before HumanTimeout; default 120 s (seed 001's human level). */
  readonly timeoutMs?: number
  /** The session's name, as the resume surfaces take it; default `default`. */
  readonly session?: string
  /** The service's list of takeovers (and where it answers HTTP, to say how to resume there). */
  readonly registry?: Takeovers["Service"]
}

export class Handoff extends Context.Service<
  Handoff,
  {
    /**
     * Asks a person to take over: lets them in on the display and emits `human_takeover` with the page (no
     * password). While one is active, returns it.
     */
    readonly start: (reason: string) => Effect.Effect<Takeover>
    /**
     * The person is done: ends the takeover (only the one with `id`, when given) once the person's connection is
     * closed, and wakes its waiters.
     */
    readonly resume: (id?: string) => Effect.Effect<boolean>
    /** The takeover in progress, if any. */
    readonly active: Effect.Effect<Option.Option<Takeover>>
    /** Completes when a takeover is in progress: at once if one is, else when the next one starts. */
    readonly arrival: Effect.Effect<Takeover>
    /**
     * Waits until the person resumes (at once when no takeover is active). After `timeoutMs` (default the layer's) it
     * ends the takeover, so automation gets the browser back, and fails with HumanTimeout.
     */
    readonly await: (options?: { readonly timeoutMs?: number }) => Effect.Effect<void, HumanTimeout>
  }
>()("switchyard/Handoff") {
  /** Takeovers of the browser a person sees on the session's `Display`. */
  static readonly layer = (options: HandoffOptions = {}): Layer.Layer<Handoff, never, Display> =>
    Layer.effect(
      Handoff,
      Effect.gen(function* () {
        return yield* make(yield* Display, options)
      })
    )
}

interface Current {
  readonly takeover: Takeover
  readonly done: Deferred.Deferred<void, HumanTimeout>
  /** Its end has begun (the person's connection is closing): nothing else may end it. */
  ending: boolean
}

export const make = Effect.fnUntraced(function* (display: Display["Service"], options: HandoffOptions = {}) {
  const defaultTimeoutMs = options.timeoutMs ?? 120_000
  const session = options.session ?? "default"
  const registry = options.registry
  const starting = yield* Semaphore.make(1)
  let current: Current | undefined
  /** Completed by the next start; a new one after each end. */
  let next = Deferred.makeUnsafe<Takeover>()
  // A session closed while a person holds it takes its takeover along: the service no longer lists it.
  if (registry !== undefined)
    yield* Effect.addFinalizer(() => (current === undefined ? Effect.void : registry.ended(current.takeover)))

  /**
   * Ends the takeover (the one with `id`, when given): the person's connection is closed and their password made
   * void first, so automation never drives while they still can; then its waiters all see `exit`.
   */
  const end = (id: string | undefined, why: string, exit: Exit.Exit<void, HumanTimeout> = Exit.void) =>
    Effect.gen(function* () {
      const ending = current
      if (ending === undefined || ending.ending || (id !== undefined && ending.takeover.id !== id)) return false
      ending.ending = true
      yield* display.dismiss
      current = undefined
      next = Deferred.makeUnsafe<Takeover>()
      if (registry) yield* registry.ended(ending.takeover)
      yield* Deferred.done(ending.done, exit)
      yield* Effect.logInfo(`human takeover of session ${session} ended: ${why}`, {
        reason: ending.takeover.reason,
        url: ending.takeover.url
      })
      return true
    }).pipe(Effect.uninterruptible)

  const start = Effect.fn("Handoff.start")(function* (reason: string) {
    // One start at a time: two concurrent starts cannot both begin a takeover.
    return yield* starting.withPermits(1)(
      Effect.gen(function* () {
        if (current !== undefined) return current.takeover
        const since = DateTime.formatIso(yield* DateTime.now)
        const access = yield* display.admit
        const takeover: Takeover = {
          id: crypto.randomUUID(),
          session,
          url: display.url,
          link: access.link,
          password: access.password,
          reason,
          since,
          resume: resumeOf(session, registry === undefined ? undefined : yield* registry.http)
        }
        current = { takeover, done: Deferred.makeUnsafe<void, HumanTimeout>(), ending: false }
        Deferred.doneUnsafe(next, Effect.succeed(takeover))
        if (registry) yield* registry.started(takeover)
        yield* Events.emit({ event: "human_takeover", url: takeover.url, reason })
        yield* Effect.logWarning(
          `a person is needed on session ${session}: ${reason}; open ${takeover.url} (\`switchyard takeover show ${session}\` tells its password)`
        )
        return takeover
      }).pipe(Effect.uninterruptible)
    )
  })

  const wait = Effect.fn("Handoff.await")(function* (waitOptions?: { readonly timeoutMs?: number }) {
    const waiting = current
    if (waiting === undefined) return
    const timeoutMs = waitOptions?.timeoutMs ?? defaultTimeoutMs
    yield* Deferred.await(waiting.done).pipe(
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () => {
          const timedOut = new HumanTimeout({
            engine: "human",
            action: waiting.takeover.reason,
            timeoutMs,
            message: `no person finished "${waiting.takeover.reason}" within ${timeoutMs} ms (at ${waiting.takeover.url}); the takeover ended and automation has the browser again`
          })
          // Every waiter on this takeover fails alike; one that already ended some other way is left as it ended.
          return end(waiting.takeover.id, `no one finished within ${timeoutMs} ms`, Exit.fail(timedOut)).pipe(
            Effect.andThen(Deferred.await(waiting.done))
          )
        }
      })
    )
  })

  return Handoff.of({
    start,
    resume: (id) => end(id, "the person handed the browser back"),
    active: Effect.sync(() => Option.fromNullishOr(current?.takeover)),
    arrival: Effect.suspend(() => (current === undefined ? Deferred.await(next) : Effect.succeed(current.takeover))),
    await: wait
  })
})

/** The error for an automation call made while a person has the browser: what the Router's masking answers. */
export const inControl = (takeover: Takeover, action?: string) =>
  new HumanInControl({
    engine: "human",
    url: takeover.url,
    ...(action === undefined ? {} : { action }),
    message: `a person has the browser since ${takeover.since} (${takeover.reason}; they work at ${takeover.url}): automation is paused until they are done. Check browser.status to see when, or call browser.resume once they have finished`
  })
