import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as Instruction from "../../src/Engine/Instruction.ts"

const parsed = (input: string) => {
  const result = Instruction.parse(input)
  if (Result.isFailure(result)) return assert.fail(`"${input}" did not parse: ${result.failure.message}`)
  return result.success
}

const rejected = (input: string) => {
  const result = Instruction.parse(input)
  if (Result.isSuccess(result)) return assert.fail(`"${input}" parsed as ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("Instruction.parse", () => {
  it("reads every documented form, with or without quotes", () => {
    const cases: ReadonlyArray<readonly [string, Instruction.Instruction]> = [
      ['click "Submit"', { kind: "click", double: false, target: "Submit" }],
      ["click Submit", { kind: "click", double: false, target: "Submit" }],
      ["Click the Submit button", { kind: "click", double: false, target: "the Submit button" }],
      ['double click "Row 1"', { kind: "click", double: true, target: "Row 1" }],
      ["double-click Row 1", { kind: "click", double: true, target: "Row 1" }],
      ['fill "Email" with "a@b.c"', { kind: "fill", target: "Email", value: "a@b.c" }],
      ["fill Full name with Grace Hopper", { kind: "fill", target: "Full name", value: "Grace Hopper" }],
      ['fill in "Email" with ""', { kind: "fill", target: "Email", value: "" }],
      ['fill "Sign in with" with "x"', { kind: "fill", target: "Sign in with", value: "x" }],
      ['type "hello" into "Search"', { kind: "type", text: "hello", target: "Search" }],
      ["type sign in into Search", { kind: "type", text: "sign in", target: "Search" }],
      ["TYPE hello in Search", { kind: "type", text: "hello", target: "Search" }],
      ['type "hello"', { kind: "type", text: "hello" }],
      ['type " world"', { kind: "type", text: " world" }],
      ['select "Red" in "Colour"', { kind: "select", option: "Red", target: "Colour" }],
      ["select Dark red from Colour", { kind: "select", option: "Dark red", target: "Colour" }],
      ['check "I agree"', { kind: "check", checked: true, target: "I agree" }],
      ['upload "cv.pdf" to "Resume"', { kind: "upload", files: ["cv.pdf"], target: "Resume" }],
      [
        'upload "a b.pdf", "c.txt" into "Attachments"',
        { kind: "upload", files: ["a b.pdf", "c.txt"], target: "Attachments" }
      ],
      [
        "upload cv.pdf and letter.txt to Documents",
        { kind: "upload", files: ["cv.pdf", "letter.txt"], target: "Documents" }
      ],
      ["uncheck I agree", { kind: "check", checked: false, target: "I agree" }],
      ["press Enter", { kind: "press", key: "Enter" }],
      ["press enter", { kind: "press", key: "Enter" }],
      ["press ctrl+a", { kind: "press", key: "Control+a" }],
      ['press Enter in "Search"', { kind: "press", key: "Enter", target: "Search" }],
      ['hover "Menu"', { kind: "hover", target: "Menu" }],
      ["hover over Menu", { kind: "hover", target: "Menu" }],
      ["scroll down", { kind: "scroll", direction: "down" }],
      ["Scroll Up", { kind: "scroll", direction: "up" }],
      ["scroll to top", { kind: "scroll", direction: "top" }],
      ["scroll to bottom.", { kind: "scroll", direction: "bottom" }],
      ["go back", { kind: "history", direction: "back" }],
      ["Go Forward", { kind: "history", direction: "forward" }],
      ["click “Save draft”", { kind: "click", double: false, target: "Save draft" }]
    ]
    for (const [input, expected] of cases) assert.deepStrictEqual(parsed(input), expected, input)
  })

  it("a target may be scoped by the group, card, row or landmark it sits in", () => {
    const cases: ReadonlyArray<readonly [string, Instruction.Instruction]> = [
      [
        'check "Yes" in "Are you legally authorized to work"',
        { kind: "check", checked: true, target: "Yes", within: "Are you legally authorized to work" }
      ],
      ['click "Apply" in "Data Engineer"', { kind: "click", double: false, target: "Apply", within: "Data Engineer" }],
      [
        'click Apply within "Data Engineer"',
        { kind: "click", double: false, target: "Apply", within: "Data Engineer" }
      ],
      [
        'fill "Email" in "Billing address" with "a@b.c"',
        { kind: "fill", target: "Email", value: "a@b.c", within: "Billing address" }
      ],
      [
        'select "Red" in "Colour" in "Shipping"',
        { kind: "select", option: "Red", target: "Colour", within: "Shipping" }
      ],
      [
        'upload "cv.pdf" to "Resume" in "Documents"',
        { kind: "upload", files: ["cv.pdf"], target: "Resume", within: "Documents" }
      ],
      // Where `in` belongs to the sentence itself, it is no scope.
      ['select "Red" in "Colour"', { kind: "select", option: "Red", target: "Colour" }],
      ['press Enter in "Search"', { kind: "press", key: "Enter", target: "Search" }],
      ['type "hello" in "Search"', { kind: "type", text: "hello", target: "Search" }],
      ['click "Sign in"', { kind: "click", double: false, target: "Sign in" }]
    ]
    for (const [input, expected] of cases) assert.deepStrictEqual(parsed(input), expected, input)
  })

  it("names what it did not understand and lists the accepted forms", () => {
    const unknownVerb = rejected("dance with the Submit button")
    assert.strictEqual(unknownVerb._tag, "InvalidInput")
    assert.strictEqual(unknownVerb.field, "instruction")
    assert.include(unknownVerb.message, '"dance" is not a verb')
    assert.include(unknownVerb.message, 'fill "Email" with "a@b.c"')
    assert.include(unknownVerb.message, "go forward")

    assert.include(rejected('fill "Email" "a@b.c"').message, 'fill needs "with"')
    assert.include(rejected("click").message, "what to click is missing")
    assert.include(rejected("select Red").message, 'select needs "in" or "from"')
    assert.include(rejected("scroll sideways").message, '"sideways"')
    assert.include(rejected('click "Submit').message, "never closed")
    assert.include(rejected("press Enter twice").message, '"twice"')
    assert.include(rejected("").message, "empty")
    assert.include(rejected("go home").message, '"go"')
  })

  it("reads several options for a multi-select and set … to … for sliders and fields", () => {
    const skills: Instruction.Instruction = {
      kind: "select",
      option: "Python",
      target: "Skills",
      options: ["Python", "SQL"]
    }
    assert.deepStrictEqual(parsed('select "Python", "SQL" in "Skills"'), skills)
    assert.deepStrictEqual(parsed('select "Python","SQL" in "Skills"'), skills)
    assert.deepStrictEqual(parsed('select "Python" and "SQL" in "Skills"'), skills)
    assert.deepStrictEqual(parsed('select "Go", "Rust" and "SQL" from Skills'), {
      kind: "select",
      option: "Go",
      target: "Skills",
      options: ["Go", "Rust", "SQL"]
    })
    // Unquoted words stay one option, commas and all.
    assert.deepStrictEqual(parsed("select Research and Development in Department"), {
      kind: "select",
      option: "Research and Development",
      target: "Department"
    })
    assert.deepStrictEqual(parsed('set "Salary" to 95'), { kind: "fill", target: "Salary", value: "95" })
    assert.deepStrictEqual(parsed('set "Distance to work" to "12"'), {
      kind: "fill",
      target: "Distance to work",
      value: "12"
    })
    assert.deepStrictEqual(parsed("set Salary to -5"), { kind: "fill", target: "Salary", value: "-5" })
    assert.include(rejected('set "Salary" 95').message, 'set needs "to"')
    assert.include(rejected('set "Salary" to').message, "the value is missing")
  })

  it("makes a member of the Instruction Schema of every accepted form, and a Said carries it as it was parsed", () => {
    const forms = [
      ...Instruction.acceptedForms.filter((form) => !form.includes("|") && !form.includes("[")),
      'press Enter in "Search"',
      "scroll to bottom",
      'check "Yes" in "Are you 18 or older?"'
    ]
    for (const form of forms) {
      const sentence = parsed(form)
      assert.isTrue(Schema.is(Instruction.Instruction)(sentence), `${form}: ${JSON.stringify(sentence)}`)
      // Encoded and decoded through its Schema, the sentence is unchanged: a plain value to log, store or send.
      const encoded = Schema.encodeSync(Instruction.Instruction)(sentence)
      assert.deepStrictEqual(
        Schema.decodeUnknownSync(Instruction.Instruction)(JSON.parse(JSON.stringify(encoded))),
        sentence
      )
      assert.deepStrictEqual(Instruction.said(form).parsed, Result.succeed(sentence))
    }
    assert.isFalse(Schema.is(Instruction.Instruction)({ kind: "scroll", direction: "sideways" }))
  })
})
