/**
 * The cascade's last level: a person over VNC. `Handoff` holds the session's takeover (whether a person has the
 * browser, since when, where to watch); the human engine asks the person to do a step and waits until they are done.
 */
import { Context, DateTime, Deferred, Effect, Exit, Layer, Option } from "effect"
import * as Events from "../Logging/Events.ts"
import { BrowserSession } from "../Sandbox/Browser.ts"
import * as Cdp from "../Sandbox/Cdp.ts"
import * as Page from "../Sandbox/PageState.ts"
import { type EngineSpec, Occupant } from "../Sandbox/Sandbox.ts"
import { Vnc } from "../Sandbox/Vnc.ts"
import { type Action, type ActResult, type Capabilities, Engine, type ScreenshotOptions } from "./Engine.ts"
import {
  CdpClosed,
  type EngineError,
  HumanInControl,
  HumanTimeout,
  NotConfigured,
  Timeout,
  Unsupported
} from "./EngineError.ts"
import { requireAbsoluteUrl } from "./Navigation.ts"
import * as PageFacts from "./PageFacts.ts"

const engine = "human" as const

// ---------------------------------------------------------------------------------------------------------------
// Handoff: the session's takeover state, shared by the engine, the Router's masking and the resume surfaces.

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
  /** Takeovers of the VNC stack's browser, at the stack's noVNC URL. */
  static readonly layer = (options: HandoffOptions = {}): Layer.Layer<Handoff, never, Vnc> =>
    Layer.effect(
      Handoff,
      Effect.gen(function* () {
        const vnc = yield* Vnc
        return yield* makeHandoff({ ...options, url: vnc.url })
      })
    )
}

export const makeHandoff = Effect.fnUntraced(function* (options: HandoffOptions & { readonly url: string }) {
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
            engine,
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
    engine,
    url: takeover.url,
    ...(action === undefined ? {} : { action }),
    message: `a person has the browser since ${takeover.since} (${takeover.reason}; they work at ${takeover.url}): automation is paused until they are done. Check browser.status to see when, or call browser.resume once they have finished`
  })

/** While a person has the browser, the Sandbox refuses automation calls with `human_in_control`, waiting ones too. */
export const occupant: Layer.Layer<Occupant, never, Handoff> = Layer.effect(
  Occupant,
  Effect.gen(function* () {
    const handoff = yield* Handoff
    return Occupant.of({
      current: handoff.active.pipe(Effect.map(Option.map((takeover): EngineError => inControl(takeover)))),
      arrival: handoff.arrival.pipe(Effect.map((takeover): EngineError => inControl(takeover)))
    })
  })
)

// ---------------------------------------------------------------------------------------------------------------
// The engine.

export interface HumanEngineOptions {
  /** How long one `act`/`navigate` waits for the person; default the Handoff's timeout. */
  readonly timeoutMs?: number
  /** Limit for a screenshot or a page read over CDP; default 10 s. */
  readonly readTimeoutMs?: number
  /** Cap on the visible text `extract` returns; default 20,000 characters. */
  readonly maxTextChars?: number
}

/**
 * A person follows plain words and concrete actions and works from what they see; `extract` reads page facts (and
 * schemas made of them) over CDP without disturbing them; there is no `observe`.
 */
export const capabilities: Capabilities = {
  instructions: "natural-language",
  actions: true,
  extract: "page-facts",
  observe: false,
  vision: true
}

const describeAction = (action: Action) =>
  [action.description || action.selector, `(${action.method}${action.arguments.map((a) => ` "${a}"`).join("")})`]
    .filter((s) => s !== "")
    .join(" ")

