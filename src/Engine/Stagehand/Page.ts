/**
 * The session's page through Stagehand's own page object: finding it by CDP target id, and the model-free calls
 * (navigate, screenshot, page state) both modes share. Plain async functions, so the CUA worker runs them too.
 */
import type { Page, Stagehand } from "@browserbasehq/stagehand"

/** The page whose CDP target id is `targetId`; else the first page, else a new one (and which it was). */
export const find = async (sh: Stagehand, targetId: string) => {
  const pages = sh.context.pages()
  const page = pages.find((p) => p.targetId() === targetId)
  if (page !== undefined) return { page, found: "target" as const }
  if (pages[0] !== undefined) return { page: pages[0], found: "first" as const }
  return { page: await sh.context.newPage(), found: "new" as const }
}

export interface Navigated {
  readonly url: string
  readonly title: string
  readonly status: number | null
  /** Chromium's error code (`ERR_CONNECTION_REFUSED`) when the navigation ended on its error page. */
  readonly errorCode?: string
}

/**
 * `page.goto` waiting for `load`. Stagehand resolves even when the network fails (it ignores Page.navigate's
 * errorText), so the landing document is read back: Chromium's error page carries the error code.
 */
export const navigate = async (page: Page, url: string, timeoutMs: number): Promise<Navigated> => {
  const response = await page.goto(url, { waitUntil: "load", timeoutMs })
  const landed = await page.evaluate(() => ({
    href: location.href,
    title: document.title,
    errorCode: location.protocol === "chrome-error:" ? (document.querySelector(".error-code")?.textContent ?? "") : null
  }))
  return {
    url: landed.href,
    title: landed.title,
    status: response?.status() ?? null,
    ...(landed.errorCode === null ? {} : { errorCode: landed.errorCode.trim() || "the browser's error page" })
  }
}

export const screenshot = async (page: Page, fullPage: boolean) =>
  new Uint8Array(await page.screenshot({ type: "png", fullPage }))

export const state = (page: Page) =>
  page.evaluate(() => ({ url: location.href, title: document.title, scrollX: window.scrollX, scrollY: window.scrollY }))
