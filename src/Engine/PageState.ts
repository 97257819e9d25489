/**
 * Engine-independent page state: read and restore the session page's URL, title and scroll through raw CDP, for
 * when no engine is connected or the connected one is too broken to answer.
 */
import { Clock, Effect } from "effect"
import * as CdpHttp from "../Cdp/Http.ts"
import * as Session from "../Cdp/Session.ts"
import type { EndpointUnreachable } from "../Errors/Browser.ts"
import type { CdpClosed } from "../Errors/Engine.ts"
import type { PageState } from "./Engine.ts"

export type { PageState } from "./Engine.ts"

interface Target {
  readonly wsEndpoint: string
  readonly httpEndpoint: string
  readonly targetId: string
}

const scrollExpression = "JSON.stringify([window.scrollX, window.scrollY])"

/** URL and title from `/json/list`; scroll from the page when it still evaluates, else 0,0 (seed 001 §4 step 3). */
export const capture = (target: Target): Effect.Effect<PageState, EndpointUnreachable> =>
  Effect.gen(function* () {
    const targets = yield* CdpHttp.listTargets(target.httpEndpoint)
    const page = targets.find((t) => t.id === target.targetId) ?? targets.find((t) => t.type === "page")
    const [scrollX, scrollY] = yield* Session.evaluate<string>(
      target.wsEndpoint,
      target.targetId,
      scrollExpression
    ).pipe(
      Effect.map((json) => JSON.parse(json) as [number, number]),
      Effect.timeoutOption(1_000),
      Effect.map((o) => (o._tag === "Some" ? o.value : ([0, 0] as const))),
      Effect.orElseSucceed(() => [0, 0] as const)
    )
    return {
      url: page?.url ?? "about:blank",
      title: page?.title ?? "",
      scrollX,
      scrollY,
      timestamp: new Date(yield* Clock.currentTimeMillis).toISOString()
    }
  })

export const restoreScroll = (target: Target, x: number, y: number): Effect.Effect<void, CdpClosed> =>
  x === 0 && y === 0
    ? Effect.void
    : Session.evaluate(target.wsEndpoint, target.targetId, `window.scrollTo(${Number(x)}, ${Number(y)})`).pipe(
        Effect.asVoid
      )

/** Pages worth restoring: a fresh browser already shows about:blank. */
export const isRestorable = (url: string | undefined): url is string =>
  url !== undefined && url !== "" && url !== "about:blank"

/** Runs in the page: a digest of what an action could change (URL, title, form state, amount of text). */
const fingerprintExpression = `(() => {
  const fields = Array.from(document.querySelectorAll("input, select, textarea"))
    .map((e) => e.type === "checkbox" || e.type === "radio" ? String(e.checked) : e.value)
  return JSON.stringify([location.href, document.title, fields, document.body ? document.body.innerText.length : 0])
})()`

/** A digest of the page, to tell whether a failed action changed anything; unreadable pages digest as "". */
export const fingerprint = (page: Session.PageRun): Effect.Effect<string> =>
  page((cdp, sessionId) => Session.evaluateOn<string>(cdp, sessionId, fingerprintExpression)).pipe(
    Effect.timeoutOption(2_000),
    Effect.map((o) => (o._tag === "Some" ? o.value : "")),
    Effect.orElseSucceed(() => "")
  )
