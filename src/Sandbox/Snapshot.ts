/**
 * Artifacts read straight from the page over raw CDP, whatever engine is (or is not) connected: a screenshot with
 * no typed text in it, and the failure snapshot of seed 003 — the full accessibility tree plus a
 * minimal DOM JSON around the nodes next to the failure.
 */
import { Effect, Option } from "effect"
import type { Protocol } from "../Cdp/Protocol.ts"
import type { PageRun } from "../Cdp/Session.ts"
import * as Redact from "../Logging/Redact.ts"

/** How attempt screenshots are encoded: PNG with Chromium's fast settings (larger files, about half the time). */
export const captureParams = { format: "png", optimizeForSpeed: true } as const

/**
 * A PNG of the viewport with no typed text in it: a page where nothing is typed is captured as it is (asked before
 * and after the capture, so text typed meanwhile sends it back); else text inputs are masked in the page (in the same
 * round trip that asked) for the capture and unmasked after. Cut short (interrupted), it takes off any mask it may
 * have put on, also one whose answer had not come back yet.
 */
export const screenshot = (page: PageRun) =>
  page((cdp, sessionId) => {
    const ask = (expression: string) =>
      cdp
        .send("Runtime.evaluate", { expression, returnByValue: true }, sessionId)
        .pipe(Effect.map((r) => r.result.value === true))
    const capture = cdp
      .send("Page.captureScreenshot", captureParams, sessionId)
      .pipe(Effect.map((shot) => new Uint8Array(Buffer.from(shot.data, "base64"))))
    // Set before a mask may go on, cleared once nothing could be masked.
    let masked = true
    const shoot = Effect.gen(function* () {
      if (yield* ask(Redact.maskIfTypedScript)) {
        masked = false
        const plain = yield* capture
        if (yield* ask(Redact.nothingTypedScript)) return plain
        masked = true
        yield* cdp.send("Runtime.evaluate", { expression: Redact.maskInputsScript }, sessionId)
      }
      return yield* capture
    })
    return shoot.pipe(
      // Bounded: a clean-up runs uninterruptibly, and a page whose main thread hangs would never answer it.
      Effect.ensuring(
        Effect.suspend(() =>
          masked
            ? cdp
                .send("Runtime.evaluate", { expression: Redact.unmaskInputsScript }, sessionId)
                .pipe(Effect.timeoutOption(2_000), Effect.ignore)
            : Effect.void
        )
      )
    )
  })

/** Where typed text shows on the page: each text field holding a value by its box, in the top viewport's CSS pixels. */
export interface Typed {
  readonly ratio: number
  readonly boxes: ReadonlyArray<readonly [number, number, number, number]>
  /** Text shows where no box bounds it (an editable element, a textbox): a picture is masked in the page instead. */
  readonly other: boolean
}

/** Where typed text shows, read in one evaluate; none when the page cannot tell. */
export const typedBoxes = (page: PageRun) =>
  page((cdp, sessionId) =>
    cdp
      .send("Runtime.evaluate", { expression: Redact.typedBoxesScript, returnByValue: true }, sessionId)
      .pipe(Effect.map((r) => Option.fromNullishOr(r.result.value as Typed | null | undefined)))
  )

/** The grey of a masked field's box in a picture. */
const maskGrey = { r: 200, g: 200, b: 200, alpha: 1 }

/**
 * A copy of a PNG of the viewport with the boxes of `typed` painted over (the picture itself is left as it is), at
 * zlib's fastest setting: the typed text of a picture taken without the mask, hidden without a capture of its own.
 */
export const maskBoxes = (png: Uint8Array, typed: Typed): Effect.Effect<Uint8Array, unknown> =>
  typed.boxes.length === 0
    ? Effect.succeed(png)
    : Effect.tryPromise(async () => {
        const sharp = (await import("sharp")).default
        const image = sharp(png)
        const { width = 0, height = 0 } = await image.metadata()
        const parts = typed.boxes.flatMap(([x, y, w, h]) => {
          // Whole pixels around the box, a pixel beyond it on each side, within the picture.
          const left = Math.max(0, Math.floor(x * typed.ratio) - 1)
          const top = Math.max(0, Math.floor(y * typed.ratio) - 1)
          const right = Math.min(width, Math.ceil((x + w) * typed.ratio) + 1)
          const bottom = Math.min(height, Math.ceil((y + h) * typed.ratio) + 1)
          return right <= left || bottom <= top
            ? []
            : [
                {
                  input: {
                    create: { width: right - left, height: bottom - top, channels: 4 as const, background: maskGrey }
                  },
                  left,
                  top
                }
              ]
        })
        if (parts.length === 0) return png
        return new Uint8Array(await image.composite(parts).png({ compressionLevel: 1 }).toBuffer())
      })

