/**
 * File choosers answered for a call: while a call that named files runs, a chooser the page opens gets them, and the
 * answer says how many choosers did.
 */
import { Effect, Ref } from "effect"
import type * as CdpConnection from "../../Cdp/Connection.ts"
import type * as Protocol from "../../Cdp/Protocol.ts"
import type { CdpClosed } from "../../Errors/Engine.ts"
import type * as PageEvent from "../PageEvent.ts"

export interface FileChooser {
  /** Answers a chooser the page opened, when a call armed files. */
  readonly opened: (
    cdp: CdpConnection.Connection,
    event: Extract<Protocol.Event, { method: "Page.fileChooserOpened" }>
  ) => Effect.Effect<void>
  /** Runs `self` with `files` armed; `intercept` turns the page's choosers over to the link and back. */
  readonly choose: <A, E>(
    intercept: (enabled: boolean) => Effect.Effect<unknown, CdpClosed>,
    files: ReadonlyArray<string>,
    self: Effect.Effect<A, E>
  ) => Effect.Effect<readonly [A, number], E | CdpClosed>
}

export const make = (note: (event: PageEvent.PageEvent) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    /** Files a file chooser is answered with while a call that named them runs, and how many choosers got them. */
    const armed = yield* Ref.make<{ readonly files: ReadonlyArray<string>; chosen: number } | undefined>(undefined)

    return {
      opened: (cdp, event) =>
        Effect.gen(function* () {
          const files = yield* Ref.get(armed)
          const { backendNodeId, mode } = event.params
          if (files === undefined || backendNodeId === undefined) return
          const chosen = mode === "selectSingle" ? files.files.slice(0, 1) : files.files
          yield* cdp.send("DOM.setFileInputFiles", { files: [...chosen], backendNodeId }, event.sessionId).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                files.chosen++
              })
            ),
            Effect.tap(() =>
              note({
                event: "files_chosen",
                message: `the file chooser the page opened got ${chosen.join(", ")}${chosen.length < files.files.length ? " (it takes one file)" : ""}`,
                files: chosen
              })
            ),
            Effect.catch((error) => Effect.logWarning("could not answer the file chooser", error.message))
          )
        }),
      choose: <A, E>(
        intercept: (enabled: boolean) => Effect.Effect<unknown, CdpClosed>,
        files: ReadonlyArray<string>,
        self: Effect.Effect<A, E>
      ) =>
        Effect.acquireUseRelease(
          intercept(true).pipe(Effect.andThen(Ref.set(armed, { files, chosen: 0 }))),
          () =>
            self.pipe(
              Effect.flatMap((value) => Ref.get(armed).pipe(Effect.map((a) => [value, a?.chosen ?? 0] as const)))
            ),
          () => Ref.set(armed, undefined).pipe(Effect.andThen(intercept(false).pipe(Effect.ignore)))
        )
    } satisfies FileChooser
  })
