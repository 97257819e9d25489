/**
 * `browser.evaluate` on the session's page: the agent's JavaScript in the page's own world (or a frame's), its value
 * answered as JSON within a size cap. It runs as the page's scripts do, so it reaches what they can and no more: never
 * the service, whose port the session's egress refuses.
 */
import { Effect } from "effect"
import type { Frame } from "playwright-core"
import { ActionFailed, InvalidInput } from "../../Errors/Page.ts"
import type { EvaluateResult } from "../Engine.ts"
import { attempt, engine, toEngineError } from "./Errors.ts"
import type { SessionPage } from "./Page.ts"

/**
 * The script as the page runs it: an expression's value, a function's return value (awaited), or statements run as
 * written. Whether it reads as one expression is decided by parsing it here, never running it.
 */
const script = (expression: string) => {
  try {
    new Function(`return (${expression}\n)`)
  } catch {
    return expression
  }
  return `(async () => { const value = (${expression}\n); return typeof value === "function" ? await value() : await value })()`
}

/** The largest value answered, as JSON text. */
const maxBytes = 32_768

/** The frame a name means: its iframe's title or name attribute, or a part of its URL. */
const frameNamed = async (sp: SessionPage, wanted: string): Promise<Frame | undefined> => {
  const frames = sp.page.frames().filter((f) => f !== sp.page.mainFrame())
  for (const frame of frames) {
    const element = await frame.frameElement().catch(() => undefined)
    const title = element === undefined ? null : await element.getAttribute("title").catch(() => null)
    if (title === wanted || frame.name() === wanted) return frame
  }
  return frames.find((f) => f.url().includes(wanted))
}

export const evaluate = (sp: SessionPage, expression: string, frameName?: string) =>
  Effect.gen(function* () {
    const label = "evaluate"
    const frame =
      frameName === undefined ? sp.page.mainFrame() : yield* attempt(sp.at(label), () => frameNamed(sp, frameName))
    if (frame === undefined) {
      const urls = sp.page
        .frames()
        .filter((f) => f !== sp.page.mainFrame())
        .map((f) => f.url())
      return yield* new InvalidInput({
        engine,
        action: label,
        field: "frame",
        message: `no frame is titled or named ${JSON.stringify(frameName)} or has it in its URL; the frames are ${urls.map((u) => JSON.stringify(u)).join(", ") || "none"}`
      })
    }
    // A function written as text is called; anything else is evaluated as an expression.
    const value = yield* Effect.tryPromise({
      try: () => frame.evaluate(script(expression)),
      catch: (cause) => {
        const text = cause instanceof Error ? cause.message : String(cause)
        return /^(page|frame)\.evaluate: /.test(text) && !/Target (page|frame).*closed|has been closed/i.test(text)
          ? new ActionFailed({
              engine,
              action: label,
              sideEffect: "possible",
              cause,
              message: `the script threw: ${text.replace(/^(page|frame)\.evaluate: /, "").split("\n")[0]}`
            })
          : toEngineError(cause, sp.at(label, "possible"))
      }
    }).pipe(
      Effect.timeoutOrElse({
        duration: sp.limits.actionTimeoutMs,
        orElse: () =>
          Effect.fail(
            new ActionFailed({
              engine,
              action: label,
              sideEffect: "possible",
              message: `the script did not finish within ${sp.limits.actionTimeoutMs} ms`
            })
          )
      })
    )
    const json = JSON.stringify(value ?? null)
    const where = frame === sp.page.mainFrame() ? {} : { frame: frame.url() }
    if (Buffer.byteLength(json) <= maxBytes) return { value: value ?? null, ...where } satisfies EvaluateResult
    return {
      value: `${json.slice(0, maxBytes)}…`,
      ...where,
      truncated: { bytes: Buffer.byteLength(json) }
    } satisfies EvaluateResult
  })