/** Runs in the page: elements whose text, label or attributes mention `needle` (else the focused element), each with
 * its parent and siblings, as small JSON; form values are left to redaction. */
const domAroundExpression = (needle: string | undefined) => `(() => {
  const needle = ${JSON.stringify(needle ?? "")}.toLowerCase()
  const describe = (e) => e && e.nodeType === 1 ? {
    tag: e.tagName.toLowerCase(),
    id: e.id || undefined,
    class: typeof e.className === "string" && e.className ? e.className.slice(0, 80) : undefined,
    role: e.getAttribute("role") || undefined,
    name: e.getAttribute("name") || undefined,
    ariaLabel: e.getAttribute("aria-label") || undefined,
    type: e.getAttribute("type") || undefined,
    text: (e.innerText || e.textContent || "").trim().slice(0, 120) || undefined,
    value: "value" in e && typeof e.value === "string" && e.value !== "" ? e.value : undefined,
    disabled: e.disabled || undefined,
    hidden: e.offsetParent === null && e.tagName !== "BODY" ? true : undefined
  } : null
  const around = (e) => ({
    element: describe(e),
    parent: describe(e.parentElement),
    siblings: e.parentElement ? Array.from(e.parentElement.children).filter((s) => s !== e).slice(0, 8).map(describe) : []
  })
  let found = []
  if (needle) {
    for (const e of document.querySelectorAll("body *")) {
      if (found.length >= 5) break
      if (e.children.length > 3) continue
      const hay = [e.innerText, e.getAttribute("aria-label"), e.getAttribute("placeholder"), e.getAttribute("name"), e.id, e.getAttribute("title")]
        .filter(Boolean).join(" ").toLowerCase()
      if (hay.includes(needle)) found.push(e)
    }
  }
  const focused = document.activeElement && document.activeElement !== document.body ? document.activeElement : null
  return JSON.stringify({
    url: location.href,
    looked_for: needle || null,
    matches: found.map(around),
    focused: focused ? around(focused) : null
  })
})()`

/** The words a failure looked for: the quoted part of `button named "Submit"`, else the whole target. */
export const needleOf = (target: string | undefined) => {
  if (target === undefined || target === "") return undefined
  const quoted = /"([^"]+)"/.exec(target)?.[1]
  return (quoted ?? target).slice(0, 100)
}

/** The full accessibility tree (compacted) and the DOM around the failure; redacted by the writer. */
export const failureSnapshot = (page: PageRun, lookedFor?: string) =>
  page((cdp, sessionId) =>
    Effect.gen(function* () {
      const tree = yield* cdp.send("Accessibility.getFullAXTree", {}, sessionId).pipe(
        Effect.map((r): ReadonlyArray<Protocol.Accessibility.AXNode> => r.nodes),
        Effect.orElseSucceed((): ReadonlyArray<Protocol.Accessibility.AXNode> => [])
      )
      const dom = yield* cdp
        .send(
          "Runtime.evaluate",
          { expression: domAroundExpression(needleOf(lookedFor)), returnByValue: true },
          sessionId
        )
        .pipe(
          Effect.map((r): unknown => (r.result.value ? JSON.parse(r.result.value) : null)),
          Effect.orElseSucceed(() => null)
        )
      // A text field's typed value also shows as the name of its text children: keep the field, drop those.
      const hidden = new Set<string>()
      const byId = new Map(tree.map((n) => [n.nodeId, n]))
      const hide = (id: string) => {
        hidden.add(id)
        for (const child of byId.get(id)?.childIds ?? []) hide(child)
      }
      for (const n of tree) {
        if (["textbox", "searchbox", "combobox", "spinbutton"].includes(n.role?.value ?? "")) {
          for (const child of n.childIds ?? []) hide(child)
        }
      }
      return {
        accessibilityTree: tree
          .filter((n) => !n.ignored && !hidden.has(n.nodeId))
          .map((n) => ({
            id: n.nodeId,
            role: n.role?.value,
            name: n.name?.value || undefined,
            value: n.value?.value,
            children: n.childIds?.length ? n.childIds : undefined
          })),
        dom
      }
    })
  )
