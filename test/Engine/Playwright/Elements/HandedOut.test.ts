import { assert, describe, it } from "@effect/vitest"
import type { Element } from "../../../../src/Engine/AccessibilityTree.ts"
import * as HandedOut from "../../../../src/Engine/Playwright/Elements/HandedOut.ts"

const element = (ref: string, name = ref): Element => ({
  ref,
  role: "button",
  name,
  also: [],
  within: [],
  clickable: true,
  disabled: false
})
const read = (from: number, count: number) => Array.from({ length: count }, (_, i) => element(`e${from + i}`))

describe("Elements.HandedOut", () => {
  it("keeps every reference of the last read, however many, and drops the oldest earlier ones past the bound", () => {
    const handed = HandedOut.make(3)
    handed.add(read(1, 4))
    handed.add(read(5, 10))
    for (let ref = 5; ref <= 14; ref++) assert.isTrue(handed.has(`e${ref}`), `e${ref}`)
    // Three earlier ones stay: the newest of the first read.
    assert.deepStrictEqual(
      [1, 2, 3, 4].map((n) => handed.has(`e${n}`)),
      [false, true, true, true]
    )
  })

  it("a reference read again is as recent as its read, and described as last read", () => {
    const handed = HandedOut.make(3)
    handed.add([element("e1", "Send"), ...read(2, 2)])
    handed.add(read(4, 2))
    handed.add([element("e1", "Submit")])
    assert.strictEqual(handed.get("e1")?.name, "Submit")
    assert.deepStrictEqual(
      [2, 3, 4, 5].map((n) => handed.has(`e${n}`)),
      [false, true, true, true]
    )
    handed.add(read(6, 1))
    handed.add(read(7, 1))
    // e1 was first handed out before e3 and e4, but read after them.
    assert.isTrue(handed.has("e1"))
    assert.isFalse(handed.has("e3"))
    assert.isFalse(handed.has("e4"))
  })

  it("a long session stays bounded", () => {
    const handed = HandedOut.make()
    for (let page = 0; page < 500; page++) handed.add(read(page * 20, 20))
    const kept = Array.from({ length: 500 * 20 }, (_, n) => handed.has(`e${n}`)).filter(Boolean).length
    assert.strictEqual(kept, HandedOut.keptEarlier + 20)
  })
})
