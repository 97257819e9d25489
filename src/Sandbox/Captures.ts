/**
 * Screenshots per attempt off the answer's path: a capture starts when its attempt ends and finishes while the
 * answer goes out. The mask it puts on typed text changes paint only (no layout, no values), so the next call's reads
 * and typing may overlap it; what may navigate or reads the page's pixels waits until no capture runs (`settled`).
 *
 * An attempt after which nothing could have changed the page (a read: no navigate or act began since the frame was
 * asked for, and the page is at the same address) shares that frame instead of asking for another: it shows the page
 * as the attempt left it. `guard` puts an engine's calls in that order.
 */
import { Deferred, Effect, Option, Scope } from "effect"
import type { Action, Engine } from "../Engine/Engine.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as Instruction from "../Engine/Instruction.ts"

export interface Captures {
  /** Takes a screenshot now, right after the one running, or shares a frame of the unchanged page; hands it to
   * `save` in the background. */
  readonly start: (save: (image: Uint8Array) => Effect.Effect<void>) => Effect.Effect<void>
  /** Waits until no capture is running (each is bounded by its own limit). */
  readonly settled: Effect.Effect<void>
  /** Something may change the page (a navigate or an act begins, the page moved): earlier frames no longer show it. */
  readonly changed: Effect.Effect<void>
}

type Save = (image: Uint8Array) => Effect.Effect<void>

/** One frame: the page's generation when it was asked for, and the attempts it serves. */
interface Frame {
  readonly generation: number
  readonly saves: Array<Save>
  /** Its image came back: no more attempts join it. */
  taken: boolean
}

/**
 * Attempts that end while a capture runs share the next one: by the time it starts the page already shows the last
 * of them, so one frame serves them all and a burst of calls costs at most two captures.
 */
export const make = (shot: Effect.Effect<Option.Option<Uint8Array>>): Effect.Effect<Captures, never, Scope.Scope> =>
  Effect.gen(function* () {
    // The captures' own scope, closed after the finalizer below has let the last of them finish (finalizers run
    // last-added first): a session that closes keeps the screenshot of its last attempt.
    const scope = yield* Scope.fork(yield* Effect.scope)
    yield* Effect.addFinalizer(() => settled)
    // Read and written only in synchronous steps, so a start never races the loop's end: at most one capture (one
    // mask) is on the page at a time.
    let generation = 0
    let running: Deferred.Deferred<void> | undefined
    let current: Frame | undefined
    let waiting: Array<Save> = []
    let last: { readonly generation: number; readonly image: Uint8Array } | undefined

    const loop = (saves: Array<Save>): Effect.Effect<void> =>
      Effect.suspend(() => {
        const frame: Frame = { generation, saves, taken: false }
        current = frame
        return shot.pipe(
          Effect.flatMap((image) => {
            frame.taken = true
            if (Option.isNone(image)) return Effect.void
            last = { generation: frame.generation, image: image.value }
            return Effect.forEach(frame.saves, (save) => save(image.value), { discard: true })
          }),
          Effect.andThen(
            Effect.suspend(() => {
              const next = waiting
              waiting = []
              return next.length > 0 ? loop(next) : Effect.void
            })
          )
        )
      })

    const start = (save: Save) =>
      Effect.suspend(() => {
        if (current !== undefined && !current.taken && current.generation === generation) {
          current.saves.push(save)
          return Effect.void
        }
        if (last !== undefined && last.generation === generation) {
          return Effect.forkIn(save(last.image), scope).pipe(Effect.asVoid)
        }
        if (running !== undefined) {
          waiting.push(save)
          return Effect.void
        }
        const done = Deferred.makeUnsafe<void>()
        running = done
        const finish = Effect.sync(() => {
          running = undefined
          current = undefined
          waiting = []
        }).pipe(Effect.andThen(Deferred.succeed(done, undefined)))
        return Effect.forkIn(loop([save]).pipe(Effect.ensuring(finish)), scope).pipe(Effect.asVoid)
      })

    const settled: Effect.Effect<void> = Effect.suspend(() =>
      running === undefined ? Effect.void : Deferred.await(running)
    )
    const changed = Effect.sync(() => {
      generation++
    })
    return { start, settled, changed }
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
  captures: Captures,
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
