/**
 * A flat CDP session on one page target, reached over a connection of its own or over one kept elsewhere (`PageRun`),
 * and the two things every reader needs on it: evaluate an expression, navigate and wait for the load event.
 */
import { Effect } from "effect"
import { CdpClosed } from "../Errors/Engine.ts"
import * as Connection from "./Connection.ts"

/** Runs commands on a session attached to one page, however the connection to it is kept. */
export type PageRun = <A, E>(
  f: (cdp: Connection.Connection, sessionId: string) => Effect.Effect<A, E>
) => Effect.Effect<A, E | CdpClosed>

/** Runs `f` with a flat session attached to one page target, over a fresh connection that closes afterwards. */
export const withTarget = <A, E>(
  wsEndpoint: string,
  targetId: string,
  f: (cdp: Connection.Connection, sessionId: string) => Effect.Effect<A, E>
): Effect.Effect<A, E | CdpClosed> =>
  Effect.scoped(
    Effect.gen(function* () {
      const cdp = yield* Connection.connect(wsEndpoint)
      const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId, flatten: true })
      return yield* f(cdp, sessionId)
    })
  )

/** A page reached over a fresh connection per use. */
export const fresh =
  (target: { readonly wsEndpoint: string; readonly targetId: string }): PageRun =>
  (f) =>
    withTarget(target.wsEndpoint, target.targetId, f)

/** Evaluates an expression on an attached session and returns its JSON value. */
export const evaluateOn = <A>(cdp: Connection.Connection, sessionId: string, expression: string) =>
  cdp
    .send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }, sessionId)
    .pipe(
      Effect.flatMap(
        (r): Effect.Effect<A, CdpClosed> =>
          r.exceptionDetails
            ? Effect.fail(
                new CdpClosed({ message: `evaluation failed: ${r.exceptionDetails.text}`, cause: r.exceptionDetails })
              )
            : Effect.succeed(r.result.value)
      )
    )

/** Evaluates an expression in a page target and returns its JSON value. */
export const evaluate = <A>(wsEndpoint: string, targetId: string, expression: string) =>
  withTarget(wsEndpoint, targetId, (cdp, sessionId) => evaluateOn<A>(cdp, sessionId, expression))

/** Navigates the page of an attached session and waits for its load event. */
export const navigateOn = (cdp: Connection.Connection, sessionId: string, url: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* cdp.send("Page.enable", {}, sessionId)
      const loaded = yield* cdp.nextEvent("Page.loadEventFired", sessionId)
      const result = yield* cdp.send("Page.navigate", { url }, sessionId)
      if (result.errorText) return yield* new CdpClosed({ message: `navigation to ${url} failed: ${result.errorText}` })
      yield* loaded
    })
  )

/** Navigates a page target and waits for its load event: used to restore the URL in a relaunched browser. */
export const navigate = (wsEndpoint: string, targetId: string, url: string) =>
  withTarget(wsEndpoint, targetId, (cdp, sessionId) => navigateOn(cdp, sessionId, url))
