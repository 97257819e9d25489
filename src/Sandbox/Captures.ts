/**
 * Screenshots per attempt off the answer's path, one frame per state of the page. An attempt that may have moved the
 * page (a click, a key, a script) has its frame taken when it ends, while the answer goes out; the mask it puts on
 * typed text changes paint only, so the next call's reads and typing may overlap it; what may navigate or reads the
 * page's pixels waits until no capture runs. An attempt that changed nothing (a read), only typed, or loaded a page (a
 * navigate, which ends once the page has loaded) has its frame held: the page stays as it left it until something may
 * change it, so the frame is taken then (before a change that may move the page), after a pixel read that comes first
 * (the agent's screenshot does not wait behind it, and lends it its picture), or a moment later. A navigate and the
 * acts after it that only type share the frame taken after the last of them (what they typed is masked in it either
 * way); a choice (a select's option, a box) shares it too unless a load began while it ran, when the frame held shows
 * a page that is gone: it is dropped, not taken of the next page, and its attempts are told so. An attempt after
 * which nothing could have changed the page shares the frame kept for it and is recorded as pointing at it. `guard`
 * puts an engine's calls in that order. Owns, in one Ref, the frame being taken, the frame held, the attempts waiting
 * and the last frame. Past 400 lines: `make` is one set of transitions of that one Ref, which read each other's cases;
 * split across files they would each need the whole state anyway.
 */
import { Context, Deferred, Duration, Effect, Fiber, Layer, Option, Ref, Scope } from "effect"
import type { Action, Engine } from "../Engine/Engine.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import * as Instruction from "../Engine/Instruction.ts"
import { BrowserLife } from "./BrowserLife.ts"
import { pageOf } from "./SessionState.ts"
import * as Snapshot from "./Snapshot.ts"

/** An attempt's screenshot as it asks for one: stored as its own, or recorded as the one another attempt stored. */
export interface Keep {
  /** Stores the frame as this attempt's screenshot. */
  readonly save: (image: Uint8Array) => Effect.Effect<void>
  /** Records that this attempt's screenshot is the one `first` stored (the page had not changed in between). */
  readonly same: (first: Keep) => Effect.Effect<void>
  /** Records that this attempt keeps no screenshot, and why (the page it showed was gone before it could be taken). */
  readonly lost: (reason: string) => Effect.Effect<void>
  /** Where the stored picture is found: the attempt, its trace and the file. */
  readonly where: { readonly attemptId: string; readonly traceId: string; readonly file: string }
}

export class Captures extends Context.Service<
  Captures,
  {
    /** Takes the attempt's screenshot (now, after the one running, or held until needed), or points it at a frame
     * of the unchanged page; in the background. */
    readonly start: (keep: Keep) => Effect.Effect<void>
    /** An engine attempt begins: what changes before the next `start` was done by it. */
    readonly begin: Effect.Effect<void>
    /** The engine's use ended (an attempt, or a read no attempt stands behind, such as a replay's): a frame held may be
     * taken in the pause that follows. */
    readonly ended: Effect.Effect<void>
    /** Takes the frame held, then waits until no capture is running (each is bounded by its own limit). */
    readonly settled: Effect.Effect<void>
    /** Runs a read of the page's pixels with no mask on the page: after the capture running, with none starting
     * until it ends; a frame held is taken after it, from the picture the read took (`picture`, a PNG of the
     * viewport) where the page's typed text could be masked in it. */
    readonly pixels: <A, E>(
      read: Effect.Effect<A, E>,
      picture?: (a: A) => Uint8Array | undefined
    ) => Effect.Effect<A, E>
    /** Something may change the page (a navigate or an act begins, the page moved): a frame held is taken first, and
     * waited for; earlier frames no longer show it. */
    readonly changed: Effect.Effect<void>
    /** An act that only types, hovers, scrolls or sets files begins: a frame held stays held, for this act's frame
     * to serve too (a capture already running goes on beside it, the mask hiding what it types); earlier frames no
     * longer show the page. */
    readonly typing: Effect.Effect<void>
    /** An act that sets a control's value (a choice in a select, a box checked) begins: it may start a load, so it
     * waits for a capture running; a frame held stays held, as for typing, unless the act `left` the page. */
    readonly choosing: Effect.Effect<void>
    /** The act begun with `choosing` started a load: the frame held (the page before it) can no longer be taken, so
     * its attempts keep none and are told why; the act's own frame is taken once it ends. */
    readonly left: Effect.Effect<void>
    /** A navigation ended with its page loaded: the page rests there, as after typing, so the navigation's frame is
     * held as a read's is. */
    readonly loaded: Effect.Effect<void>
    /** The page was found elsewhere when a call ended (a redirect, a script, a navigate's new address): as `changed`,
     * except that a page resting with no frame of it asked for yet still rests, there. */
    readonly moved: Effect.Effect<void>
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
      const typed = life.unblocked(
        (live) =>
          Snapshot.typedBoxes(pageOf(live)).pipe(
            Effect.timeoutOption(2_000),
            Effect.map(Option.flatten),
            Effect.orElseSucceed(() => Option.none<Snapshot.Typed>())
          ),
        Effect.succeed(Option.none<Snapshot.Typed>())
      )
      const mask = (png: Uint8Array, boxes: Snapshot.Typed) => Snapshot.maskBoxes(png, boxes).pipe(Effect.option)
      return yield* make(shot, { typed, mask })
    })
  )
}

