/**
 * What happened on the session's pages that no answer has reported yet (tabs opened, dialogs answered, a page
 * restored, downloads): noted by the parts as it happens, drained by the next answer.
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { PageEvent } from "./PageEvent.ts"

export class PageEvents extends Context.Service<
  PageEvents,
  {
    /** Keeps `events` for the next answer. */
    readonly note: (events: ReadonlyArray<PageEvent>) => Effect.Effect<void>
    /** What was noted since the last drain, in order; the list starts empty again. */
    readonly drain: Effect.Effect<ReadonlyArray<PageEvent>>
  }
>()("switchyard/Sandbox/PageEvents") {
  static readonly layer = Layer.effect(
    PageEvents,
    Effect.gen(function* () {
      const unreported = yield* Ref.make<ReadonlyArray<PageEvent>>([])
      return PageEvents.of({
        note: Effect.fn("PageEvents.note")(function* (events: ReadonlyArray<PageEvent>) {
          if (events.length > 0) yield* Ref.update(unreported, (all) => [...all, ...events])
        }),
        drain: Ref.getAndSet(unreported, []).pipe(Effect.withSpan("PageEvents.drain"))
      })
    })
  )
}
