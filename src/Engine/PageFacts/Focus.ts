/**
 * What an extract instruction asks for, read from the page's facts without a model: a kind of thing, a table, or the
 * lines of the page's text that mention it, each label with its value.
 */
import { answered, type Control, type RawFacts, type Table } from "../PageFacts.ts"

const generic = new Set(
  "the a an all every any list get read show give me what which are is of on in this that page from for and or with to their its there here please extract find".split(
    " "
  )
)

const words = (s: string) =>
  s
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .split(" ")
    .filter((w) => w !== "" && !generic.has(w))

/** A word's stem, roughly: "starts", "started" and "starting" are one word to a reader looking for "start". */
const singular = (w: string) =>
  w.length > 5 && w.endsWith("ing")
    ? w.slice(0, -3)
    : w.length > 5 && w.endsWith("ed")
      ? w.slice(0, -2)
      : w.length > 3 && w.endsWith("s")
        ? w.slice(0, -1)
        : w

const kinds: ReadonlyArray<readonly [ReadonlyArray<string>, (f: RawFacts, c: ReadonlyArray<Control>) => unknown]> = [
  [["button"], (_f, c) => c.filter((x) => x.role === "button" || x.role === "generic")],
  [["link"], (f) => f.links],
  [["field", "input", "form", "textbox"], (f) => f.fields.map(answered)],
  [["control", "element"], (_f, c) => c],
  [["heading", "header", "section"], (f) => f.headings],
  [["title", "name", "item", "result", "listing", "job", "position", "role", "opening", "card", "row"], (f) => f.items]
]

const tableWords = ["table", "spreadsheet", "grid", "schedule"]

/** Whether an instruction asks for a table ("the interview schedule table"): the page's tables are then read whole. */
export const asksForTable = (instruction: string) => words(instruction).some((w) => tableWords.includes(singular(w)))

/** The tables an instruction asks for: those its other words name (by caption, heading or header), else all. */
export const tablesFor = (instruction: string, raw: RawFacts): ReadonlyArray<Table> | undefined => {
  if (!asksForTable(instruction) || raw.tables === undefined || raw.tables.length === 0) return undefined
  const named = words(instruction)
    .map(singular)
    .filter((w) => !tableWords.includes(w))
  const matching = raw.tables.filter((t) => {
    const have = new Set(words([t.name ?? "", ...t.headers].join(" ")).map(singular))
    return named.some((w) => have.has(w))
  })
  return matching.length > 0 ? matching : raw.tables
}

/**
 * What an extract instruction asks for, read without a model: a kind of thing ("the buttons", "the links", "the job
 * titles" → the titles of the page's repeated items), else the lines of the whole page's text that mention the
 * instruction's words, a label ending in ":" together with the value on the line after it ("Last reward: 0.97").
 * Undefined when the instruction asks for the whole page ("", "everything", "the page").
 */
export const focus = (instruction: string, raw: RawFacts, controls: ReadonlyArray<Control>): unknown => {
  const wanted = words(instruction).map(singular)
  if (wanted.length === 0 || wanted.every((w) => ["everything", "page", "content", "text", "data"].includes(w))) {
    return undefined
  }
  for (const [names, pick] of kinds) {
    if (!wanted.some((w) => names.map(singular).includes(w))) continue
    const found = pick(raw, controls)
    if (!Array.isArray(found) || found.length > 0) return found
  }
  const lines = raw.text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
  const mentioned = (text: string) => {
    const have = new Set(words(text).map(singular))
    return wanted.some((w) => have.has(w))
  }
  // A label the markup pairs with its value comes as "Label: value"; its line alone is then left out.
  const labels = new Set<string>()
  const hits: Array<string> = []
  for (const { label, value } of raw.pairs ?? []) {
    if (!mentioned(label)) continue
    const bare = label.replace(/[\s:：]+$/, "")
    labels.add(bare)
    hits.push(`${bare}: ${value}`)
  }
  lines.forEach((line, index) => {
    if (!mentioned(line) || labels.has(line.replace(/[\s:：]+$/, ""))) return
    const next = lines[index + 1]
    hits.push(/[:：]$/.test(line) && next !== undefined ? `${line} ${next}` : line)
  })
  const unique = [...new Set(hits)]
  return unique.length > 0 ? unique.slice(0, 50) : undefined
}