/** Masking a picture the agent's screenshot took, where the page's typed text shows in boxes: no capture of its own. */
export interface Reuse {
  /** Where typed text shows now; none when the page cannot tell. */
  readonly typed: Effect.Effect<Option.Option<Snapshot.Typed>>
  /** The picture with those boxes painted over; none when it could not be made. */
  readonly mask: (png: Uint8Array, typed: Snapshot.Typed) => Effect.Effect<Option.Option<Uint8Array>>
}

/** The same boxes, to a pixel's fraction: nothing moved or was typed between two reads. */
const sameTyped = (a: Snapshot.Typed, b: Snapshot.Typed) =>
  a.ratio === b.ratio &&
  !a.other &&
  !b.other &&
  a.boxes.length === b.boxes.length &&
  a.boxes.every((box, i) => box.every((n, j) => Math.abs(n - b.boxes[i]![j]!) < 0.5))

/** Why the attempts of a frame held keep no screenshot when a choice after them loaded another page. */
export const lostReason = "a choice made after this attempt loaded another page before its frame was taken"

/** How long a read's frame is held at most: past it the frame is taken in the pause before the agent's next call. */
export const holdMs = 100

/** One frame: the page's generation when it was asked for, and the attempts it serves. */
interface Frame {
  readonly generation: number
  readonly keeps: ReadonlyArray<Keep>
  /** Its image came back: no more attempts join it. */
  readonly taken: boolean
  /** A picture of the page in this state without the mask, and where typed text showed before it was taken. */
  readonly picture?: { readonly png: Uint8Array; readonly typed: Snapshot.Typed }
}

/** What the captures keep between attempts. */
interface Shots {
  /** Counts the page's possible changes: a frame of an older generation no longer shows it. */
  readonly generation: number
  /** The generation when the current engine attempt began. */
  readonly begun: number
  /** An engine attempt began and has not ended. */
  readonly busy: boolean
  /** The generation the page rests at after an act that only typed or a navigation that loaded: an attempt that ends
   * there has its frame held. */
  readonly resting: number
  /** Completes when the running loop of captures ends; none while no capture runs. */
  readonly running: Deferred.Deferred<void> | undefined
  /** The frame being taken. */
  readonly current: Frame | undefined
  /** A frame not asked for yet: attempts that changed nothing, until something needs the page. */
  readonly held: Frame | undefined
  /** Attempts that ended after the current frame was asked for: the next capture serves them. */
  readonly waiting: ReadonlyArray<Keep>
  /** Pixel reads under way: no capture starts (no mask goes on the page) until they end. */
  readonly reading: number
  readonly last: { readonly generation: number; readonly first: Keep } | undefined
}

/** The first attempt of a frame stores it; the others point at it. */
const serve = (keeps: ReadonlyArray<Keep>, image: Uint8Array) =>
  Effect.forEach(keeps, (keep, i) => (i === 0 ? keep.save(image) : keep.same(keeps[0]!)), { discard: true })

/**
 * Attempts that end while a capture runs share the next one: by the time it starts the page already shows the last
 * of them, so one frame serves them all and a burst of calls costs at most two captures.
 */
