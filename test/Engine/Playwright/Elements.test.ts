import { assert, describe, it } from "@effect/vitest"
import { refOf } from "../../../src/Engine/Playwright/Elements.ts"

describe("Elements.refOf", () => {
  it("reads references written bare or as a selector, and nothing else", () => {
    assert.strictEqual(refOf("e12"), "e12")
    assert.strictEqual(refOf("aria-ref=f2e5"), "f2e5")
    assert.strictEqual(refOf("x3"), "x3")
    assert.isUndefined(refOf("button.e12"))
    assert.isUndefined(refOf("xpath=/html/body"))
  })
})
