import { assert, describe, it } from "@effect/vitest"
import * as Focus from "../../../src/Engine/PageFacts/Focus.ts"
import * as PageFacts from "../../../src/Engine/PageFacts.ts"

const raw: PageFacts.RawFacts = {
  url: "http://127.0.0.1/jobs",
  title: "Jobs",
  text: "Open positions\nSalary: 90k to 120k\nBenefits: remote work\nApply now",
  textLength: 66,
  headings: ["Open positions"],
  links: [{ text: "Sign in", href: "http://127.0.0.1/login" }],
  fields: [{ label: "Search", name: "q", id: "q", box: undefined, type: "text", value: "" }],
  items: ["Platform engineer", "Security analyst", "Product designer"],
  pairs: [{ label: "Started", value: "March 25, 2026" }],
  tables: undefined
}
const controls: ReadonlyArray<PageFacts.Control> = [
  { ref: "e1", role: "button", name: "Apply now" },
  { ref: "e2", role: "link", name: "Sign in" },
  { ref: "e3", role: "textbox", name: "Search", value: "" }
]

describe("Focus.focus: what an extract instruction asks for", () => {
  it("a kind of thing: the repeated items' titles, the buttons, the links, the fields", () => {
    assert.deepStrictEqual(Focus.focus("the job titles", raw, controls), raw.items)
    assert.deepStrictEqual(Focus.focus("list the buttons", raw, controls), [controls[0]])
    assert.deepStrictEqual(Focus.focus("links", raw, controls), raw.links)
    assert.deepStrictEqual(Focus.focus("the form fields", raw, controls), [
      { label: "Search", name: "q", type: "text", value: "" }
    ])
  })

  it("else the lines that mention the instruction's words; the whole page for a general instruction", () => {
    assert.deepStrictEqual(Focus.focus("what is the salary?", raw, controls), ["Salary: 90k to 120k"])
    assert.isUndefined(Focus.focus("", raw, controls))
    assert.isUndefined(Focus.focus("the page", raw, controls))
    assert.isUndefined(Focus.focus("everything", raw, controls))
    assert.isUndefined(Focus.focus("zebra crossings", raw, controls))
  })

  it("a label ending in a colon comes with the value on the next line; lines are found anywhere in the text", () => {
    const long = {
      ...raw,
      text: [
        "Open positions",
        ...Array.from({ length: 5_000 }, (_, i) => `Filler line ${i}`),
        "Last reward:",
        "0.97"
      ].join("\n")
    }
    assert.deepStrictEqual(Focus.focus("the reward", long, controls), ["Last reward: 0.97"])
  })

  it("a text cut short says where it was cut", () => {
    assert.isUndefined(PageFacts.toFacts(raw).truncated)
    assert.deepStrictEqual(PageFacts.toFacts({ ...raw, textLength: 200_000 }).truncated, {
      shown: raw.text.length,
      total: 200_000,
      nextOffset: raw.text.length
    })
  })

  it("a term and its description come as one line", () => {
    assert.deepStrictEqual(Focus.focus("when did it start", { ...raw, text: "Started\nMarch 25, 2026" }, controls), [
      "Started: March 25, 2026"
    ])
  })

  it("an instruction naming a table gets the tables its words name, else every table", () => {
    const schedule = { name: "Interview schedule", headers: ["Round", "Date"], rows: [["Phone screen", "March 3"]] }
    const files = { name: "Documents", headers: ["File"], rows: [["cv.pdf"]] }
    const withTables = { ...raw, tables: [schedule, files] }
    assert.deepStrictEqual(Focus.tablesFor("the interview schedule table", withTables), [schedule])
    assert.deepStrictEqual(Focus.tablesFor("the tables", withTables), [schedule, files])
    assert.isUndefined(Focus.tablesFor("the salary", withTables))
    assert.isTrue(Focus.asksForTable("read the table of documents"))
    assert.isFalse(Focus.asksForTable("the salary"))
  })
})