export const make = (
  shot: Effect.Effect<Option.Option<Uint8Array>>,
  reuse?: Reuse
): Effect.Effect<Captures["Service"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const hold = Duration.millis(holdMs)
    // The captures' own scope, closed after the finalizer below has let the last of them finish (finalizers run
    // last-added first): a session that closes keeps the screenshot of its last attempt.
    const scope = yield* Scope.fork(yield* Effect.scope)
    // Each decision is one atomic step on the Ref, so a start never races the loop's end: at most one capture (one
    // mask) is on the page at a time.
    const state = yield* Ref.make<Shots>({
      generation: 0,
      begun: 0,
      busy: false,
      resting: -1,
      running: undefined,
      current: undefined,
      held: undefined,
      waiting: [],
      reading: 0,
      last: undefined
    })

    /** Takes `state.current`, then the frames asked for meanwhile, until none is left; the step that finds none
     * also ends the run (`done`), so no attempt is left waiting for a capture nobody takes. */
    /** Masks of pictures under way: they no longer touch the page, so nothing waits for them but the close. */
    const masking = new Set<Fiber.Fiber<void>>()
    /** A frame's image, now (`later` false) or made off the page. From the picture already taken, masked where typed
     * text showed before it and still shows (nothing moved or was typed meanwhile), made once the page may move on;
     * else a capture. */
    const take = (
      current: Frame
    ): Effect.Effect<{ readonly image: Effect.Effect<Option.Option<Uint8Array>>; readonly later: boolean }> => {
      const captured = shot.pipe(
        Effect.withSpan("Captures.shot"),
        Effect.map((image) => ({ image: Effect.succeed(image), later: false }))
      )
      const picture = current.picture
      if (picture === undefined || reuse === undefined) return captured
      return reuse.typed.pipe(
        Effect.withSpan("Captures.typed"),
        Effect.flatMap((after) =>
          Option.isSome(after) && sameTyped(picture.typed, after.value)
            ? Effect.succeed({
                image: reuse.mask(picture.png, picture.typed).pipe(Effect.withSpan("Captures.mask")),
                later: true
              })
            : captured
        )
      )
    }
    const loop = (done: Deferred.Deferred<void>): Effect.Effect<void> =>
      Ref.get(state).pipe(
        Effect.flatMap(({ current }) =>
          current === undefined
            ? Effect.void
            : take(current).pipe(
                Effect.flatMap(({ image, later }) =>
                  // The frame's attempts as they stand when its image came back (or is sure to); no more join it.
                  Ref.modify(state, (s): [ReadonlyArray<Keep>, Shots] => {
                    const keeps = s.current?.keeps ?? current.keeps
                    return [
                      keeps,
                      {
                        ...s,
                        current: s.current === undefined ? undefined : { ...s.current, taken: true },
                        last: { generation: current.generation, first: keeps[0]! }
                      }
                    ]
                  }).pipe(
                    Effect.flatMap((keeps) => {
                      const served = Effect.flatMap(image, (made) =>
                        Option.isNone(made) ? Effect.void : serve(keeps, made.value)
                      )
                      if (!later) return served
                      return Effect.forkIn(served, scope).pipe(
                        Effect.tap((fiber) =>
                          Effect.sync(() => {
                            masking.add(fiber)
                            fiber.addObserver(() => masking.delete(fiber))
                          })
                        ),
                        Effect.asVoid
                      )
                    })
                  )
                ),
                // The attempts that ended meanwhile: a frame of the page as it is now.
                Effect.andThen(
                  Ref.modify(state, (s): [boolean, Shots] =>
                    s.waiting.length === 0
                      ? [false, { ...s, running: undefined, current: undefined }]
                      : [
                          true,
                          {
                            ...s,
                            current: { generation: s.generation, keeps: s.waiting, taken: false },
                            waiting: []
                          }
                        ]
                  )
                ),
                Effect.flatMap((more) => (more ? loop(done) : Effect.void))
              )
        )
      )

    /** Asks for a frame of the page now for `keeps` (the step on the Ref), and what then runs the capture. */
    const ask = (s: Shots, keeps: ReadonlyArray<Keep>, picture?: Frame["picture"]): [Effect.Effect<void>, Shots] => {
      if (s.running !== undefined) return [Effect.void, { ...s, waiting: [...s.waiting, ...keeps] }]
      // A pixel read is under way: the frame is held until it ends.
      if (s.reading > 0) {
        return [
          Effect.void,
          { ...s, held: { generation: s.generation, keeps: [...(s.held?.keeps ?? []), ...keeps], taken: false } }
        ]
      }
      const done = Deferred.makeUnsafe<void>()
      // Also when the run was cut short: the state is reset only if the run still owns it.
      const finish = Ref.update(state, (now) =>
        now.running === done ? { ...now, running: undefined, current: undefined, waiting: [] } : now
      ).pipe(Effect.andThen(Deferred.succeed(done, undefined)))
      return [
        Effect.forkIn(loop(done).pipe(Effect.ensuring(finish)), scope).pipe(Effect.asVoid),
        {
          ...s,
          running: done,
          current: { generation: s.generation, keeps, taken: false, ...(picture === undefined ? {} : { picture }) }
        }
      ]
    }

    /** The step that asks for the held frame, if any. */
    const releasing = (s: Shots): [Effect.Effect<void>, Shots] =>
      s.held === undefined ? [Effect.void, s] : ask({ ...s, held: undefined }, s.held.keeps)

    const release = Ref.modify(state, releasing).pipe(Effect.flatten)
    /** Asks for the frame held of `generation` a moment later, in a pause between attempts (one under way ends by
     * joining it or asking for it; one that never ends holds it five seconds at most), unless it was asked for or
     * joined by a later one. */
    const releaseLater = (generation: number, waited = 1): Effect.Effect<void> =>
      Effect.sleep(hold).pipe(
        Effect.andThen(
          Ref.modify(state, (now): [Effect.Effect<void>, Shots] => {
            if (now.held?.generation !== generation) return [Effect.void, now]
            if (now.busy && waited < 50) return [Effect.suspend(() => releaseLater(generation, waited + 1)), now]
            return releasing(now)
          })
        ),
        Effect.flatten
      )

    const start = (keep: Keep) =>
      Ref.modify(state, (s): [Effect.Effect<void>, Shots] => {
        const { current, held, last } = s
        if (current !== undefined && !current.taken && current.generation === s.generation) {
          return [Effect.void, { ...s, current: { ...current, keeps: [...current.keeps, keep] } }]
        }
        if (last !== undefined && last.generation === s.generation) {
          return [Effect.forkIn(keep.same(last.first), scope).pipe(Effect.asVoid), s]
        }
        if (held !== undefined && held.generation === s.generation) {
          return [Effect.void, { ...s, held: { ...held, keeps: [...held.keeps, keep] } }]
        }
        // Nothing changed during this attempt, or it only typed, or it loaded a page: the page stays as it left it
        // until something may change it; also while an earlier attempt's frame is being taken. A frame still held when
        // this attempt only typed was held for a load or acts that only typed or read since: one frame, taken after the
        // last of them, serves them all (their typed text is masked in it either way).
        const resting = s.begun === s.generation || s.resting === s.generation
        // A frame of the page as it rests is already asked for, after the capture running: it serves this one too.
        if (resting && s.waiting.length > 0) return [Effect.void, { ...s, waiting: [...s.waiting, keep] }]
        if (resting) {
          const frame: Frame = { generation: s.generation, keeps: [...(held?.keeps ?? []), keep], taken: false }
          return [Effect.forkIn(releaseLater(frame.generation), scope).pipe(Effect.asVoid), { ...s, held: frame }]
        }
        return ask(s, [keep])
      }).pipe(Effect.flatten)

    /** Waits until no capture is running. */
    const unmasked: Effect.Effect<void> = Ref.get(state).pipe(
      Effect.flatMap((s) =>
        s.running === undefined ? Effect.void : Deferred.await(s.running).pipe(Effect.withSpan("Captures.settled"))
      )
    )
    const settled = Effect.andThen(release, unmasked)
    /** Counts a pixel read in once no capture runs (in one step, so none starts in between); the generation then,
     * and whether a frame of it is held. */
    const enter: Effect.Effect<{ readonly generation: number; readonly held: boolean }> = Ref.modify(
      state,
      (s): [{ readonly generation: number; readonly held: boolean } | undefined, Shots] =>
        s.running === undefined
          ? [
              { generation: s.generation, held: s.held?.generation === s.generation },
              { ...s, reading: s.reading + 1 }
            ]
          : [undefined, s]
    ).pipe(
      Effect.flatMap((entered) => (entered !== undefined ? Effect.succeed(entered) : Effect.andThen(unmasked, enter)))
    )
    /** The read ends: a frame held is taken, from its picture when the page is still the one it showed. */
    const leave = (generation: number, picture: Frame["picture"]) =>
      Ref.modify(state, (s): [Effect.Effect<void>, Shots] => {
        const next = { ...s, reading: s.reading - 1 }
        if (
          picture === undefined ||
          next.held === undefined ||
          next.held.generation !== generation ||
          next.generation !== generation ||
          next.running !== undefined ||
          next.reading > 0
        ) {
          return releasing(next)
        }
        return ask({ ...next, held: undefined }, next.held.keeps, picture)
      }).pipe(Effect.flatten)
    const pixels = <A, E>(read: Effect.Effect<A, E>, picture?: (a: A) => Uint8Array | undefined) =>
      Effect.acquireUseRelease(
        enter,
        ({ held }) =>
          // Where typed text shows before the picture is taken: a frame held may be taken from it.
          picture === undefined || reuse === undefined || !held
            ? Effect.map(read, (a) => [a, undefined] as const)
            : reuse.typed.pipe(
                Effect.flatMap((typed) =>
                  Effect.map(read, (a) => {
                    const png = picture(a)
                    return [
                      a,
                      Option.isSome(typed) && !typed.value.other && png !== undefined
                        ? { png, typed: typed.value }
                        : undefined
                    ] as const
                  })
                )
              ),
        ({ generation }, exit) => leave(generation, exit._tag === "Success" ? exit.value[1] : undefined)
      ).pipe(Effect.map(([a]) => a))
    yield* Effect.addFinalizer(() =>
      Effect.andThen(
        settled,
        Effect.suspend(() => Fiber.joinAll([...masking]))
      ).pipe(Effect.ignore)
    )
    // A frame held is asked for in the same step that moves the generation on, and the change waits for it: it shows
    // the page before. (A capture merely running is an earlier attempt's: typing may go on beside it, under the mask.)
    const changing = (s: Shots): [Effect.Effect<void>, Shots] => {
      if (s.held === undefined) return [Effect.void, { ...s, generation: s.generation + 1 }]
      const [run, next] = releasing(s)
      const taken = next.running === undefined ? Effect.void : Deferred.await(next.running)
      return [Effect.andThen(run, taken), { ...next, generation: next.generation + 1 }]
    }
    const changed = Ref.modify(state, changing).pipe(Effect.flatten)
    // Found elsewhere while it rests with no frame of it asked for yet (a navigate that loaded, whose attempt has not
    // asked): it rests where it went, and the frame, taken later, shows it there.
    const moved = Ref.modify(state, (s): [Effect.Effect<void>, Shots] =>
      s.resting === s.generation &&
      s.held === undefined &&
      s.current?.generation !== s.generation &&
      s.last?.generation !== s.generation
        ? [Effect.void, { ...s, generation: s.generation + 1, resting: s.generation + 1 }]
        : changing(s)
    ).pipe(Effect.flatten)
    // A frame held stays held: the typing act's own frame serves it too (its `start` joins it).
    const typing = Ref.update(state, (s) => ({ ...s, generation: s.generation + 1, resting: s.generation + 1 }))
    // Atomic with the look at `running`: no capture may be on the page when a load could begin.
    const choosing: Effect.Effect<void> = Ref.modify(state, (s): [Effect.Effect<void>, Shots] =>
      s.running === undefined
        ? [Effect.void, { ...s, generation: s.generation + 1, resting: s.generation + 1 }]
        : [
            Effect.andThen(
              Deferred.await(s.running),
              Effect.suspend(() => choosing)
            ),
            s
          ]
    ).pipe(Effect.flatten)
    const left = Ref.modify(state, (s): [Effect.Effect<void>, Shots] => [
      s.held === undefined
        ? Effect.void
        : Effect.forkIn(
            Effect.forEach(s.held.keeps, (keep) => keep.lost(lostReason), { discard: true }),
            scope
          ).pipe(Effect.asVoid),
      { ...s, held: undefined, generation: s.generation + 1, resting: -1 }
    ]).pipe(Effect.flatten)
    const loaded = Ref.update(state, (s) => ({ ...s, resting: s.generation }))
    const begin = Ref.update(state, (s) => ({ ...s, begun: s.generation, busy: true }))
    const ended = Ref.update(state, (s) => ({ ...s, busy: false }))
    return Captures.of({
      start: Effect.fn("Captures.start")(start),
      begin,
      ended,
      settled,
      pixels,
      changed,
      typing,
      choosing,
      left,
      loaded,
      moved
    })
  })

