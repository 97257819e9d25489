/**
 * Navigation details every engine shares: the check that a URL is absolute, and a `page.goto` that leaves no late
 * error-page commit behind to break the next navigation.
 */
import { Effect } from "effect"
import type { Frame, Page } from "playwright-core"
import type { EngineKind } from "../EngineId.ts"
import type { SideEffect } from "../Errors/Fields.ts"
import { ActionFailed, InvalidInput, NavigationFailed } from "../Errors/Page.ts"

export const requireAbsoluteUrl = (
  engine: EngineKind,
  action: string,
  url: string
): Effect.Effect<void, InvalidInput> =>
  URL.canParse(url)
    ? Effect.void
    : Effect.fail(
        new InvalidInput({
          engine,
          action,
          field: "url",
          message: `${JSON.stringify(url)} is not an absolute URL (include the scheme, e.g. https://)`
        })
      )

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * `page.goto`, except that a network failure returns only once Chromium has committed its error page: that commit
 * lands after goto rejects and would otherwise "interrupt" the next navigation, and that one the next, and so on.
 */
export const goto = async (page: Page, url: string, timeout: number) => {
  let committed = () => {}
  const errorPage = new Promise<void>((resolve) => {
    committed = resolve
  })
  const onNavigated = (frame: Frame) => {
    if (frame === page.mainFrame() && frame.url().startsWith("chrome-error:")) committed()
  }
  page.on("framenavigated", onNavigated)
  try {
    return await page.goto(url, { waitUntil: "load", timeout })
  } catch (error) {
    if (/net::ERR_(?!ABORTED)/.test(messageOf(error))) {
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([errorPage, new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))])
      clearTimeout(timer)
    }
    throw error
  } finally {
    page.off("framenavigated", onNavigated)
  }
}

/** The last case of every engine's error mapping: a URL the browser refused, a navigation that did not reach its
 * page, or else an action that failed (and may have acted). */
export const pageFailure = (
  base: { readonly engine: EngineKind; readonly action: string; readonly cause: unknown },
  at: { readonly action: string; readonly sideEffect: SideEffect; readonly url?: string | undefined },
  message: string
): InvalidInput | NavigationFailed | ActionFailed => {
  if (at.url !== undefined) {
    if (/invalid url/i.test(message)) {
      return new InvalidInput({
        ...base,
        field: "url",
        message: `${at.url} is not a URL the browser can open: ${message}`
      })
    }
    return new NavigationFailed({ ...base, url: at.url, message: `navigation to ${at.url} failed: ${message}` })
  }
  return new ActionFailed({ ...base, sideEffect: at.sideEffect, message: `${at.action} failed: ${message}` })
}
