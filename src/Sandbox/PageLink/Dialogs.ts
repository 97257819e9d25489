/**
 * JavaScript dialogs block every client of the page (Stagehand and playwright wait behind one): each is seen as it
 * opens and, by default, held open for the agent to answer; a configured mode answers it at once instead.
 */
import { Effect, Option, PubSub, Ref } from "effect"
import type * as Protocol from "../../Cdp/Protocol.ts"

/** Who answers a dialog: the agent (held open, reported), or the service at once (accept or dismiss). */
export type DialogMode = "agent" | "accept" | "dismiss"

export interface DialogPolicy {
  /** alert, confirm and prompt. */
  readonly mode: DialogMode
  /** The "leave this page?" dialog of a page with unsaved changes. */
  readonly beforeunload: DialogMode
}

export const defaultPolicy: DialogPolicy = { mode: "agent", beforeunload: "accept" }

/** A dialog open on a page, as the agent sees it. */
export interface OpenDialog {
  /** The tab it is open on. */
  readonly tab: string
  readonly type: "alert" | "confirm" | "prompt" | "beforeunload"
  readonly message: string
  /** The text a prompt offers; absent for other dialogs. */
  readonly defaultPrompt?: string
  /** The page that opened it. */
  readonly url: string
}

/** What happened to a dialog the service answered itself (a configured mode), for the answer to report. */
export interface Answered {
  readonly dialog: OpenDialog
  readonly accepted: boolean
}

export interface Dialogs {
  /** The dialog open on `targetId` and left for the agent, if any. */
  readonly open: (targetId: string) => Effect.Effect<Option.Option<OpenDialog>>
  /** Completes when a dialog left for the agent is open on `targetId` (at once if one is). */
  readonly opened: (targetId: string) => Effect.Effect<OpenDialog>
  /** Forgets the dialog of `targetId` (it was answered, or its page is gone). */
  readonly closed: (targetId: string) => Effect.Effect<void>
  /**
   * Takes in one event: a dialog opening on `targetId` is held for the agent, answered by `reply` under the policy,
   * or left alone when `policy` says a person answers (`none`).
   */
  readonly observe: (
    event: Protocol.Event,
    targetId: string | undefined,
    reply: (accept: boolean) => Effect.Effect<void>
  ) => Effect.Effect<Option.Option<Answered>>
}

const typeOf = (type: string): OpenDialog["type"] =>
  type === "confirm" || type === "prompt" || type === "beforeunload" ? type : "alert"

/** `policy` is read when each dialog opens: `none` leaves it for a person in control of the browser. */
export const make = (policy: Effect.Effect<Option.Option<DialogPolicy>>): Effect.Effect<Dialogs> =>
  Effect.gen(function* () {
    const held = yield* Ref.make<ReadonlyMap<string, OpenDialog>>(new Map())
    const news = yield* PubSub.unbounded<OpenDialog>()

    const open = (targetId: string) => Ref.get(held).pipe(Effect.map((m) => Option.fromNullishOr(m.get(targetId))))

    const opened = (targetId: string) =>
      Effect.scoped(
        Effect.gen(function* () {
          const subscription = yield* PubSub.subscribe(news)
          const now = yield* open(targetId)
          if (Option.isSome(now)) return now.value
          const next: Effect.Effect<OpenDialog> = PubSub.take(subscription).pipe(
            Effect.flatMap((dialog) => (dialog.tab === targetId ? Effect.succeed(dialog) : next))
          )
          return yield* next
        })
      )

    const closed = (targetId: string) =>
      Ref.update(held, (m) => {
        const next = new Map(m)
        next.delete(targetId)
        return next
      })

    const observe = (
      event: Protocol.Event,
      targetId: string | undefined,
      reply: (accept: boolean) => Effect.Effect<void>
    ): Effect.Effect<Option.Option<Answered>> =>
      Effect.gen(function* () {
        if (targetId === undefined) return Option.none()
        if (event.method === "Page.javascriptDialogClosed") {
          yield* closed(targetId)
          return Option.none()
        }
        if (event.method !== "Page.javascriptDialogOpening") return Option.none()
        const p = event.params
        const dialog: OpenDialog = {
          tab: targetId,
          type: typeOf(p.type),
          message: p.message ?? "",
          ...(p.type === "prompt" ? { defaultPrompt: p.defaultPrompt ?? "" } : {}),
          url: p.url
        }
        const rules = yield* policy
        // Held even when a person answers it: the state block shows it until it closes.
        const mode = Option.isNone(rules)
          ? "agent"
          : dialog.type === "beforeunload"
            ? rules.value.beforeunload
            : rules.value.mode
        if (mode === "agent") {
          yield* Ref.update(held, (m) => new Map(m).set(targetId, dialog))
          yield* PubSub.publish(news, dialog)
          yield* Effect.logInfo(
            Option.isNone(rules)
              ? "a page dialog is left for the person in control"
              : "a page dialog is held for the agent to answer",
            { type: dialog.type }
          )
          return Option.none()
        }
        const accepted = mode === "accept"
        yield* Effect.logInfo(
          `the page opened a ${dialog.type} dialog; it was ${accepted ? "accepted" : "dismissed"}`,
          {
            message: dialog.message.slice(0, 200)
          }
        )
        yield* reply(accepted)
        return Option.some({ dialog, accepted })
      })

    return { open, opened, closed, observe } satisfies Dialogs
  })
