import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import sharp from "sharp"
import * as Screenshot from "../../src/Engine/Screenshot.ts"

/** A PNG of a given size: stripes, so it compresses like a page does. */
const png = (width: number, height: number, noise = false) =>
  Effect.promise(async () => {
    const raw = Buffer.alloc(width * height * 3)
    for (let i = 0; i < raw.length; i++)
      raw[i] = noise ? Math.floor(Math.random() * 256) : (Math.floor(i / (width * 3 * 40)) % 2) * 200
    return new Uint8Array(
      await sharp(raw, { raw: { width, height, channels: 3 } })
        .png()
        .toBuffer()
    )
  })

describe("Screenshot.fit", () => {
  it.effect("an image within the limits is left as it is", () =>
    Effect.gen(function* () {
      const small = yield* png(1280, 2000)
      const fitted = yield* Screenshot.fit(small, Screenshot.defaults)
      assert.strictEqual(fitted.png, small)
      assert.isUndefined(fitted.scaled)
      assert.isUndefined(fitted.clipped)
    })
  )

  it.effect("a long side past the limit is scaled down to it while that keeps half the size or more", () =>
    Effect.gen(function* () {
      const fitted = yield* Screenshot.fit(yield* png(1280, 12_000), Screenshot.defaults)
      assert.deepStrictEqual(Screenshot.sizeOf(fitted.png), { width: 853, height: 8_000 })
      assert.deepStrictEqual(fitted.scaled, {
        from: { width: 1280, height: 12_000 },
        to: { width: 853, height: 8_000 }
      })
      assert.isUndefined(fitted.clipped)
    })
  )

  it.effect("a page too long to scale readably is clipped to its top", () =>
    Effect.gen(function* () {
      const fitted = yield* Screenshot.fit(yield* png(1265, 20_000), Screenshot.defaults)
      assert.deepStrictEqual(Screenshot.sizeOf(fitted.png), { width: 1265, height: 8_000 })
      assert.deepStrictEqual(fitted.clipped, {
        from: { width: 1265, height: 20_000 },
        to: { width: 1265, height: 8_000 }
      })
    })
  )

  it.effect("an image past the byte limit is scaled down until it fits", () =>
    Effect.gen(function* () {
      const noisy = yield* png(1000, 1000, true)
      const maxBytes = 1_000_000
      assert.isAbove(Buffer.from(noisy).toString("base64").length, maxBytes)
      const fitted = yield* Screenshot.fit(noisy, { maxPx: 8_000, maxBytes })
      assert.isAtMost(Buffer.from(fitted.png).toString("base64").length, maxBytes)
      assert.deepStrictEqual(fitted.scaled?.from, { width: 1000, height: 1000 })
    })
  )
})
