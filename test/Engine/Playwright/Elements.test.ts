import { assert, describe, it } from "@effect/vitest"
import { fromSnapshot, refOf } from "../../../src/Engine/Playwright/Elements.ts"

describe("Elements.fromSnapshot", () => {
  it("names unnamed controls from the text beside or above them, and keeps references", () => {
    const elements = fromSnapshot([
      {
        role: "generic",
        ref: "e1",
        children: [
          { role: "generic", ref: "e2", text: "Username" },
          { role: "textbox", ref: "e3" },
          "Email *",
          { role: "textbox", name: "you@example.com", ref: "e4" },
          { role: "checkbox", ref: "e5" },
          "I agree",
          {
            role: "table",
            ref: "e6",
            children: [
              {
                role: "row",
                ref: "e7",
                children: [
                  { role: "cell", name: "Salary", ref: "e8" },
                  { role: "cell", ref: "e9", children: [{ role: "spinbutton", ref: "e10", text: "3" }] }
                ]
              }
            ]
          },
          { role: "generic", ref: "e11", cursor: "pointer", text: "Save draft" },
          { role: "iframe", name: "Apply", ref: "e12", children: [{ role: "button", name: "Next", ref: "f1e1" }] }
        ]
      }
    ])
    const byRef = new Map(elements.map((e) => [e.ref, e]))
    assert.strictEqual(byRef.get("e3")?.name, "Username")
    assert.strictEqual(byRef.get("e4")?.name, "you@example.com")
    assert.deepStrictEqual(byRef.get("e4")?.also, ["Email"])
    assert.strictEqual(byRef.get("e5")?.name, "I agree")
    assert.strictEqual(byRef.get("e5")?.checked, false)
    assert.strictEqual(byRef.get("e10")?.name, "Salary")
    assert.strictEqual(byRef.get("e10")?.value, "3")
    assert.strictEqual(byRef.get("e11")?.clickable, true)
    assert.strictEqual(byRef.get("e11")?.name, "Save draft")
    assert.strictEqual(byRef.get("f1e1")?.frame, 'iframe "Apply"')
  })

  it("reads references written bare or as a selector, and nothing else", () => {
    assert.strictEqual(refOf("e12"), "e12")
    assert.strictEqual(refOf("aria-ref=f2e5"), "f2e5")
    assert.strictEqual(refOf("x3"), "x3")
    assert.isUndefined(refOf("button.e12"))
    assert.isUndefined(refOf("xpath=/html/body"))
  })
})