/** What an act may do to the page: only type, hover, scroll or set files, which leaves the document where it is
 * (typing no line break, which could send a form); set a control's value (a choice in a select, a box), which a
 * page's handler may turn into a load; or anything, as a click or a key press may. */
const reachOf = (input: Instruction.Said | Action): "typing" | "choosing" | "changing" => {
  if (Instruction.isSaid(input)) {
    // A sentence in the instruction grammar says what it does; anything else may do anything.
    const parsed = input.parsed
    if (parsed._tag === "Failure") return "changing"
    const ins = parsed.success
    if (ins.kind === "fill") return /[\r\n]/.test(ins.value) ? "changing" : "typing"
    if (ins.kind === "type") return /[\r\n]/.test(ins.text) ? "changing" : "typing"
    if (ins.kind === "hover" || ins.kind === "upload" || ins.kind === "scroll") return "typing"
    return ins.kind === "select" || ins.kind === "check" ? "choosing" : "changing"
  }
  const method = input.method.toLowerCase()
  if (method === "type") return input.arguments.some((a) => /[\r\n]/.test(String(a))) ? "changing" : "typing"
  if (["fill", "hover", "scrollintoview", "scrollto", "setinputfiles", "upload"].includes(method)) return "typing"
  return ["selectoption", "check", "uncheck", "setchecked"].includes(method) ? "choosing" : "changing"
}

