/**
 * An attempt judged by what the browser's traffic and the page recorded rather than by what its engine said: a
 * document the egress policy refused or the network did not reach fails the attempt, whichever engine ran it.
 */
import { Cause, Effect, Exit, Option } from "effect"
import { type Egress, rejection, unreachable } from "../../Egress/Egress.ts"
import type { EngineKind } from "../../EngineId.ts"
import { NavigationFailed } from "../../Errors/Page.ts"
import type { SwitchyardError } from "../../Errors.ts"
import type { Sandbox } from "../../Sandbox/Sandbox.ts"

/**
 * An attempt during which the egress policy refused a document the call reached for (a navigation, a redirect, a
 * clicked link, a popup, a form post) fails `rejected_by_policy` naming the rule, whatever the engine said: the
 * browser shows the proxy's refusal or an error page, which is no success. Read from the blocks the session's egress
 * recorded during the attempt, so a call that blocked nothing costs one counter read.
 *
 * Likewise an attempt whose document was not reached fails `navigation_failed` with the network's cause, whatever
 * the engine said and whichever engine ran it: the proxy's record names it (`ECONNREFUSED 127.0.0.1:4100`,
 * `ENOTFOUND`, a timeout) when the proxy could not fetch the page — plain HTTP then shows the proxy's own page at the
 * URL asked for — and the browser's error page names it (a TLS failure, a refused tunnel) when the main frame
 * committed one during the attempt.
 */
export const policing =
  (sandbox: Sandbox["Service"], egress: Option.Option<Egress["Service"]>) =>
  <A>(
    action: string,
    engine: EngineKind,
    attempt: Effect.Effect<A, SwitchyardError>
  ): Effect.Effect<A, SwitchyardError> =>
    Effect.gen(function* () {
      const mark = Option.isSome(egress) ? yield* egress.value.mark : 0
      const before = yield* sandbox.mainFrame
      const outcome = yield* Effect.exit(attempt)
      const blocks = Option.isSome(egress) ? yield* egress.value.since(mark) : []
      const missed = Option.isSome(egress) ? yield* egress.value.unreachedSince(mark) : []
      const after = yield* sandbox.mainFrame
      const errorPage = after.unreachable !== undefined && after.commits !== before.commits
      const engineSaid = Exit.isFailure(outcome) ? Cause.findErrorOption(outcome.cause) : Option.none()
      const navigationFailed = Option.isSome(engineSaid) && engineSaid.value._tag === "NavigationFailed"
      if (blocks.length === 0 && missed.length === 0 && !errorPage && !navigationFailed) return yield* outcome
      const url = Option.getOrUndefined(yield* sandbox.location)?.url
      const failed = Exit.isFailure(outcome) || errorPage
      if (blocks.length > 0) {
        const rejected = rejection(blocks, { url, failed }, action)
        if (rejected !== undefined) return yield* Effect.fail(rejected)
      }
      // Another failure (a limit, a time limit, a dialog) says more than a page not reached would.
      if (Exit.isFailure(outcome) && !navigationFailed) return yield* outcome
      const failedUrl =
        (errorPage ? after.unreachable : undefined) ??
        (navigationFailed && engineSaid.value._tag === "NavigationFailed" ? engineSaid.value.url : undefined)
      const notReached = unreachable(missed, { url, failed, failedUrl }, action, engine)
      if (notReached !== undefined) return yield* Effect.fail(notReached)
      if (!errorPage && !navigationFailed) return yield* outcome
      // The browser's own error page: its code is the cause.
      const code = errorPage ? Option.getOrUndefined(yield* sandbox.errorCode) : undefined
      const said = navigationFailed && engineSaid.value._tag === "NavigationFailed" ? engineSaid.value : undefined
      const reason = code ?? (said === undefined ? undefined : /net::(ERR_[A-Z_]+)/.exec(said.message)?.[1])
      if (reason === undefined || said?.reason !== undefined) return yield* outcome
      const at = failedUrl ?? url ?? ""
      return yield* Effect.fail(
        new NavigationFailed({
          engine,
          action,
          url: at,
          reason,
          message: `${at} was not reached: ${reason}`
        })
      )
    })
