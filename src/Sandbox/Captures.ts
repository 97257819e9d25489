/**
 * Screenshots per attempt off the answer's path: a capture starts when its attempt ends and finishes while the
 * answer goes out. The mask it puts on typed text changes paint only (no layout, no values), so the next call's reads
 * and typing may overlap it; what may navigate or reads the page's pixels waits until no capture runs (`settled`).
 *
 * An attempt after which nothing could have changed the page (a read: no navigate or act began since the frame was
 * asked for, and the page is at the same address) shares that frame instead of asking for another: it shows the page
 * as the attempt left it. `guard` puts an engine's calls in that order. Owns, in one Ref, the capture running, the
 * attempts waiting for the next one and the last frame.
 */
import { Context, Deferred, Effect, Layer, Option, Ref, Scope } from "effect"
import type { Action, Engine } from "../Engine/Engine.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as Instruction from "../Engine/Instruction.ts"
import { BrowserLife } from "./BrowserLife.ts"
import { pageOf } from "./SessionState.ts"
import * as Snapshot from "./Snapshot.ts"

export class Captures extends Context.Service<
  Captures,
  {
    /** Takes a screenshot now, right after the one running, or shares a frame of the unchanged page; hands it to
     * `save` in the background. */
    readonly start: (save: (image: Uint8Array) => Effect.Effect<void>) => Effect.Effect<void>
    /** Waits until no capture is running (each is bounded by its own limit). */
    readonly settled: Effect.Effect<void>
    /** Something may change the page (a navigate or an act begins, the page moved): earlier frames no longer show it. */
    readonly changed: Effect.Effect<void>
  }
>()("switchyard/Sandbox/Captures") {
  /** Masked screenshots of the session's page over the kept connection, whatever engine is connected. */
  static readonly layer = Layer.effect(
    Captures,
    Effect.gen(function* () {
      const life = yield* BrowserLife
      // A page behind a dialog, crashed or closed gives no frame: the attempt is saved without one.
      const shot = life.unblocked(
        (live) =>
          Snapshot.screenshot(pageOf(live)).pipe(
            Effect.timeoutOption(5_000),
            Effect.orElseSucceed(() => Option.none<Uint8Array>())
          ),
        Effect.succeed(Option.none<Uint8Array>())
      )
      return yield* make(shot)
    })
  )
}

type Save = (image: Uint8Array) => Effect.Effect<void>

/** One frame: the page's generation when it was asked for, and the attempts it serves. */
interface Frame {
  readonly generation: number
  readonly saves: ReadonlyArray<Save>
  /** Its image came back: no more attempts join it. */
  readonly taken: boolean
}

/** What the captures keep between attempts. */
interface Shots {
  /** Counts the page's possible changes: a frame of an older generation no longer shows it. */
  readonly generation: number
  /** Completes when the running loop of captures ends; none while no capture runs. */
  readonly running: Deferred.Deferred<void> | undefined
  /** The frame being taken. */
  readonly current: Frame | undefined
  /** Attempts that ended after the current frame was asked for: the next capture serves them. */
  readonly waiting: ReadonlyArray<Save>
  readonly last: { readonly generation: number; readonly image: Uint8Array } | undefined
}

/**
 * Attempts that end while a capture runs share the next one: by the time it starts the page already shows the last
 * of them, so one frame serves them all and a burst of calls costs at most two captures.
 */
