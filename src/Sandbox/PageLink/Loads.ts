/**
 * The loads of the session's pages, as their frame events tell them: which frames are still loading and what each
 * main frame last committed, so a call can wait out a load it started without a round trip to the browser.
 */
import { Deferred, Effect, Ref } from "effect"
import type * as Protocol from "../../Cdp/Protocol.ts"

/** A page's main frame as its last committed navigation left it. */
export interface MainFrame {
  readonly commits: number
  /** Loads the main frame started, committed or not (its id is the page's target id): a navigation begun. */
  readonly loads?: number
  /** Set when the committed document is the browser's error page for this URL. */
  readonly unreachable?: string
}

export interface Loads {
  /** Follows one event of the page `targetId` (undefined for the browser's own events). */
  readonly observe: (event: Protocol.Event, targetId: string | undefined) => Effect.Effect<void>
  readonly mainFrame: (targetId: string) => Effect.Effect<MainFrame>
  readonly mark: Effect.Effect<readonly [started: number, committed: number]>
  readonly loaded: (
    targetId: string,
    mark: readonly [started: number, committed: number],
    maxMs: number
  ) => Effect.Effect<"none" | "committed" | "no_document">
}

export const make = Effect.gen(function* () {
  /** targetId → the frames of that page still loading. */
  const loading = yield* Ref.make<ReadonlyMap<string, ReadonlySet<string>>>(new Map())
  const mainFrames = yield* Ref.make<ReadonlyMap<string, MainFrame>>(new Map())
  const loadsStarted = yield* Ref.make(0)
  const loadsCommitted = yield* Ref.make(0)
  /** Completed (and replaced) when a frame stops loading: a wait for the loads to end wakes on the event itself. */
  const stopped = yield* Ref.make(yield* Deferred.make<void>())
  const frames = (targetId: string, f: (loading: ReadonlySet<string>) => ReadonlySet<string>) =>
    Ref.update(loading, (m) => new Map(m).set(targetId, f(m.get(targetId) ?? new Set())))
  const idle = (targetId: string) => Ref.get(loading).pipe(Effect.map((m) => (m.get(targetId)?.size ?? 0) === 0))

  return {
    observe: (event, targetId) =>
      Effect.gen(function* () {
        if (targetId !== undefined && event.method === "Page.frameStartedLoading") {
          const { frameId } = event.params
          yield* frames(targetId, (f) => new Set(f).add(frameId))
          yield* Ref.update(loadsStarted, (n) => n + 1)
          if (frameId === targetId) {
            yield* Ref.update(mainFrames, (m) => {
              const now = m.get(targetId) ?? { commits: 0 }
              return new Map(m).set(targetId, { ...now, loads: (now.loads ?? 0) + 1 })
            })
          }
        }
        if (event.method === "Page.frameNavigated") {
          yield* Ref.update(loadsCommitted, (n) => n + 1)
          const { frame } = event.params
          if (targetId !== undefined && frame.parentId === undefined) {
            yield* Ref.update(mainFrames, (m) =>
              new Map(m).set(targetId, {
                commits: (m.get(targetId)?.commits ?? 0) + 1,
                loads: m.get(targetId)?.loads ?? 0,
                ...(frame.unreachableUrl ? { unreachable: frame.unreachableUrl } : {})
              })
            )
          }
        }
        if (targetId !== undefined && event.method === "Page.frameStoppedLoading") {
          const { frameId } = event.params
          yield* frames(targetId, (f) => new Set([...f].filter((id) => id !== frameId)))
          const next = yield* Deferred.make<void>()
          yield* Deferred.succeed(yield* Ref.getAndSet(stopped, next), undefined)
        }
      }),
    mainFrame: (targetId) => Ref.get(mainFrames).pipe(Effect.map((m) => m.get(targetId) ?? { commits: 0 })),
    mark: Effect.all([Ref.get(loadsStarted), Ref.get(loadsCommitted)]),
    loaded: (targetId, [started, committed], maxMs) =>
      Effect.gen(function* () {
        if ((yield* Ref.get(loadsStarted)) === started) return "none" as const
        // The signal is taken before the look, so a frame that stops between the two still wakes the wait.
        const untilIdle = Effect.gen(function* () {
          while (true) {
            const signal = yield* Ref.get(stopped)
            if (yield* idle(targetId)) return
            yield* Deferred.await(signal)
          }
        })
        yield* untilIdle.pipe(Effect.timeoutOption(maxMs))
        // A load that ended without a new document was stopped, or its response was a download.
        return (yield* Ref.get(loadsCommitted)) === committed ? ("no_document" as const) : ("committed" as const)
      })
  } satisfies Loads
})
