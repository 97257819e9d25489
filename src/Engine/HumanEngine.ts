/**
 * The cascade's last level: a person over VNC. The engine shows the session's page on the person's `Display`, asks
 * them through the session's `Handoff` to do a step, and waits until they are done (Takeover/).
 */
import { Effect, Layer, Option } from "effect"
import type { Connection } from "../Cdp/Connection.ts"
import * as CdpHttp from "../Cdp/Http.ts"
import * as Session from "../Cdp/Session.ts"
import { CdpClosed, NotConfigured, Timeout, Unsupported } from "../Errors/Engine.ts"
import type { SwitchyardError } from "../Errors.ts"
import { Display } from "../Takeover/Display.ts"
import { Handoff } from "../Takeover/Handoff.ts"
import { BrowserSession } from "./BrowserSession.ts"
import { type Action, type ActResult, type Capabilities, Engine, type ScreenshotOptions } from "./Engine.ts"
import type { EngineSpec } from "./EngineSpec.ts"
import * as Instruction from "./Instruction.ts"
import { requireAbsoluteUrl } from "./Navigation.ts"
import * as PageFacts from "./PageFacts.ts"
import * as Page from "./PageState.ts"

const engine = "human" as const

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
  const display = yield* Display
  const handoff = yield* Handoff
  const readTimeoutMs = options.readTimeoutMs ?? 10_000
  const maxTextChars = options.maxTextChars ?? 20_000

  if (!(yield* display.alive)) {
    return yield* new NotConfigured({
      engine,
      action: "connect",
      message: `the VNC stack on ${display.name} is not running: a person cannot see the browser`
    })
  }
  const version = yield* CdpHttp.version(session.httpEndpoint)
  if (/HeadlessChrome/.test((version as { readonly "User-Agent"?: string })["User-Agent"] ?? "")) {
    return yield* new NotConfigured({
      engine,
      action: "connect",
      message:
        "the session's browser is headless, so a person cannot see it over VNC: run it headed on the VNC display (Vnc.layerLocalChromium)"
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

  const onPage = <A>(action: string, f: (cdp: Connection, sessionId: string) => Effect.Effect<A, CdpClosed>) =>
    bounded(
      action,
      Session.withTarget(session.wsEndpoint, session.targetId, f).pipe(
        Effect.mapError((e) => new CdpClosed({ engine, action, message: `${action}: ${e.message}` }))
      )
    )

  // The page, not the address bar, takes what the person types first: a window that opened on about:blank keeps the
  // keyboard in its address bar until its tab is brought to the front.
  const toFront = onPage("bring the page to front", (cdp, id) => cdp.send("Page.bringToFront", {}, id)).pipe(
    Effect.ignore
  )
  yield* toFront

  /** Shows the session's page to the person, asks them, and waits until they are done (or time runs out). */
  const ask = (reason: string) =>
    Effect.gen(function* () {
      yield* toFront
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
      .send(
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

    act: Effect.fn("HumanEngine.act")(function* (input: Instruction.Said | Action) {
      const reason = Instruction.isSaid(input) ? input.text : describeAction(input)
      yield* ask(reason)
      return {
        success: true,
        description: `a person did: ${reason}`,
        ...(Instruction.isSaid(input) ? {} : { action: input })
      } satisfies ActResult
    }),

    extract: Effect.fn("HumanEngine.extract")(function* (_instruction: string, jsonSchema?: unknown) {
      return yield* PageFacts.extracted(yield* readFacts, jsonSchema, { engine, name: "the human engine" })
    }),

    observe: (instruction: Instruction.Said) =>
      Effect.fail(
        new Unsupported({
          engine,
          action: `observe ${instruction.text}`,
          message: "the human engine cannot list page elements: observe with an automation engine"
        })
      ),

    screenshot: Effect.fn("HumanEngine.screenshot")(function* (options?: ScreenshotOptions) {
      const shot = yield* onPage("screenshot", (cdp, id) =>
        Effect.gen(function* () {
          if (!options?.fullPage) return yield* cdp.send("Page.captureScreenshot", { format: "png" }, id)
          const { cssContentSize: size } = yield* cdp.send("Page.getLayoutMetrics", {}, id)
          return yield* cdp.send(
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
        if (!(yield* display.alive)) return false
        return yield* CdpHttp.version(session.httpEndpoint).pipe(
          Effect.as(true),
          Effect.orElseSucceed(() => false)
        )
      })
  })
})

export const layer = (
  options: HumanEngineOptions = {}
): Layer.Layer<Engine, SwitchyardError, BrowserSession | Display | Handoff> => Layer.effect(Engine, make(options))

/** The cascade's `human` level for this session: the engine with the session's Display and Handoff provided. */
export const spec = (options: HumanEngineOptions = {}): Effect.Effect<EngineSpec, never, Display | Handoff> =>
  Effect.gen(function* () {
    const services = Layer.mergeAll(Layer.succeed(Display, yield* Display), Layer.succeed(Handoff, yield* Handoff))
    return { id: { kind: engine }, capabilities, layer: layer(options).pipe(Layer.provide(services)) }
  })
