/**
 * The active tab's viewport: a size (the browser window resized so the page gets exactly that much room, for every
 * engine alike) or a device's emulation — its screen, pixel ratio, touch and user agent, from Playwright's device list —
 * kept on the Sandbox's own connection to the tab (while that connection lasts).
 */
import { Effect } from "effect"
import { evaluateOn } from "../Cdp/Session.ts"
import { InvalidInput } from "../Errors/Page.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { OnPage } from "./Sandbox.ts"

export interface Viewport {
  readonly width: number
  readonly height: number
  readonly deviceScaleFactor: number
  /** The device emulated, when one is. */
  readonly device?: string
  readonly mobile: boolean
  readonly touch: boolean
}

interface Descriptor {
  readonly viewport: { readonly width: number; readonly height: number }
  readonly userAgent: string
  readonly deviceScaleFactor: number
  readonly isMobile: boolean
  readonly hasTouch: boolean
}

const devices = () =>
  Effect.promise(() => import("playwright-core")).pipe(
    Effect.map((pw) => pw.devices as unknown as Record<string, Descriptor>)
  )

/** Devices agents ask for most, named in descriptions; any name of Playwright's device list works. */
export const commonDevices = ["iPhone 15", "iPhone SE", "Pixel 7", "Galaxy S9+", "iPad Pro 11", "Desktop Chrome"]

const measure = (page: OnPage) =>
  page.run((cdp, sessionId) =>
    evaluateOn<{ iw: number; ih: number; ow: number; oh: number; dpr: number; touch: boolean }>(
      cdp,
      sessionId,
      "({ iw: innerWidth, ih: innerHeight, ow: outerWidth, oh: outerHeight, dpr: devicePixelRatio, touch: navigator.maxTouchPoints > 0 })"
    )
  )

/** Drops any device emulation of the tab (its own size, pixel ratio, user agent and pointer come back). */
const clear = (page: OnPage) =>
  page.run((cdp, sessionId) =>
    Effect.all(
      [
        cdp.send("Emulation.clearDeviceMetricsOverride", {}, sessionId),
        cdp.send("Emulation.setTouchEmulationEnabled", { enabled: false }, sessionId),
        cdp.send("Emulation.setUserAgentOverride", { userAgent: "" }, sessionId)
      ],
      { discard: true }
    )
  )

/** The window resized so the page's viewport is `width` × `height` CSS pixels. */
export const resize = (page: OnPage, width: number, height: number): Effect.Effect<Viewport, SwitchyardError> =>
  Effect.gen(function* () {
    yield* clear(page)
    const before = yield* measure(page)
    const { windowId } = yield* page.browser((cdp) =>
      cdp.send("Browser.getWindowForTarget", { targetId: page.targetId })
    )
    yield* page.browser((cdp) =>
      cdp.send("Browser.setWindowBounds", {
        windowId,
        bounds: {
          windowState: "normal",
          width: width + Math.max(0, before.ow - before.iw),
          height: height + Math.max(0, before.oh - before.ih)
        }
      })
    )
    const after = yield* measure(page)
    return { width: after.iw, height: after.ih, deviceScaleFactor: after.dpr, mobile: false, touch: after.touch }
  })

/** The tab emulating a device of Playwright's list (or back to the desktop window with `desktop`). */
export const emulate = (page: OnPage, name: string): Effect.Effect<Viewport, SwitchyardError> =>
  Effect.gen(function* () {
    if (/^desktop$/i.test(name.trim())) {
      yield* clear(page)
      const now = yield* measure(page)
      return { width: now.iw, height: now.ih, deviceScaleFactor: now.dpr, mobile: false, touch: now.touch }
    }
    const all = yield* devices()
    const key = Object.keys(all).find((k) => k.toLowerCase() === name.trim().toLowerCase())
    if (key === undefined) {
      const close = Object.keys(all)
        .filter((k) => k.toLowerCase().includes(name.trim().toLowerCase().split(" ")[0] ?? ""))
        .slice(0, 8)
      return yield* new InvalidInput({
        field: "device",
        message: `no device named ${JSON.stringify(name)}; ${close.length > 0 ? `close: ${close.map((c) => JSON.stringify(c)).join(", ")}` : `e.g. ${commonDevices.map((c) => JSON.stringify(c)).join(", ")}`} (Playwright's device list), or "desktop"`
      })
    }
    const device = all[key]!
    // Touch and the user agent first: the page's resize handlers, run by the new size, see the whole device.
    yield* page.run((cdp, sessionId) =>
      Effect.all(
        [
          cdp.send(
            "Emulation.setTouchEmulationEnabled",
            device.hasTouch ? { enabled: true, maxTouchPoints: 5 } : { enabled: false },
            sessionId
          ),
          cdp.send("Emulation.setUserAgentOverride", { userAgent: device.userAgent }, sessionId),
          cdp.send(
            "Emulation.setDeviceMetricsOverride",
            {
              width: device.viewport.width,
              height: device.viewport.height,
              deviceScaleFactor: device.deviceScaleFactor,
              mobile: device.isMobile
            },
            sessionId
          )
        ],
        { discard: true }
      )
    )
    return {
      width: device.viewport.width,
      height: device.viewport.height,
      deviceScaleFactor: device.deviceScaleFactor,
      device: key,
      mobile: device.isMobile,
      touch: device.hasTouch
    }
  })