/**
 * The engine as a call sees it: what may navigate (navigate, act) first waits for the attempt screenshot in flight —
 * a capture cut by a navigation would hang on its frame; what reads the page's pixels (a screenshot, any call of a
 * vision engine) waits for a mask on the page, reads, then lets a held frame be taken; reads (extract, observe, page
 * state) and acts that only type, hover, scroll or set files run beside a capture (the mask hides what they type),
 * a held one included; an act that sets a control's value waits for the capture in flight and leaves a held frame
 * held, which it drops if the page's main frame started a load meanwhile (`loads` counts them; a frame inside it
 * loading, an advert's, is not the page leaving).
 * Whatever may change the page tells the captures so, which first takes a frame held for the page before.
 */
export const guard = (
  captures: Captures["Service"],
  spec: EngineSpec,
  engine: Engine["Service"],
  loads: Effect.Effect<number>
): Effect.Effect<Engine["Service"]> => {
  const choosing = <A, E>(act: Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      yield* captures.choosing
      const before = yield* loads
      return yield* act.pipe(
        Effect.ensuring(loads.pipe(Effect.flatMap((after) => (after === before ? Effect.void : captures.left))))
      )
    })
  // A vision engine's calls may change the page without saying so: its attempt is one that changed it.
  if (spec.capabilities.vision) {
    return Effect.as(Effect.andThen(captures.begin, Effect.andThen(captures.settled, captures.changed)), engine)
  }
  return Effect.as(captures.begin, {
    ...engine,
    navigate: (url) =>
      captures.settled.pipe(
        Effect.andThen(captures.changed),
        Effect.andThen(engine.navigate(url)),
        Effect.tap(() => captures.loaded)
      ),
    act: (input) => {
      const reach = reachOf(input)
      if (reach === "choosing") return choosing(engine.act(input))
      return Effect.andThen(
        reach === "typing" ? captures.typing : Effect.andThen(captures.settled, captures.changed),
        engine.act(input)
      )
    },
    // A picture of the viewport may serve the frame held of the same page.
    screenshot: (options) =>
      captures.pixels(engine.screenshot(options), options?.fullPage === true ? undefined : (png) => png),
    // The agent's script may do anything a click may.
    ...(engine.evaluate === undefined
      ? {}
      : {
          evaluate: (expression: string, frame?: string) =>
            Effect.andThen(captures.settled, Effect.andThen(captures.changed, engine.evaluate!(expression, frame)))
        })
  })
}
