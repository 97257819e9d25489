import { assert, describe, it } from "@effect/vitest"
import type { Element } from "../../../../src/Engine/AccessibilityTree.ts"
import type { Child } from "../../../../src/Engine/Playwright/Elements/Nodes.ts"
import { type FrameHints, fromSnapshot } from "../../../../src/Engine/Playwright/Elements/Snapshot.ts"

const box = (x: number, y: number, width: number, height: number) => ({ x, y, width, height })
const byRef = (elements: ReadonlyArray<Element>) => new Map(elements.map((e) => [e.ref, e]))
const page = (children: ReadonlyArray<Child>, hints?: FrameHints) =>
  byRef(
    fromSnapshot(
      [{ role: "generic", ref: "e0", box: box(0, 0, 1000, 2000), children }],
      new Map(),
      hints === undefined ? new Map() : new Map([["", hints]])
    )
  )

describe("Elements.fromSnapshot: names", () => {
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

  it("a row of labels above a row of inputs names each input by the label in its column, not by a heading", () => {
    const elements = page([
      { role: "heading", name: "Compensation", ref: "e1", box: box(0, 0, 1000, 30) },
      {
        role: "generic",
        ref: "e2",
        box: box(0, 50, 1000, 50),
        children: [
          { role: "generic", ref: "e3", text: "Current salary", box: box(0, 50, 490, 18) },
          { role: "generic", ref: "e4", text: "Expected salary", box: box(510, 50, 490, 18) },
          { role: "textbox", ref: "e5", box: box(0, 74, 490, 21) },
          { role: "textbox", ref: "e6", box: box(510, 74, 490, 21) }
        ]
      }
    ])
    assert.strictEqual(elements.get("e5")?.name, "Current salary")
    assert.strictEqual(elements.get("e6")?.name, "Expected salary")
  })

  it("the label a person reads beats a placeholder when it sits in the field's column", () => {
    const elements = page(
      [
        {
          role: "generic",
          ref: "e2",
          box: box(0, 50, 1000, 50),
          children: [
            { role: "generic", ref: "e3", text: "Current salary", box: box(0, 50, 490, 18) },
            { role: "generic", ref: "e4", text: "Expected salary", box: box(510, 50, 490, 18) },
            { role: "textbox", name: "e.g. 50000", ref: "e5", box: box(0, 74, 490, 21) },
            { role: "textbox", name: "e.g. 50000", ref: "e6", box: box(510, 74, 490, 21) }
          ]
        }
      ],
      { files: [], unlabelled: [box(0, 74, 490, 21), box(510, 74, 490, 21)], extras: [] }
    )
    assert.strictEqual(elements.get("e5")?.name, "Current salary")
    assert.deepStrictEqual(elements.get("e5")?.also, ["e.g. 50000"])
    assert.strictEqual(elements.get("e6")?.name, "Expected salary")
  })

  it("a placeholder keeps naming its field against a text further along the line; a label right beside it wins", () => {
    const elements = page(
      [
        {
          role: "generic",
          ref: "e1",
          box: box(0, 0, 1000, 40),
          children: [
            { role: "generic", ref: "e2", text: "Acme Careers", box: box(0, 10, 120, 20) },
            { role: "textbox", name: "Search jobs", ref: "e3", box: box(300, 10, 300, 21) }
          ]
        },
        {
          role: "generic",
          ref: "e4",
          box: box(0, 60, 1000, 40),
          children: [
            { role: "generic", ref: "e5", text: "Email:", box: box(0, 62, 50, 18) },
            { role: "textbox", name: "you@example.com", ref: "e6", box: box(58, 60, 300, 21) }
          ]
        }
      ],
      { files: [], unlabelled: [box(300, 10, 300, 21), box(58, 60, 300, 21)], extras: [] }
    )
    assert.strictEqual(elements.get("e3")?.name, "Search jobs")
    assert.deepStrictEqual(elements.get("e3")?.also, ["Acme Careers"])
    assert.strictEqual(elements.get("e6")?.name, "Email")
    assert.deepStrictEqual(elements.get("e6")?.also, ["you@example.com"])
  })

  it("a label laid over its input names it; so does a label placed under it", () => {
    const elements = page([
      { role: "heading", name: "Contact details", ref: "e1", box: box(0, 0, 1000, 30) },
      {
        role: "generic",
        ref: "e2",
        box: box(0, 40, 400, 40),
        children: [
          { role: "textbox", ref: "e3", box: box(0, 40, 400, 40) },
          { role: "generic", ref: "e4", text: "Email", box: box(8, 42, 40, 12) }
        ]
      },
      {
        role: "generic",
        ref: "e5",
        box: box(0, 90, 400, 40),
        children: [
          { role: "textbox", ref: "e6", box: box(0, 90, 400, 40) },
          { role: "generic", ref: "e7", text: "Phone", box: box(8, 92, 40, 12) }
        ]
      },
      {
        role: "generic",
        ref: "e8",
        box: box(0, 200, 400, 40),
        children: [
          { role: "textbox", ref: "e9", box: box(0, 200, 300, 21) },
          { role: "generic", ref: "e10", text: "City", box: box(0, 223, 300, 14) }
        ]
      }
    ])
    assert.strictEqual(elements.get("e3")?.name, "Email")
    assert.strictEqual(elements.get("e6")?.name, "Phone")
    assert.strictEqual(elements.get("e9")?.name, "City")
  })

  it("a file input takes the text beside it, and keeps the browser's button text as another name", () => {
    const elements = page(
      [
        {
          role: "generic",
          ref: "e1",
          box: box(0, 0, 600, 21),
          children: ["Your CV", { role: "button", name: "Choose File", ref: "e2", box: box(60, 0, 250, 21) }]
        },
        { role: "button", name: "Resume", ref: "e3", box: box(0, 40, 250, 21) }
      ],
      { files: [box(60, 0, 250, 21), box(0, 40, 250, 21)], unlabelled: [box(60, 0, 250, 21)], extras: [] }
    )
    assert.strictEqual(elements.get("e2")?.name, "Your CV")
    assert.deepStrictEqual(elements.get("e2")?.also, ["Choose File"])
    assert.strictEqual(elements.get("e3")?.name, "Resume")
    assert.isTrue(elements.get("e2")?.upload)
    assert.isTrue(elements.get("e3")?.upload)
  })
})

