import { assert, describe, it } from "@effect/vitest"
import * as AccessibilityTree from "../../src/Engine/AccessibilityTree.ts"

const el = (ref: string, role: string, name: string, more: Partial<AccessibilityTree.Element> = {}) =>
  ({
    ref,
    role,
    name,
    also: [],
    within: [],
    clickable: false,
    disabled: false,
    ...more
  }) satisfies AccessibilityTree.Element

const pick = (elements: ReadonlyArray<AccessibilityTree.Element>, verb: AccessibilityTree.Verb, target: string) =>
  AccessibilityTree.choose(AccessibilityTree.rank(elements, verb, target))

const chosen = (choice: AccessibilityTree.Choice) => (choice._tag === "one" ? choice.chosen.element.ref : choice._tag)

describe("AccessibilityTree: the fuzzy-match rule", () => {
  const form = [
    el("e1", "textbox", "Full name"),
    el("e2", "textbox", "Email address"),
    el("e3", "button", "Submit application")
  ]

  it("a different field that shares a word is suggested, never acted on", () => {
    const choice = pick(form, "fill", "Middle name")
    if (choice._tag !== "none") return assert.fail(`expected no target, got ${choice._tag}`)
    assert.deepStrictEqual(
      choice.closest.map((s) => s.element.name),
      ["Full name"]
    )
  })

  it("a name holding every word of the target, and only one, is the same thing", () => {
    assert.strictEqual(chosen(pick(form, "fill", "Full name")), "e1")
    assert.strictEqual(chosen(pick(form, "fill", "Email")), "e2")
    assert.strictEqual(chosen(pick(form, "click", "Submit")), "e3")
    assert.strictEqual(chosen(pick(form, "fill", "the email field")), "e2")
  })

  it("two names holding the words are ambiguous; a part of a word is only a suggestion", () => {
    const two = [el("e1", "textbox", "Work email"), el("e2", "textbox", "Personal email")]
    assert.strictEqual(chosen(pick(two, "fill", "email")), "ambiguous")
    assert.strictEqual(chosen(pick([el("e1", "button", "Submitting")], "click", "Submit")), "none")
  })

  it("an exact name beats a longer one, and the exact case of the quote beats another case", () => {
    const buttons = [el("e1", "button", "Ok"), el("e2", "button", "ok"), el("e3", "button", "Ok, got it")]
    assert.strictEqual(chosen(pick(buttons, "click", "Ok")), "e1")
    assert.strictEqual(chosen(pick(buttons, "click", "ok")), "e2")
    assert.strictEqual(chosen(pick(buttons, "click", "OK")), "ambiguous")
  })

  it("a control nested in a same-named control is one target; a button beats a heading of the same name", () => {
    const tabs = [
      el("e1", "tab", "Overview"),
      el("e2", "link", "Overview", { within: ["e1"] }),
      el("e3", "tab", "Jobs")
    ]
    assert.strictEqual(chosen(pick(tabs, "click", "Overview")), "e2")
    const page = [el("e1", "heading", "Apply"), el("e2", "button", "Apply now")]
    assert.strictEqual(chosen(pick(page, "click", "Apply")), "e2")
  })

  it("an untied label beside a field names it as well as its placeholder", () => {
    const fields = [el("e1", "textbox", "you@example.com", { also: ["Email"] }), el("e2", "textbox", "Phone")]
    assert.strictEqual(chosen(pick(fields, "fill", "Email")), "e1")
  })

  it("symbols and emoji are compared as written", () => {
    const buttons = [el("e1", "button", "♥♥"), el("e2", "button", "♥♥♥"), el("e3", "button", "👍 Like")]
    assert.strictEqual(chosen(pick(buttons, "click", "♥♥♥")), "e2")
    assert.strictEqual(chosen(pick(buttons, "click", "♥♥")), "e1")
    assert.strictEqual(chosen(pick(buttons, "click", "👍")), "e3")
  })

  it("in scripts written without spaces, a label that starts with the target holds it", () => {
    const fields = [
      el("e1", "textbox", "氏名必須"),
      el("e2", "textbox", "メールアドレス必須"),
      el("e3", "textbox", "电话号码")
    ]
    assert.strictEqual(chosen(pick(fields, "fill", "氏名")), "e1")
    assert.strictEqual(chosen(pick(fields, "fill", "メールアドレス")), "e2")
    assert.strictEqual(chosen(pick(fields, "fill", "号码")), "none")
  })
})

describe("AccessibilityTree: context", () => {
  const group = (name: string) => [{ kind: "group", name }]
  const radios = [
    el("e1", "radio", "Yes", { around: group("Are you legally authorized to work in the country?") }),
    el("e2", "radio", "No", { around: group("Are you legally authorized to work in the country?") }),
    el("e3", "radio", "Yes", { around: group("Will you require sponsorship?") }),
    el("e4", "radio", "No", { around: group("Will you require sponsorship?") })
  ]

  it("a scope keeps the elements whose group, card or row it names, by the same rule as names", () => {
    const yes = pick(AccessibilityTree.inScope(radios, "Are you legally authorized to work"), "check", "Yes")
    assert.strictEqual(chosen(yes), "e1")
    assert.strictEqual(chosen(pick(AccessibilityTree.inScope(radios, "sponsorship"), "check", "No")), "e4")
    assert.deepStrictEqual(AccessibilityTree.inScope(radios, "visa"), [])
    const cards = [
      el("e5", "button", "Apply", { around: [{ kind: "card", name: "Senior Data Engineer" }] }),
      el("e6", "button", "Apply", { around: [{ kind: "card", name: "Data Engineer" }] })
    ]
    assert.strictEqual(chosen(pick(AccessibilityTree.inScope(cards, "Data Engineer"), "click", "Apply")), "e6")
    assert.strictEqual(chosen(pick(AccessibilityTree.inScope(cards, "the Data Engineer card"), "click", "Apply")), "e6")
  })

  it("a description names what an element sits in", () => {
    const e = el("e1", "radio", "Yes", { context: 'group "Are you 18?" in form "Apply"' })
    assert.strictEqual(AccessibilityTree.describeRef(e), 'radio "Yes" in group "Are you 18?" in form "Apply" [ref=e1]')
    assert.isTrue(AccessibilityTree.mentions(radios[2]!, "the sponsorship question"))
  })
})