export const make = (
  shot: Effect.Effect<Option.Option<Uint8Array>>
): Effect.Effect<Captures["Service"], never, Scope.Scope> =>
  Effect.gen(function* () {
    // The captures' own scope, closed after the finalizer below has let the last of them finish (finalizers run
    // last-added first): a session that closes keeps the screenshot of its last attempt.
    const scope = yield* Scope.fork(yield* Effect.scope)
    yield* Effect.addFinalizer(() => settled)
    // Each decision is one atomic step on the Ref, so a start never races the loop's end: at most one capture (one
    // mask) is on the page at a time.
    const state = yield* Ref.make<Shots>({
      generation: 0,
      running: undefined,
      current: undefined,
      waiting: [],
      last: undefined
    })

    const loop = (saves: ReadonlyArray<Save>): Effect.Effect<void> =>
      Ref.modify(state, (s): [number, Shots] => [
        s.generation,
        { ...s, current: { generation: s.generation, saves, taken: false } }
      ]).pipe(
        Effect.flatMap((generation) =>
          shot.pipe(
            Effect.flatMap((image) =>
              // The frame's attempts as they stand when its image came back; no more join it.
              Ref.modify(state, (s): [ReadonlyArray<Save>, Shots] => [
                s.current?.saves ?? saves,
                {
                  ...s,
                  current: s.current === undefined ? undefined : { ...s.current, taken: true },
                  last: Option.isSome(image) ? { generation, image: image.value } : s.last
                }
              ]).pipe(
                Effect.flatMap((served) =>
                  Option.isNone(image)
                    ? Effect.void
                    : Effect.forEach(served, (save) => save(image.value), { discard: true })
                )
              )
            )
          )
        ),
        Effect.andThen(Ref.modify(state, (s): [ReadonlyArray<Save>, Shots] => [s.waiting, { ...s, waiting: [] }])),
        Effect.flatMap((next) => (next.length > 0 ? loop(next) : Effect.void))
      )

    const start = (save: Save) =>
      Ref.modify(state, (s): [Effect.Effect<void>, Shots] => {
        const { current, last } = s
        if (current !== undefined && !current.taken && current.generation === s.generation) {
          return [Effect.void, { ...s, current: { ...current, saves: [...current.saves, save] } }]
        }
        if (last !== undefined && last.generation === s.generation) {
          return [Effect.forkIn(save(last.image), scope).pipe(Effect.asVoid), s]
        }
        if (s.running !== undefined) return [Effect.void, { ...s, waiting: [...s.waiting, save] }]
        const done = Deferred.makeUnsafe<void>()
        const finish = Ref.update(state, (now) => ({
          ...now,
          running: undefined,
          current: undefined,
          waiting: []
        })).pipe(Effect.andThen(Deferred.succeed(done, undefined)))
        return [
          Effect.forkIn(loop([save]).pipe(Effect.ensuring(finish)), scope).pipe(Effect.asVoid),
          { ...s, running: done }
        ]
      }).pipe(Effect.flatten)

    const settled: Effect.Effect<void> = Ref.get(state).pipe(
      Effect.flatMap((s) => (s.running === undefined ? Effect.void : Deferred.await(s.running)))
    )
    const changed = Ref.update(state, (s) => ({ ...s, generation: s.generation + 1 }))
    return Captures.of({ start: Effect.fn("Captures.start")(start), settled, changed })
  })

/** Acts that only type, hover, scroll or set files: they leave the document where it is (typing no line break, which
 * could send a form). A click, a key press, a choice in a select or a box may start a navigation. */
const staysOnPage = (input: Instruction.Said | Action) => {
  if (Instruction.isSaid(input)) {
    // A sentence in the instruction grammar says what it does; anything else may do anything.
    const parsed = input.parsed
    if (parsed._tag === "Failure") return false
    const ins = parsed.success
    if (ins.kind === "fill") return !/[\r\n]/.test(ins.value)
    if (ins.kind === "type") return !/[\r\n]/.test(ins.text)
    return ins.kind === "hover" || ins.kind === "upload" || ins.kind === "scroll"
  }
  const method = input.method.toLowerCase()
  if (method === "type") return !input.arguments.some((a) => /[\r\n]/.test(String(a)))
  return ["fill", "hover", "scrollintoview", "scrollto", "setinputfiles", "upload"].includes(method)
}

/**
 * The engine as a call sees it: what may navigate (navigate, act) or reads the page's pixels (a screenshot, any call
 * of a vision engine) first waits for the attempt screenshot in flight — a capture cut by a navigation would hang
 * on its frame; reads (extract, observe, page state) and acts that only type, hover, scroll or set files run beside
 * it (the mask hides what they type). Whatever may change the page tells the captures so.
 */
export const guard = (
  captures: Captures["Service"],
  spec: EngineSpec,
  engine: Engine["Service"]
): Effect.Effect<Engine["Service"]> => {
  if (spec.capabilities.vision) return Effect.as(Effect.andThen(captures.settled, captures.changed), engine)
  return Effect.succeed({
    ...engine,
    navigate: (url) => Effect.andThen(captures.settled, Effect.andThen(captures.changed, engine.navigate(url))),
    act: (input) =>
      Effect.andThen(
        staysOnPage(input) ? captures.changed : Effect.andThen(captures.settled, captures.changed),
        engine.act(input)
      ),
    screenshot: (options) => Effect.andThen(captures.settled, engine.screenshot(options)),
    // The agent's script may do anything a click may.
    ...(engine.evaluate === undefined
      ? {}
      : {
          evaluate: (expression: string, frame?: string) =>
            Effect.andThen(captures.settled, Effect.andThen(captures.changed, engine.evaluate!(expression, frame)))
        })
  })
}