describe("Elements.fromSnapshot: context", () => {
  it("a choice carries its question: a fieldset's legend, or the text before a set of choices", () => {
    const elements = page([
      {
        role: "form",
        name: "Apply",
        ref: "e1",
        children: [
          {
            role: "group",
            name: "Are you legally authorized to work?",
            ref: "e2",
            children: [
              { role: "radio", name: "Yes", ref: "e3" },
              { role: "radio", name: "No", ref: "e4" }
            ]
          },
          {
            role: "generic",
            ref: "e5",
            children: [
              { role: "paragraph", ref: "e6", text: "Do you need sponsorship?" },
              { role: "generic", ref: "e7", children: [{ role: "radio", name: "Yes", ref: "e8" }, "Yes"] },
              { role: "generic", ref: "e9", children: [{ role: "radio", name: "No", ref: "e10" }, "No"] }
            ]
          }
        ]
      }
    ])
    assert.strictEqual(elements.get("e3")?.context, 'group "Are you legally authorized to work?" in form "Apply"')
    assert.deepStrictEqual(elements.get("e3")?.around, [
      { kind: "group", name: "Are you legally authorized to work?" },
      { kind: "form", name: "Apply" }
    ])
    assert.strictEqual(elements.get("e8")?.context, 'group "Do you need sponsorship?" in form "Apply"')
  })

  it("a button carries the heading of its card, the first cell of its row, its dialog and its landmark", () => {
    const card = (ref: number, title: string) => ({
      role: "listitem",
      ref: `e${ref}`,
      children: [
        { role: "heading", name: title, ref: `e${ref + 1}` },
        { role: "paragraph", ref: `e${ref + 2}`, text: "Remote" },
        { role: "button", name: "Apply", ref: `e${ref + 3}` }
      ]
    })
    const elements = page([
      { role: "navigation", ref: "e1", children: [{ role: "link", name: "Jobs", ref: "e2" }] },
      { role: "list", ref: "e3", children: [card(10, "Data Engineer"), card(20, "Analytics Engineer")] },
      {
        role: "table",
        ref: "e30",
        children: [
          {
            role: "row",
            ref: "e31",
            children: [
              { role: "cell", name: "Jane Doe", ref: "e32" },
              { role: "cell", ref: "e33", children: [{ role: "button", name: "Edit", ref: "e34" }] }
            ]
          }
        ]
      },
      { role: "dialog", name: "Confirm", ref: "e40", children: [{ role: "button", name: "OK", ref: "e41" }] }
    ])
    assert.strictEqual(elements.get("e2")?.context, "navigation")
    assert.strictEqual(elements.get("e13")?.context, 'card "Data Engineer"')
    assert.strictEqual(elements.get("e23")?.context, 'card "Analytics Engineer"')
    assert.strictEqual(elements.get("e34")?.context, 'row "Jane Doe"')
    assert.strictEqual(elements.get("e41")?.context, 'dialog "Confirm"')
  })

  it("blocks that each carry a heading, and headings that divide a flat form, name sections", () => {
    const elements = page([
      {
        role: "generic",
        ref: "e1",
        children: [
          { role: "heading", name: "Billing address", ref: "e2" },
          { role: "textbox", name: "Email", ref: "e3" },
          { role: "heading", name: "Shipping address", ref: "e4" },
          { role: "textbox", name: "Email", ref: "e5" }
        ]
      },
      {
        role: "generic",
        ref: "e6",
        children: [
          {
            role: "generic",
            ref: "e7",
            children: [
              { role: "heading", name: "Data Engineer", ref: "e8" },
              { role: "button", name: "Apply", ref: "e9" }
            ]
          },
          {
            role: "generic",
            ref: "e10",
            children: [
              { role: "heading", name: "QA Engineer", ref: "e11" },
              { role: "button", name: "Apply", ref: "e12" }
            ]
          }
        ]
      }
    ])
    assert.strictEqual(elements.get("e3")?.context, 'section "Billing address"')
    assert.strictEqual(elements.get("e5")?.context, 'section "Shipping address"')
    assert.strictEqual(elements.get("e9")?.context, 'section "Data Engineer"')
    assert.strictEqual(elements.get("e12")?.context, 'section "QA Engineer"')
  })
})