export const make = Effect.fn("HumanEngine.make")(function* (options: HumanEngineOptions = {}) {
  const session = yield* BrowserSession
  const vnc = yield* Vnc
  const handoff = yield* Handoff
  const readTimeoutMs = options.readTimeoutMs ?? 10_000
  const maxTextChars = options.maxTextChars ?? 20_000

  if (!(yield* vnc.alive)) {
    return yield* new NotConfigured({
      engine,
      action: "connect",
      message: `the VNC stack on ${vnc.display} is not running: a person cannot see the browser`
    })
  }
  const version = yield* Cdp.version(session.httpEndpoint)
  if (/HeadlessChrome/.test((version as { readonly "User-Agent"?: string })["User-Agent"] ?? "")) {
    return yield* new NotConfigured({
      engine,
      action: "connect",
      message:
        "the session's browser is headless, so a person cannot see it over VNC: run it headed on the VNC display (Vnc.localChromium)"
    })
  }

  const bounded = <A, E>(action: string, self: Effect.Effect<A, E>) =>
    self.pipe(
      Effect.timeoutOrElse({
        duration: readTimeoutMs,
        orElse: () =>
          Effect.fail(
            new Timeout({
              engine,
              action,
              timeoutMs: readTimeoutMs,
              message: `${action} took over ${readTimeoutMs} ms`
            })
          )
      })
    )

  const onPage = <A>(action: string, f: (cdp: Cdp.CdpConnection, sessionId: string) => Effect.Effect<A, CdpClosed>) =>
    bounded(
      action,
      Cdp.withTarget(session.wsEndpoint, session.targetId, f).pipe(
        Effect.mapError((e) => new CdpClosed({ engine, action, message: `${action}: ${e.message}` }))
      )
    )

  /** Shows the session's page to the person, asks them, and waits until they are done (or time runs out). */
  const ask = (reason: string) =>
    Effect.gen(function* () {
      yield* onPage("bring the page to front", (cdp, id) => cdp.send("Page.bringToFront", {}, id)).pipe(Effect.ignore)
      // A takeover this call started ends with it (a cascade timeout interrupts it); one started before stays.
      // Uninterruptible until the wait, so an interruption cannot fall between starting and being ready to end it.
      return yield* Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const before = yield* handoff.active
          const takeover = yield* handoff.start(reason)
          const ours = Option.isNone(before) || before.value.id !== takeover.id
          yield* restore(
            handoff.await(options.timeoutMs === undefined ? undefined : { timeoutMs: options.timeoutMs })
          ).pipe(Effect.onInterrupt(() => (ours ? handoff.resume(takeover.id) : Effect.void)))
          return takeover
        })
      )
    })

  const readFacts = onPage("extract", (cdp, id) =>
    cdp
      .send<{ result: { value?: PageFacts.RawFacts }; exceptionDetails?: { text: string } }>(
        "Runtime.evaluate",
        { expression: `(${PageFacts.collectFacts.toString()})(${maxTextChars})`, returnByValue: true },
        id
      )
      .pipe(
        Effect.flatMap((r) =>
          r.exceptionDetails || r.result.value === undefined
            ? Effect.fail(
                new CdpClosed({ message: `reading the page failed: ${r.exceptionDetails?.text ?? "no value"}` })
              )
            : Effect.succeed(r.result.value)
        )
      )
  )

  return Engine.of({
    kind: engine,
    capabilities,

    navigate: Effect.fn("HumanEngine.navigate")(function* (url: string) {
      yield* requireAbsoluteUrl(engine, `navigate ${url}`, url)
      yield* ask(`open ${url}`)
      const state = yield* Page.capture(session)
      return { url: state.url, title: state.title, status: null }
    }),

    act: Effect.fn("HumanEngine.act")(function* (input: string | Action) {
      const reason = typeof input === "string" ? input : describeAction(input)
      yield* ask(reason)
      return {
        success: true,
        description: `a person did: ${reason}`,
        ...(typeof input === "string" ? {} : { action: input })
      } satisfies ActResult
    }),

    extract: Effect.fn("HumanEngine.extract")(function* (_instruction: string, jsonSchema?: unknown) {
      const raw = yield* readFacts
      if (jsonSchema === undefined) return PageFacts.toFacts(raw)
      return yield* Effect.fromResult(PageFacts.fillSchema(raw, jsonSchema)).pipe(
        Effect.mapError(
          (e) =>
            new Unsupported({
              engine,
              action: "extract",
              message: e.message.replace("the playwright engine", "the human engine")
            })
        )
      )
    }),

    observe: (instruction: string) =>
      Effect.fail(
        new Unsupported({
          engine,
          action: `observe ${instruction}`,
          message: "the human engine cannot list page elements: observe with an automation engine"
        })
      ),

    screenshot: Effect.fn("HumanEngine.screenshot")(function* (options?: ScreenshotOptions) {
      const shot = yield* onPage("screenshot", (cdp, id) =>
        Effect.gen(function* () {
          if (!options?.fullPage)
            return yield* cdp.send<{ data: string }>("Page.captureScreenshot", { format: "png" }, id)
          const { cssContentSize: size } = yield* cdp.send<{ cssContentSize: { width: number; height: number } }>(
            "Page.getLayoutMetrics",
            {},
            id
          )
          return yield* cdp.send<{ data: string }>(
            "Page.captureScreenshot",
            {
              format: "png",
              captureBeyondViewport: true,
              clip: { x: 0, y: 0, width: size.width, height: size.height, scale: 1 }
            },
            id
          )
        })
      )
      return new Uint8Array(Buffer.from(shot.data, "base64"))
    }),

    pageState: Effect.fn("HumanEngine.pageState")(function* () {
      return yield* bounded("pageState", Page.capture(session))
    }),

    connected: () =>
      Effect.gen(function* () {
        if (!(yield* vnc.alive)) return false
        return yield* Cdp.version(session.httpEndpoint).pipe(
          Effect.as(true),
          Effect.orElseSucceed(() => false)
        )
      })
  })
})

export const layerWith = (
  options: HumanEngineOptions = {}
): Layer.Layer<Engine, EngineError, BrowserSession | Vnc | Handoff> => Layer.effect(Engine, make(options))

export const layer = layerWith()

/** The cascade's `human` level for this session: the engine with the session's Vnc and Handoff already provided. */
export const spec = (options: HumanEngineOptions = {}): Effect.Effect<EngineSpec, never, Vnc | Handoff> =>
  Effect.gen(function* () {
    const services = Layer.mergeAll(Layer.succeed(Vnc, yield* Vnc), Layer.succeed(Handoff, yield* Handoff))
    return { kind: engine, capabilities, layer: layerWith(options).pipe(Layer.provide(services)) }
  })
