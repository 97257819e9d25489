/**
 * Screenshots a model accepts: model APIs refuse images over 8,000 px a side or about 5 MB, so a capture past either
 * is scaled down (to no less than half its size) or, where that would leave it unreadable (a very long page), clipped
 * to its top; the answer says which. Done on the PNG itself, so every engine's capture keeps the same limits.
 * Why sharp: decoding, resampling and re-encoding a PNG of millions of pixels is libvips' work, not a hand loop's.
 */
import { Context, Effect } from "effect"

export interface Limits {
  /** The longest side an image may have, in pixels. */
  readonly maxPx: number
  /** The largest image as it is sent (base64), in bytes. */
  readonly maxBytes: number
}

export const defaults: Limits = { maxPx: 8_000, maxBytes: 5 * 1024 * 1024 }

/** The limits of the session a call runs in; the defaults unless the service is configured otherwise. */
export const CurrentLimits = Context.Reference<Limits>("switchyard/ScreenshotLimits", { defaultValue: () => defaults })

export interface Size {
  readonly width: number
  readonly height: number
}

/** What was done to keep an image within the limits: each step from one size to another. */
export interface Fitted {
  readonly png: Uint8Array
  /** Cut to its top-left part, at full resolution. */
  readonly clipped?: { readonly from: Size; readonly to: Size }
  /** Resampled to a smaller size, all of it kept. */
  readonly scaled?: { readonly from: Size; readonly to: Size }
}

/** Width and height from a PNG's IHDR chunk. */
export const sizeOf = (png: Uint8Array): Size => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

/** The length of the image as sent: base64. */
const sent = (bytes: number) => Math.ceil(bytes / 3) * 4

/** Below this share of its size an image is too small to read: clipped instead of scaled. */
const smallest = 0.5

/** Keeps a PNG within the limits, or returns it as it is when it already fits (or cannot be read as a PNG). */
export const fit = (png: Uint8Array, limits: Limits): Effect.Effect<Fitted> => {
  const from = sizeOf(png)
  if (Math.max(from.width, from.height) <= limits.maxPx && sent(png.byteLength) <= limits.maxBytes) {
    return Effect.succeed({ png })
  }
  return Effect.tryPromise(async () => {
    const sharp = (await import("sharp")).default
    let out: Uint8Array = png
    let size = from
    let clipped: Fitted["clipped"]
    let scaled: Fitted["scaled"]
    const scale = async (factor: number) => {
      const to = {
        width: Math.max(1, Math.floor(size.width * factor)),
        height: Math.max(1, Math.floor(size.height * factor))
      }
      out = await sharp(out, { limitInputPixels: false }).resize(to.width, to.height, { fit: "fill" }).png().toBuffer()
      scaled = { from: scaled?.from ?? size, to }
      size = to
    }
    const longest = Math.max(size.width, size.height)
    if (longest > limits.maxPx) {
      const factor = limits.maxPx / longest
      if (factor >= smallest) await scale(factor)
      else {
        const to = { width: Math.min(size.width, limits.maxPx), height: Math.min(size.height, limits.maxPx) }
        out = await sharp(out, { limitInputPixels: false })
          .extract({ left: 0, top: 0, width: to.width, height: to.height })
          .png()
          .toBuffer()
        clipped = { from: size, to }
        size = to
      }
    }
    // Too many bytes still (a busy photo page): smaller again, a few times at most.
    for (let i = 0; i < 4 && sent(out.byteLength) > limits.maxBytes; i++) {
      await scale(Math.sqrt(limits.maxBytes / sent(out.byteLength)) * 0.9)
    }
    return {
      png: new Uint8Array(out),
      ...(clipped === undefined ? {} : { clipped }),
      ...(scaled === undefined ? {} : { scaled })
    }
  }).pipe(
    Effect.catch((error) =>
      Effect.logWarning(`a screenshot past the limits could not be made smaller: ${String(error)}`).pipe(
        Effect.as({ png })
      )
    )
  )
}