describe("Elements.fromSnapshot: what the DOM scan adds", () => {
  it("a clickable word inside a sentence becomes a control; a focusable element the snapshot shows becomes one", () => {
    const elements = page(
      [
        { role: "generic", ref: "e1", text: 'Click on the link "dolor".', box: box(0, 0, 160, 40) },
        { role: "generic", ref: "e2", text: "Lorem ipsum dolor sit amet", box: box(0, 50, 160, 40) },
        { role: "generic", ref: "e3", text: "Toggle details", box: box(0, 100, 160, 20) }
      ],
      {
        files: [],
        unlabelled: [],
        extras: [
          { ref: "x1", role: "generic", name: "dolor", box: box(70, 52, 30, 14) },
          { ref: "x2", role: "generic", name: "Toggle details", box: box(0, 100, 160, 20) },
          { ref: "x3", role: "slider", name: "", box: box(10, 150, 10, 14) }
        ]
      }
    )
    assert.strictEqual(elements.get("x1")?.name, "dolor")
    assert.isTrue(elements.get("x1")?.clickable)
    assert.isTrue(elements.get("e3")?.clickable)
    assert.isUndefined(elements.get("x2"), "an element the snapshot shows keeps the snapshot's reference")
    assert.strictEqual(elements.get("x3")?.role, "slider")
    assert.isFalse(elements.get("e2")?.clickable)
  })
})
