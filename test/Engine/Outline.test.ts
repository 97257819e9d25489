/**
 * The page outline's rules on snapshot trees as Playwright gives them: names come from the element model, wrappers
 * and label echoes fold away, a budget is never exceeded and says what it left out, find returns whole subtrees, and
 * changes are told against the previous outline.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Element } from "../../src/Engine/AccessibilityTree.ts"
import { fromSnapshot } from "../../src/Engine/Playwright/Elements/Snapshot.ts"
import type { Child, Reading } from "../../src/Engine/Playwright/Elements.ts"
import * as Outline from "../../src/Engine/Playwright/Outline.ts"

const reading = (tree: ReadonlyArray<Child>, extra: ReadonlyArray<Element> = []): Reading => ({
  tree,
  frameTitles: new Map([["e90", "Payment"]]),
  elements: [...fromSnapshot(tree, new Map([["e90", "Payment"]])), ...extra]
})

const form = (name: string, checked: boolean): ReadonlyArray<Child> => [
  {
    role: "generic",
    ref: "e1",
    children: [
      {
        role: "form",
        name: "Sign up",
        ref: "e2",
        children: [
          "Full name",
          { role: "textbox", name: "Full name", ref: "e3", ...(name === "" ? {} : { text: name }) },
          { role: "generic", ref: "e4", text: "Username" },
          { role: "textbox", ref: "e5" },
          {
            role: "generic",
            ref: "e6",
            children: [{ role: "checkbox", name: "I agree", ref: "e7", checked }, "I agree"]
          }
        ]
      },
      {
        role: "list",
        ref: "e10",
        children: Array.from({ length: 40 }, (_, i) => ({
          role: "listitem",
          ref: `e${20 + i}`,
          children: [{ role: "link", name: `Job ${i}`, ref: `e${100 + i}`, cursor: "pointer" }]
        }))
      },
      { role: "iframe", ref: "e90", children: [{ role: "textbox", name: "Card", ref: "f1e2" }] }
    ]
  }
]

describe("Outline", () => {
  it("names unnamed fields as the element model does, and drops wrappers and label text", () => {
    const text = Outline.render(Outline.outline(reading(form("", false))), 100_000).text
    assert.include(text, '- form "Sign up" [ref=e2]\n  - textbox "Full name" [ref=e3]\n  - textbox "Username" [ref=e5]')
    assert.notInclude(text, "text: Full name")
    assert.notInclude(text, "generic")
    assert.include(text, '- iframe "Payment" [ref=e90]\n  - textbox "Card" [ref=f1e2]')
  })

  it("stays within any budget, opens the top of the page first and says what each closed part holds", () => {
    const roots = Outline.outline(reading(form("", false)))
    for (const budget of [120, 300, 600, 1_000, 2_000]) {
      const shown = Outline.render(roots, budget)
      assert.isAtMost(Buffer.byteLength(shown.text), budget, `${budget}: ${shown.text}`)
      assert.isAbove(shown.collapsed, 0)
    }
    const shown = Outline.render(roots, 400)
    assert.include(shown.text, '- form "Sign up" [ref=e2]\n  - textbox')
    assert.match(shown.text, /- list \[ref=e10\] \[\+80 lines: 40 link\]/)
    assert.strictEqual(shown.hiddenLines, 80)
  })

  it("find returns whole subtrees: by reference, by role, by words", () => {
    const roots = Outline.outline(reading(form("", false)))
    assert.lengthOf(Outline.find(roots, "e10")[0]!.node.children, 40)
    assert.deepStrictEqual(
      Outline.find(roots, "textbox").map((f) => f.node.name),
      ["Full name", "Username", "Card"]
    )
    const job = Outline.find(roots, "job 7")
    assert.deepStrictEqual(
      job.map((f) => f.node.line),
      ['link "Job 7" [ref=e107]']
    )
    assert.strictEqual(Outline.where(job[0]!.path), "list > listitem")
  })

  it("since: the lines that changed, under where they are; nothing when nothing did", () => {
    const before = Outline.linesOf("u", Outline.outline(reading(form("", false))))
    const after = Outline.outline(reading(form("Ada", true)))
    const changes = Outline.diff(before, after)
    assert.deepStrictEqual([changes.added, changes.removed, changes.changed], [0, 0, 2])
    assert.strictEqual(
      changes.text,
      '# in form "Sign up"\n~ - textbox "Full name" [ref=e3]: Ada\n~ - checkbox "I agree" [ref=e7] [checked]\n'
    )
    assert.strictEqual(Outline.diff(Outline.linesOf("u", after), after).text, "")
  })
})
