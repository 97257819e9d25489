/**
 * The person in a takeover test: a second, headless Chromium showing the noVNC page and clicking and typing on its
 * canvas. Where to click comes from the session page's element boxes, its window offset and the canvas's scale.
 */
import { Effect, type Scope } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import * as Session from "../../src/Cdp/Session.ts"

/** A point on the VNC display (the remote screen), in its pixels. */
export interface ScreenPoint {
  readonly x: number
  readonly y: number
}

export interface Viewer {
  /** Clicks `point` of the remote screen through the noVNC canvas. */
  readonly click: (point: ScreenPoint) => Effect.Effect<void>
  /** Types into whatever has the remote keyboard focus. */
  readonly type: (text: string) => Effect.Effect<void>
  /** Presses a key or a chord (`Enter`, `Control+l`). */
  readonly press: (key: string) => Effect.Effect<void>
  /** The canvas's on-screen size over the remote screen's size (below 1 when noVNC scales the screen down). */
  readonly scale: number
  /** Whether noVNC is still connected (the server may have ended the connection). */
  readonly connected: Effect.Effect<boolean>
}

/** Chromium flags that keep it quiet offline (stack-facts). */
const offline = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** Resolves once noVNC is connected, or once it says it is not (a refused password, a failed connection). */
const outcome = (page: Page) =>
  page
    .waitForFunction(
      () => {
        if (document.documentElement.classList.contains("noVNC_connected")) return "connected"
        const status = document.getElementById("noVNC_status")
        const credentials = document.getElementById("noVNC_credentials_dlg")
        if (credentials?.classList.contains("noVNC_open")) return "refused: asks for a password"
        if (status?.classList.contains("noVNC_status_error")) return `refused: ${status.textContent}`
        return false
      },
      undefined,
      { timeout: 15_000 }
    )
    .then((handle) => handle.jsonValue() as Promise<string>)

const connected = async (page: Page, url: string, password: string | undefined) => {
  await page.goto(url)
  let how = await outcome(page)
  // Without a password in the link noVNC asks for one, as a person who opened the plain page is asked.
  if (how.startsWith("refused: asks") && password !== undefined) {
    await page.fill("#noVNC_password_input", password)
    await page.click("#noVNC_credentials_button")
    how = await outcome(page)
  }
  if (how !== "connected") throw new Error(`noVNC did not connect: ${how}`)
  const canvas = page.locator("#noVNC_container canvas")
  await page.waitForFunction(
    () => ((document.querySelector("#noVNC_container canvas") as HTMLCanvasElement | null)?.width ?? 0) > 0
  )
  const box = await canvas.boundingBox()
  const size = await canvas.evaluate((c: HTMLCanvasElement) => ({ width: c.width, height: c.height }))
  if (box === null) throw new Error("the noVNC canvas is not visible")
  return { box, size }
}

const viewerPage = (viewport: { readonly width: number; readonly height: number }) =>
  Effect.gen(function* () {
    const browser = yield* Effect.acquireRelease(
      Effect.promise(() =>
        chromium.launch({ executablePath: process.env.CHROME_PATH ?? "/usr/bin/chromium", args: offline })
      ),
      (b: Browser) => Effect.promise(() => b.close().catch(() => undefined))
    )
    return yield* Effect.promise(() => browser.newPage({ viewport }))
  })

/** Opens `url` in a headless Chromium and says whether noVNC got in (`connected`) or why not (`refused: …`). */
export const attempt = (url: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.gen(function* () {
    const page = yield* viewerPage({ width: 1024, height: 768 })
    return yield* Effect.promise(() => page.goto(url).then(() => outcome(page)))
  })

/**
 * Opens `url` in a headless Chromium and waits until noVNC is connected: a link with its password, or the plain page
 * and the `password` typed where noVNC asks for it.
 */
export const open = (
  url: string,
  options: { readonly password?: string; readonly viewport?: { readonly width: number; readonly height: number } } = {}
): Effect.Effect<Viewer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const page = yield* viewerPage(options.viewport ?? { width: 1024, height: 768 })
    const { box, size } = yield* Effect.promise(() => connected(page, url, options.password))
    const scale = box.width / size.width
    return {
      scale,
      click: (point) =>
        Effect.promise(() => page.mouse.click(box.x + point.x * scale, box.y + point.y * (box.height / size.height))),
      type: (text) => Effect.promise(() => page.keyboard.type(text)),
      press: (key) => Effect.promise(() => page.keyboard.press(key)),
      connected: Effect.promise(() =>
        page.evaluate(() => document.documentElement.classList.contains("noVNC_connected"))
      )
    } satisfies Viewer
  })

interface Target {
  readonly wsEndpoint: string
  readonly targetId: string
}

/**
 * The centre of `selector`'s element on the remote screen: its box in the page, plus where the page's viewport sits
 * on the screen (window position and browser chrome above it), in device pixels.
 */
export const screenPoint = (target: Target, selector: string) =>
  Session.evaluate<ScreenPoint | null>(
    target.wsEndpoint,
    target.targetId,
    `(() => {
      const el = document.querySelector(${JSON.stringify(selector)})
      if (!el) return null
      const r = el.getBoundingClientRect()
      const left = window.screenX + (window.outerWidth - window.innerWidth) / 2
      const top = window.screenY + (window.outerHeight - window.innerHeight)
      return { x: (left + r.left + r.width / 2) * devicePixelRatio, y: (top + r.top + r.height / 2) * devicePixelRatio }
    })()`
  ).pipe(
    Effect.flatMap((p) =>
      p === null ? Effect.die(new Error(`no ${selector} on the session page`)) : Effect.succeed(p)
    )
  )

/** Reads the session page with `expression` until `ok` holds (real time, never the TestClock); dies after timeoutMs. */
export const until = <A>(target: Target, expression: string, ok: (a: A) => boolean, timeoutMs = 10_000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + timeoutMs
    let last: A | undefined
    while (Date.now() < deadline) {
      last = yield* Session.evaluate<A>(target.wsEndpoint, target.targetId, expression).pipe(Effect.orDie)
      if (ok(last)) return last
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
    }
    return yield* Effect.die(
      new Error(`${expression} never held within ${timeoutMs} ms; last: ${JSON.stringify(last)}`)
    )
  })
