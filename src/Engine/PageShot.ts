/**
 * The agent's screenshot over a CDP session kept on the page: one evaluate and the capture, where playwright-core's
 * page.screenshot takes seven round trips and encodes its PNG at zlib's slow setting. Keeps what that one guarantees.
 */
import type { CDPSession, Page } from "playwright-core"

/** How the viewport's picture is encoded: Chromium's fast PNG setting (about 20 ms less per capture here, about half
 * again the bytes). A full page keeps the smaller encoding: its bytes count against the size the answer may have. */
const viewportParams = { format: "png", optimizeForSpeed: true } as const

const caretKey = "switchyard-caret"

/**
 * Runs in the page before the capture: hides the caret of the focused editable (the one place a caret shows; through
 * open shadow roots and same-origin frames, with a constructed sheet, which the page's own observers never see), waits
 * for the fonts the page is loading, and measures the document for a full page. `foreign` when the focus is in a
 * frame of another origin, out of this script's reach.
 */
const prepareScript = (fullPage: boolean) => `(async () => {
  let root = document;
  let el = document.activeElement;
  for (let i = 0; el && i < 32; i++) {
    if (el.shadowRoot && el.shadowRoot.activeElement) { root = el.shadowRoot; el = root.activeElement; continue; }
    if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
      let inner = null;
      try { inner = el.contentDocument; } catch (e) {}
      if (!inner) return { foreign: true };
      root = inner;
      el = inner.activeElement;
      continue;
    }
    break;
  }
  let hidden = false;
  if (el && (el.isContentEditable || el.tagName === "INPUT" || el.tagName === "TEXTAREA")) {
    const win = (root.nodeType === 9 ? root : root.ownerDocument).defaultView;
    if (win && Array.isArray(root.adoptedStyleSheets)) {
      const sheet = new win.CSSStyleSheet();
      sheet.replaceSync("*, *::before, *::after { caret-color: transparent !important; }");
      root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
      Object.defineProperty(window, Symbol.for("${caretKey}"), {
        configurable: true,
        value: () => { root.adoptedStyleSheets = root.adoptedStyleSheets.filter((s) => s !== sheet); }
      });
      hidden = true;
    }
  }
  if (document.fonts && document.fonts.status !== "loaded") await document.fonts.ready;
  if (!${fullPage}) return { hidden };
  const b = document.body, d = document.documentElement;
  if (!b || !d) return { hidden };
  return {
    hidden,
    width: Math.max(b.scrollWidth, d.scrollWidth, b.offsetWidth, d.offsetWidth, b.clientWidth, d.clientWidth),
    height: Math.max(b.scrollHeight, d.scrollHeight, b.offsetHeight, d.offsetHeight, b.clientHeight, d.clientHeight),
    innerWidth: window.innerWidth,
    innerHeight: window.innerHeight
  };
})()`

const restoreScript = `(() => { const f = window[Symbol.for("${caretKey}")]; if (f) { delete window[Symbol.for("${caretKey}")]; f(); } })()`

interface Prepared {
  readonly foreign?: boolean
  readonly hidden?: boolean
  readonly width?: number
  readonly height?: number
  readonly innerWidth?: number
  readonly innerHeight?: number
}

/** A failure playwright-core's error mapping reads as a timeout. */
const timeoutError = (ms: number) =>
  Object.assign(new Error(`screenshot: no picture within ${ms} ms`), { name: "TimeoutError" })

/** Screenshots of `page`: the CDP session is opened on the first and kept while the page lives. */
export const make = (page: Page) => {
  let session: Promise<CDPSession> | undefined
  const cdp = () => {
    session ??= page.context().newCDPSession(page)
    return session
  }

  const shoot = async (fullPage: boolean): Promise<Uint8Array> => {
    let current: CDPSession
    try {
      current = await cdp()
    } catch (error) {
      session = undefined
      throw error
    }
    const send = async <A>(method: string, params: object): Promise<A> => {
      try {
        return (await current.send(method as never, params as never)) as A
      } catch (error) {
        // A session that broke (a crash, a detach) is opened again by the next screenshot.
        if (session !== undefined && (await session.catch(() => undefined)) === current) session = undefined
        throw error
      }
    }
    const prepared = (
      await send<{ result: { value?: Prepared } }>("Runtime.evaluate", {
        expression: prepareScript(fullPage),
        awaitPromise: true,
        returnByValue: true
      })
    ).result.value
    // A caret in another origin's frame: playwright-core's screenshot reaches every frame.
    if (prepared?.foreign === true) {
      return new Uint8Array(await page.screenshot({ type: "png", fullPage, timeout: 0 }))
    }
    try {
      const { width, height, innerWidth = 0, innerHeight = 0 } = prepared ?? {}
      const params =
        fullPage && width !== undefined && height !== undefined
          ? {
              format: "png",
              clip: { x: 0, y: 0, width, height, scale: 1 },
              captureBeyondViewport: width > innerWidth || height > innerHeight
            }
          : viewportParams
      const shot = await send<{ data: string }>("Page.captureScreenshot", params)
      return new Uint8Array(Buffer.from(shot.data, "base64"))
    } finally {
      if (prepared?.hidden === true) {
        await send("Runtime.evaluate", { expression: restoreScript }).catch(() => undefined)
      }
    }
  }

  /** A PNG of the viewport, or of the whole page, within `timeoutMs`. */
  return (options: { readonly fullPage: boolean; readonly timeoutMs: number }): Promise<Uint8Array> => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timeoutError(options.timeoutMs)), options.timeoutMs)
    })
    return Promise.race([shoot(options.fullPage), limit]).finally(() => clearTimeout(timer))
  }
}
