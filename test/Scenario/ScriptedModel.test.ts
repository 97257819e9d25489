/**
 * The scripted model's answers, on accessibility trees as Stagehand writes them into its prompts: the element an
 * instruction's quoted words name, with the method its verb needs; null when nothing fits; ties broken by the seed;
 * extract filled from `Label: value` lines. And the server speaks the OpenAI chat protocol.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Act from "../../src/Scenario/ScriptedModel/Act.ts"
import * as Extract from "../../src/Scenario/ScriptedModel/Extract.ts"
import * as Tree from "../../src/Scenario/ScriptedModel/Tree.ts"
import * as ScriptedModel from "../../src/Scenario/ScriptedModel.ts"

const tree = `[0-2] RootWebArea: Newsletter sign-up
  [0-8] scrollable, html
    [0-16] body
      [0-17] heading: Newsletter sign-up
      [0-3] form
        [0-19] LabelText
          [0-20] StaticText: Full name
        [0-4] textbox: Full name
        [0-23] LabelText
          [0-24] StaticText: Email
        [0-5] textbox: Email
        [0-6] select: Topic
          [0-35] MenuListPopup
            [0-37] option: Choose one [selected]
            [0-40] option: Research
        [0-7] checkbox: I agree to the terms
        [0-65] button: Subscribe
        [0-66] button: Subscribe
      [0-70] paragraph
        [0-71] StaticText: Order total: 42 EUR
      [1-17] Iframe: Payment
        [2-4] textbox: Card number
        [2-9] StaticText: Reference: APP-1197`

const lines = Tree.parseTree(tree)

const actRequest = (instruction: string) => ({
  model: "scripted-seed-3",
  messages: [
    { role: "system", content: "You are helping the user automate the browser" },
    {
      role: "user",
      content: `instruction: Find the most relevant element to perform an action on given the following action: ${instruction}.  \n  IF AND ONLY IF the action EXPLICITLY includes the word 'dropdown'\nAccessibility Tree: \n${tree}`
    }
  ],
  response_format: {
    type: "json_schema",
    json_schema: { name: "response", schema: { type: "object", properties: { action: {}, twoStep: {} } } }
  }
})

describe("ScriptedModel", () => {
  it("parses the tree: ids, roles, names without appended states", () => {
    assert.deepInclude(lines[0]!, { id: "0-2", role: "RootWebArea", name: "Newsletter sign-up" })
    assert.deepInclude(
      lines.find((l) => l.id === "0-37"),
      { role: "option", name: "Choose one" }
    )
    assert.deepInclude(
      lines.find((l) => l.id === "0-8"),
      { role: "scrollable, html", name: "" }
    )
    assert.strictEqual(lines.find((l) => l.id === "2-4")?.name, "Card number")
  })

  it("act: the verb picks the roles, the quoted words pick the element", () => {
    const act = (instruction: string) => Act.act(instruction, lines, 1)
    assert.deepStrictEqual(act('fill "Email" with "ada@example.com"'), {
      elementId: "0-5",
      description: "textbox Email",
      method: "fill",
      arguments: ["ada@example.com"]
    })
    assert.deepInclude(act('select "Research" in "Topic"'), {
      elementId: "0-6",
      method: "selectOptionFromDropdown",
      arguments: ["Research"]
    })
    assert.deepInclude(act('check "I agree to the terms"'), { elementId: "0-7", method: "click" })
    assert.deepInclude(act('fill "Card number" with "4242"'), { elementId: "2-4" })
    // Not a label: fill targets text boxes only, so the StaticText "Full name" is not chosen.
    assert.deepInclude(act('fill "Full name" with "Ada"'), { elementId: "0-4" })
    // Natural language without quotes still works when its words name one element.
    assert.deepInclude(act("click the subscribe button"), { method: "click" })
    assert.isNull(act('click "Launch rocket"'))
    assert.isNull(act("go back"), "history is no element action")
    assert.isNull(act('fill "Topic" with "x"'), "a select is no text box")
    assert.deepInclude(act("scroll to bottom"), { elementId: "0-8", method: "scrollTo", arguments: ["100%"] })
  })

  it("ties are broken by the seed: the same seed always picks the same element", () => {
    const picks = new Set<string>()
    for (let seed = 0; seed < 20; seed++) {
      const first = Act.act('click "Subscribe"', lines, seed)?.elementId
      assert.strictEqual(Act.act('click "Subscribe"', lines, seed)?.elementId, first)
      picks.add(first!)
    }
    assert.deepStrictEqual([...picks].sort(), ["0-65", "0-66"])
  })

  it("observe lists every element matching the quoted words", () => {
    const found = Act.observe('the "Subscribe" buttons and the "Email" field', lines)
    assert.deepStrictEqual(
      found.map((a) => [a.elementId, a.method]),
      [
        ["0-65", "click"],
        ["0-66", "click"],
        ["0-5", "fill"]
      ]
    )
  })

  it("extract fills the caller's schema from `Label: value` lines, typed", () => {
    const value = Extract.extract(
      {
        type: "object",
        properties: {
          orderTotal: { type: "number" },
          reference: { type: "string", description: "Reference" },
          missing: { type: "string" },
          nested: { type: "object", properties: { orderTotal: { type: "string" } } }
        }
      },
      lines
    )
    assert.deepStrictEqual(value, {
      orderTotal: 42,
      reference: "APP-1197",
      missing: null,
      nested: { orderTotal: "42 EUR" }
    })
  })

  it("answer: tells act, observe and extract apart by the requested schema; the model name carries the seed", () => {
    const reply = ScriptedModel.answer(actRequest('fill "Email" with "a@b.c"'), 0)
    assert.deepStrictEqual(reply, {
      ok: true,
      content: {
        action: { elementId: "0-5", description: "textbox Email", method: "fill", arguments: ["a@b.c"] },
        twoStep: false
      }
    })
    assert.strictEqual(ScriptedModel.kindOf({ messages: [] }), "unknown")
    const unknown = ScriptedModel.answer({ messages: [{ content: "hello" }] }, 0)
    assert.isFalse(unknown.ok)
  })

  it.live("the server answers chat completions with the JSON as message content", () =>
    Effect.gen(function* () {
      const model = yield* ScriptedModel.start
      const config = model.modelConfig(3)
      assert.strictEqual(config.model, "openai/scripted-seed-3")
      const response = yield* Effect.promise(() =>
        fetch(`${model.origin}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(actRequest('click "Subscribe"'))
        }).then((r) => r.json() as Promise<{ choices: Array<{ message: { content: string } }> }>)
      )
      const content = JSON.parse(response.choices[0]!.message.content)
      assert.strictEqual(content.action.method, "click")
      assert.strictEqual(
        content.action.elementId,
        Act.act('click "Subscribe"', lines, 3)?.elementId,
        "the seed in the model name decided"
      )
      const missing = yield* Effect.promise(() => fetch(`${model.origin}/v1/responses`, { method: "POST" }))
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(model.counts().act, 1)
    })
  )
})
