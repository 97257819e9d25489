/**
 * JavaScript dialogs block every client of the page (Stagehand waits forever on one): each is answered as it opens,
 * dismissed (leaving a page is accepted), unless a person in control is to answer it.
 */
import { Effect, PubSub } from "effect"
import type { Connection } from "../../Cdp/Connection.ts"
import type * as Protocol from "../../Cdp/Protocol.ts"

/** Answers the dialogs `events` announce, for as long as the subscription lasts; `answerDialogs` false leaves them. */
export const answer = (
  cdp: Connection,
  events: PubSub.Subscription<Protocol.Event>,
  answerDialogs: Effect.Effect<boolean>
): Effect.Effect<never> =>
  PubSub.take(events).pipe(
    Effect.flatMap((event) =>
      Effect.gen(function* () {
        if (event.method !== "Page.javascriptDialogOpening" || event.sessionId === undefined) return
        const dialog = event.params
        if (!(yield* answerDialogs)) {
          yield* Effect.logInfo("a page dialog is left for the person in control", { type: dialog.type })
          return
        }
        const accept = dialog.type === "beforeunload"
        yield* Effect.logWarning(
          `the page opened a ${dialog.type} dialog; it was ${accept ? "accepted" : "dismissed"}`,
          {
            message: (dialog.message ?? "").slice(0, 200)
          }
        )
        yield* cdp.send("Page.handleJavaScriptDialog", { accept }, event.sessionId).pipe(Effect.ignore)
      })
    ),
    Effect.forever
  )
