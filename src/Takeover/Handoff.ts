/**
 * The session's takeover by a person: whether someone has the browser, since when, why and where to watch. Shared
 * by the human engine (which asks and waits), the Router's masking and the resume surfaces.
 */
import { Context, DateTime, Deferred, Effect, Exit, Layer, Option } from "effect"
import { HumanInControl, HumanTimeout } from "../Errors/Service.ts"
import * as Events from "../Logging/Events.ts"
import { Display } from "./Display.ts"

/** A person has (or was asked to take) the browser. */
export interface Takeover {
  readonly id: string
  /** The noVNC page to watch and drive the browser from (no password in it). */
  readonly url: string
  readonly reason: string
  /** When it started, ISO 8601. */
  readonly since: string
}

export interface HandoffOptions {
  /** How long `await` waits for the person before HumanTimeout; default 120 s (seed 001's human level). */
  readonly timeoutMs?: number
}

export class Handoff extends Context.Service<
  Handoff,
  {
    /** Asks a person to take over: emits `human_takeover` with the noVNC URL. While one is active, returns it. */
    readonly start: (reason: string) => Effect.Effect<Takeover>
    /** The person is done: ends the takeover (only the one with `id`, when given) and wakes its waiters. */
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
  /** Takeovers of the browser a person sees on the session's `Display`, at its URL. */
  static readonly layer = (options: HandoffOptions = {}): Layer.Layer<Handoff, never, Display> =>
    Layer.effect(
      Handoff,
      Effect.gen(function* () {
        const display = yield* Display
        return yield* make({ ...options, url: display.url })
      })
    )
}

export const make = Effect.fnUntraced(function* (options: HandoffOptions & { readonly url: string }) {
  const defaultTimeoutMs = options.timeoutMs ?? 120_000
  let current: { readonly takeover: Takeover; readonly done: Deferred.Deferred<void, HumanTimeout> } | undefined
  /** Completed by the next start; a new one after each end. */
  let next = Deferred.makeUnsafe<Takeover>()

  /** Ends the takeover (the one with `id`, when given); its waiters all see `exit`. */
  const end = (id: string | undefined, why: string, exit: Exit.Exit<void, HumanTimeout> = Exit.void) =>
    Effect.gen(function* () {
      const ending = current
      if (ending === undefined || (id !== undefined && ending.takeover.id !== id)) return false
      current = undefined
      next = Deferred.makeUnsafe<Takeover>()
      yield* Deferred.done(ending.done, exit)
      yield* Effect.logInfo(`human takeover ended: ${why}`, {
        reason: ending.takeover.reason,
        url: ending.takeover.url
      })
      return true
    })

  const start = Effect.fn("Handoff.start")(function* (reason: string) {
    const since = DateTime.formatIso(yield* DateTime.now)
    // From here to `current = …` nothing yields: two concurrent starts cannot both begin a takeover.
    if (current !== undefined) return current.takeover
    const takeover: Takeover = { id: crypto.randomUUID(), url: options.url, reason, since }
    current = { takeover, done: Deferred.makeUnsafe<void, HumanTimeout>() }
    Deferred.doneUnsafe(next, Effect.succeed(takeover))
    yield* Events.emit({ event: "human_takeover", url: takeover.url, reason })
    yield* Effect.logWarning(`a person is needed: ${reason}; open ${takeover.url}`)
    return takeover
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
