/**
 * Per-session limits a hostile page cannot run past, watched on the Sandbox's kept CDP connection: a page that opens
 * page after page (popups) has every page beyond `maxPages` closed as it appears, and a page that navigates without
 * end (a `location.reload()` loop) is stopped after `maxNavigationsPerCall` main-frame loads in one call, or at the
 * start of the next call when it is still going (a navigate that answered on one of its loads). Either ends the call
 * with `limit_exceeded`; memory is capped by Chromium's V8 heap flag (LocalChromium), where
 * running out crashes only that page's renderer. Owns, in one Ref, the pages open, the loads counted and the calls
 * running; BrowserLife makes it and watches every connection of its page link with it.
 */
import { Clock, Effect, PubSub, Ref, type Scope } from "effect"
import type * as Connection from "../Cdp/Connection.ts"
import type { PageRun } from "../Cdp/Session.ts"
import { LimitExceeded } from "../Errors/Page.ts"
import { defaultPageHeapMb } from "./Provider/LocalChromium/Process.ts"

export interface LimitsOptions {
  /** Page targets (tabs and popups) the browser may have open at once; default 20. */
  readonly maxPages?: number
  /** Main-frame loads of the session's page within one call; default 40. */
  readonly maxNavigationsPerCall?: number
}

export const defaults = {
  maxPages: 20,
  maxNavigationsPerCall: 40,
  /** The renderer's JavaScript heap in MiB (a local Chromium's --max-old-space-size, LocalChromium/Process.ts). */
  pageHeapMb: defaultPageHeapMb
}

export interface Limits {
  /** Watches a (new) kept connection for its life: its target and page events. */
  readonly watch: (cdp: Connection.Connection) => Effect.Effect<void, never, Scope.Scope>
  /** Fails when the page runs past a limit from now on; never completes otherwise. Raced against each call. */
  readonly breach: Effect.Effect<never, LimitExceeded>
}

/**
 * The breach, raced against a call on `page`: a reload loop is left for about:blank so it stops. With its scripts off
 * the page cannot start the next reload while it is being left (a reload already under way can otherwise win over the
 * navigation away).
 */
export const breachOn = (limits: Limits, page: PageRun): Effect.Effect<never, LimitExceeded> =>
  limits.breach.pipe(
    Effect.tapError((breach) =>
      breach.limit === "navigations"
        ? page((cdp, sessionId) =>
            cdp
              .send("Emulation.setScriptExecutionDisabled", { value: true }, sessionId)
              .pipe(
                Effect.andThen(cdp.send("Page.navigate", { url: "about:blank" }, sessionId)),
                Effect.ensuring(
                  cdp.send("Emulation.setScriptExecutionDisabled", { value: false }, sessionId).pipe(Effect.ignore)
                )
              )
          ).pipe(Effect.timeout(5_000), Effect.ignore)
        : Effect.void
    )
  )

/** What the limits keep of the session's pages: open pages, loads between calls, calls running, loads in a call. */
interface Watched {
  /** The page targets open now. */
  readonly pages: ReadonlySet<string>
  /** When the page loaded by itself between calls (no call running), to tell a loop still going when the next begins. */
  readonly loads: ReadonlyArray<number>
  /** Calls running now (each raced against `breach`). */
  readonly calls: number
  /** Main-frame loads since the latest call began. */
  readonly navigations: number
}

export const make = Effect.fnUntraced(function* (options: LimitsOptions = {}) {
  const maxPages = options.maxPages ?? defaults.maxPages
  const maxNavigations = options.maxNavigationsPerCall ?? defaults.maxNavigationsPerCall
  const breaches = yield* PubSub.unbounded<LimitExceeded>()
  const state = yield* Ref.make<Watched>({ pages: new Set(), loads: [], calls: 0, navigations: 0 })
  const loopWindowMs = 10_000

  /** A page target opened: answers whether it is one too many (it is not counted then). */
  const opened = (targetId: string) =>
    Ref.modify(state, (s): [boolean, Watched] => {
      if (s.pages.has(targetId)) return [false, s]
      if (s.pages.size >= maxPages) return [true, s]
      return [false, { ...s, pages: new Set(s.pages).add(targetId) }]
    })

  /** A main-frame load of a page: answers how many loads the running call has seen. */
  const loaded = (now: number) =>
    Ref.modify(state, (s): [number, Watched] => {
      const navigations = s.navigations + 1
      // Only loads between calls count toward a loop still going; a call stopped for a loop does not hold it against
      // the next one.
      const loads =
        navigations === maxNavigations + 1
          ? []
          : s.calls === 0
            ? [...s.loads, now].slice(-(maxNavigations + 1))
            : s.loads
      return [navigations, { ...s, navigations, loads }]
    })

  const watch = (cdp: Connection.Connection) =>
    Effect.gen(function* () {
      yield* Ref.update(state, (s) => ({ ...s, pages: new Set<string>() }))
      const events = yield* cdp.events
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.gen(function* () {
            const event = yield* PubSub.take(events)
            if (event.method === "Target.targetCreated" && event.params.targetInfo.type === "page") {
              const { targetId } = event.params.targetInfo
              if (!(yield* opened(targetId))) return
              yield* cdp.send("Target.closeTarget", { targetId }).pipe(Effect.ignore, Effect.forkScoped)
              yield* PubSub.publish(
                breaches,
                new LimitExceeded({
                  limit: "pages",
                  message: `the page opened more than ${maxPages} pages (tabs or popups) at once; the extra ones were closed`
                })
              )
            } else if (event.method === "Target.targetDestroyed") {
              const { targetId } = event.params
              yield* Ref.update(state, (s) => {
                const pages = new Set(s.pages)
                pages.delete(targetId)
                return { ...s, pages }
              })
            } else if (
              event.method === "Page.frameNavigated" &&
              event.sessionId !== undefined &&
              event.params.frame.parentId === undefined
            ) {
              const count = yield* loaded(yield* Clock.currentTimeMillis)
              if (count === maxNavigations + 1) {
                yield* PubSub.publish(
                  breaches,
                  new LimitExceeded({
                    limit: "navigations",
                    message: `the page loaded more than ${maxNavigations} times during one call (a reload or redirect loop); the call was stopped and the page left`
                  })
                )
              }
            }
          })
        )
      )
    })

  const breach: Effect.Effect<never, LimitExceeded> = Effect.scoped(
    Effect.gen(function* () {
      const subscription = yield* PubSub.subscribe(breaches)
      const { loads } = yield* Ref.updateAndGet(state, (s) => ({ ...s, navigations: 0, calls: s.calls + 1 }))
      yield* Effect.addFinalizer(() => Ref.update(state, (s) => ({ ...s, calls: s.calls - 1 })))
      // More loads than a call may make, by the page alone within seconds, the last one just now: a loop goes on.
      const now = yield* Clock.currentTimeMillis
      const first = loads[0]
      const last = loads.at(-1)
      if (loads.length > maxNavigations && first !== undefined && last !== undefined) {
        if (now - first <= loopWindowMs && now - last <= 2_000) {
          yield* Ref.update(state, (s) => ({ ...s, loads: [] }))
          return yield* new LimitExceeded({
            limit: "navigations",
            message: `the page keeps loading by itself (more than ${maxNavigations} loads in ${Math.round((last - first) / 1000)} s between calls: a reload or redirect loop); the call was stopped and the page left`
          })
        }
      }
      return yield* Effect.fail(yield* PubSub.take(subscription))
    })
  )

  return { watch, breach } satisfies Limits
})
