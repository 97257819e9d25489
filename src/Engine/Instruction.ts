/**
 * The instruction grammar of the LLM-free engine: a handful of imperative sentences, parsed without a model.
 * Verbs are case-insensitive; quotes ("…", '…', “…”) are optional where the sentence stays unambiguous.
 *
 *   click "Submit"                  click Submit, click the Submit button
 *   double click "Row 1"            also double-click, doubleclick, dblclick
 *   fill "Email" with "a@b.c"       also fill in …; unquoted splits at the first `with`
 *   type "hello" into "Search"      also `in`; without a target it types into the focused element
 *   select "Red" in "Colour"        also `from`; the option is matched by label or value; several in a multi-select:
 *                                   select "Python", "SQL" in "Skills" (also "Python" and "SQL")
 *   set "Salary" to 95              a slider, a number or any field: the same as fill "Salary" with "95"
 *   check "I agree"                 uncheck "I agree"
 *   press Enter                     press Enter in "Search" (also `into`, `on`); keys like Control+A
 *   hover "Menu"                    also hover over …
 *   upload "cv.pdf" to "Resume"     also `into`; several files: upload "a.pdf", "b.pdf" to "Attachments"
 *   click "Apply" in "Data Engineer"   a target in the group, card, row or landmark it sits in (also `within`):
 *                                   check "Yes" in "Are you 18 or older?", fill "Email" in "Billing" with "a@b.c",
 *                                   select "Red" in "Colour" in "Shipping" (the dropdown first, then its scope)
 *   scroll down | up | to top | to bottom
 *   go back | go forward
 *
 * Targets are phrases matched against the names a person reads — the accessible name, else placeholder, title or the
 * text beside the control — by the fuzzy-match rule in AccessibilityTree.ts (a close name is suggested, never acted
 * on), not selectors. To act on an element by its reference, `browser.act` takes `{ref}` instead of a sentence.
 */
import { Result, Schema, SchemaTransformation } from "effect"
import { InvalidInput } from "../Errors/Page.ts"

/** A targeted sentence may name what its target sits in (`within`), matched against elements' context. */
const within = Schema.optionalKey(Schema.String)

/**
 * A sentence of the grammar as the engine runs it, one member per verb: what `parse` makes of the words, once, where
 * they came in, and what flows down to the engine with them (`Said.parsed`).
 */
export const Instruction = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("click"), target: Schema.String, double: Schema.Boolean, within }),
  Schema.Struct({ kind: Schema.Literal("fill"), target: Schema.String, value: Schema.String, within }),
  Schema.Struct({
    kind: Schema.Literal("type"),
    text: Schema.String,
    target: Schema.optionalKey(Schema.String),
    within
  }),
  Schema.Struct({
    kind: Schema.Literal("select"),
    /** The first option named; `options` lists them all when several are named. */
    option: Schema.String,
    target: Schema.String,
    options: Schema.optionalKey(Schema.Array(Schema.String)),
    within
  }),
  Schema.Struct({ kind: Schema.Literal("check"), target: Schema.String, checked: Schema.Boolean, within }),
  Schema.Struct({
    kind: Schema.Literal("press"),
    key: Schema.String,
    target: Schema.optionalKey(Schema.String),
    within
  }),
  Schema.Struct({ kind: Schema.Literal("hover"), target: Schema.String, within }),
  Schema.Struct({ kind: Schema.Literal("upload"), files: Schema.Array(Schema.String), target: Schema.String, within }),
  Schema.Struct({
    kind: Schema.Literal("scroll"),
    direction: Schema.Literals(["up", "down", "top", "bottom"]),
    within
  }),
  Schema.Struct({ kind: Schema.Literal("history"), direction: Schema.Literals(["back", "forward"]), within })
])
export type Instruction = typeof Instruction.Type

export const acceptedForms: ReadonlyArray<string> = [
  'click "Submit"',
  'double click "Row 1"',
  'fill "Email" with "a@b.c"',
  'type "hello" into "Search"',
  'select "Red" in "Colour"',
  'select "Python", "SQL" in "Skills"',
  'set "Salary" to 95',
  'check "I agree"',
  'uncheck "I agree"',
  'press Enter [in "Search"]',
  'hover "Menu"',
  'upload "cv.pdf" to "Resume"',
  'click "Apply" in "Data Engineer"',
  "scroll down|up|to top|to bottom",
  "go back",
  "go forward"
]

interface Token {
  readonly text: string
  readonly quoted: boolean
}

const closing: Record<string, string> = { '"': '"', "'": "'", "“": "”", "‘": "’", "„": "“" }

class ParseError {
  readonly reason: string
  constructor(reason: string) {
    this.reason = reason
  }
}

const tokenize = (input: string): Array<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < input.length) {
    const c = input[i]!
    if (/\s/.test(c)) {
      i++
      continue
    }
    const close = closing[c]
    if (close !== undefined) {
      const end = input.indexOf(close, i + 1)
      if (end === -1) throw new ParseError(`the quote opened at position ${i + 1} is never closed`)
      tokens.push({ text: input.slice(i + 1, end), quoted: true })
      i = end + 1
      continue
    }
    // A comma between quoted phrases stands alone, spaced or not: `"Python","SQL"`.
    if (c === "," && tokens[tokens.length - 1]?.quoted === true) {
      tokens.push({ text: ",", quoted: false })
      i++
      continue
    }
    let j = i
    while (j < input.length && !/\s/.test(input[j]!)) j++
    tokens.push({ text: input.slice(i, j), quoted: false })
    i = j
  }
  return tokens
}

const is = (token: Token | undefined, ...words: ReadonlyArray<string>) =>
  token !== undefined && !token.quoted && words.includes(token.text.toLowerCase())

/** The words as written: a lone quoted token keeps its spaces (`type " world"`), anything else is trimmed. */
const phrase = (tokens: ReadonlyArray<Token>) =>
  tokens.length === 1 && tokens[0]!.quoted
    ? tokens[0]!.text
    : tokens
        .map((t) => t.text)
        .join(" ")
        .trim()

/** Splits at an unquoted keyword (the first or the last occurrence): `[before, after]`, or undefined. */
const splitAt = (tokens: ReadonlyArray<Token>, keywords: ReadonlyArray<string>, which: "first" | "last") => {
  const indexes = tokens.flatMap((t, i) => (is(t, ...keywords) ? [i] : []))
  const at = which === "first" ? indexes[0] : indexes[indexes.length - 1]
  return at === undefined ? undefined : ([tokens.slice(0, at), tokens.slice(at + 1)] as const)
}

/** Several quoted phrases separated by commas or "and" (`"Python", "SQL" and "Go"`); empty when that is not the
 * shape (one phrase, or unquoted words, which may hold a comma or an "and" of their own). */
const quotedList = (tokens: ReadonlyArray<Token>) => {
  const quoted = tokens.filter((t) => t.quoted)
  const joiners = tokens.filter((t) => !t.quoted)
  const separated = joiners.every((t) => /^(,+|and|&)$/i.test(t.text))
  return quoted.length > 1 && separated ? quoted.map((t) => t.text) : []
}

const required = (tokens: ReadonlyArray<Token>, what: string, example: string) => {
  const text = phrase(tokens)
  if (text === "") throw new ParseError(`${what} is missing (e.g. ${example})`)
  return text
}

const keyNames: Record<string, string> = {
  enter: "Enter",
  return: "Enter",
  tab: "Tab",
  escape: "Escape",
  esc: "Escape",
  backspace: "Backspace",
  delete: "Delete",
  space: "Space",
  home: "Home",
  end: "End",
  pageup: "PageUp",
  pagedown: "PageDown",
  arrowup: "ArrowUp",
  arrowdown: "ArrowDown",
  arrowleft: "ArrowLeft",
  arrowright: "ArrowRight",
  up: "ArrowUp",
  down: "ArrowDown",
  left: "ArrowLeft",
  right: "ArrowRight",
  control: "Control",
  ctrl: "Control",
  shift: "Shift",
  alt: "Alt",
  meta: "Meta",
  cmd: "Meta",
  command: "Meta"
}

/** `enter` → `Enter`, `ctrl+a` → `Control+a`: Playwright's key names, case-sensitive. */
export const normalizeKey = (key: string) =>
  key
    .split("+")
    .map((part) => keyNames[part.toLowerCase()] ?? (/^f\d{1,2}$/i.test(part) ? part.toUpperCase() : part))
    .join("+")

const scrollDirections: Record<string, "up" | "down" | "top" | "bottom"> = {
  down: "down",
  up: "up",
  "to top": "top",
  "to bottom": "bottom",
  top: "top",
  bottom: "bottom"
}

const parseTokens = (tokens: ReadonlyArray<Token>): Instruction => {
  const [first, second] = tokens
  if (first === undefined) throw new ParseError("the instruction is empty")
  const verb = first.quoted ? "" : first.text.toLowerCase()

  if (verb === "double" && is(second, "click")) {
    return {
      kind: "click",
      double: true,
      target: required(tokens.slice(2), "what to double-click", 'double click "Row 1"')
    }
  }
  if (["double-click", "doubleclick", "dblclick"].includes(verb)) {
    return {
      kind: "click",
      double: true,
      target: required(tokens.slice(1), "what to double-click", 'double click "Row 1"')
    }
  }
  if (verb === "click") {
    return { kind: "click", double: false, target: required(tokens.slice(1), "what to click", 'click "Submit"') }
  }
  if (verb === "fill") {
    const rest = is(second, "in") && tokens.length > 3 ? tokens.slice(2) : tokens.slice(1)
    const split = splitAt(rest, ["with"], "first")
    if (split === undefined) throw new ParseError('fill needs "with" before the value (fill "Email" with "a@b.c")')
    const scope = scopeAtEnd(split[0])
    return {
      kind: "fill",
      target: required(scope?.rest ?? split[0], "the field to fill", 'fill "Email" with "a@b.c"'),
      value: phrase(split[1]),
      ...(scope === undefined ? {} : { within: scope.within })
    }
  }
  if (verb === "type") {
    const split = splitAt(tokens.slice(1), ["into"], "last") ?? splitAt(tokens.slice(1), ["in"], "last")
    if (split === undefined) {
      return { kind: "type", text: required(tokens.slice(1), "the text to type", 'type "hello" into "Search"') }
    }
    return {
      kind: "type",
      text: required(split[0], "the text to type", 'type "hello" into "Search"'),
      target: required(split[1], "the field to type into", 'type "hello" into "Search"')
    }
  }
  if (verb === "select") {
    const split = splitAt(tokens.slice(1), ["in", "from"], "last")
    if (split === undefined)
      throw new ParseError('select needs "in" or "from" before the dropdown (select "Red" in "Colour")')
    const options = quotedList(split[0])
    return {
      kind: "select",
      option: options[0] ?? required(split[0], "the option to select", 'select "Red" in "Colour"'),
      target: required(split[1], "the dropdown", 'select "Red" in "Colour"'),
      ...(options.length > 1 ? { options } : {})
    }
  }
  if (verb === "set") {
    const split = splitAt(tokens.slice(1), ["to"], "last")
    if (split === undefined) throw new ParseError('set needs "to" before the value (set "Salary" to 95)')
    return {
      kind: "fill",
      target: required(split[0], "the field to set", 'set "Salary" to 95'),
      value: required(split[1], "the value", 'set "Salary" to 95')
    }
  }
  if (verb === "check" || verb === "uncheck") {
    return {
      kind: "check",
      checked: verb === "check",
      target: required(tokens.slice(1), `what to ${verb}`, `${verb} "I agree"`)
    }
  }
  if (verb === "press") {
    const key = tokens[1]
    if (key === undefined || key.text.trim() === "") throw new ParseError("the key to press is missing (press Enter)")
    const rest = tokens.slice(2)
    if (rest.length === 0) return { kind: "press", key: normalizeKey(key.text.trim()) }
    if (!is(rest[0], "in", "into", "on")) {
      throw new ParseError(`press takes one key, then optionally in "<field>"; found "${phrase(rest)}" after the key`)
    }
    return {
      kind: "press",
      key: normalizeKey(key.text.trim()),
      target: required(rest.slice(1), "the element to press the key in", 'press Enter in "Search"')
    }
  }
  if (verb === "hover") {
    const rest = is(second, "over", "on") && tokens.length > 2 ? tokens.slice(2) : tokens.slice(1)
    return { kind: "hover", target: required(rest, "what to hover", 'hover "Menu"') }
  }
  if (verb === "upload") {
    const split = splitAt(tokens.slice(1), ["to", "into"], "last")
    if (split === undefined)
      throw new ParseError('upload needs "to" before the file input (upload "cv.pdf" to "Resume")')
    // Quoted files stand alone; unquoted ones are separated by commas or "and".
    const files = split[0].some((t) => t.quoted)
      ? split[0].filter((t) => t.quoted).map((t) => t.text)
      : phrase(split[0])
          .split(/\s*,\s*|\s+and\s+/i)
          .map((f) => f.trim())
          .filter((f) => f !== "")
    if (files.length === 0) throw new ParseError('the file to upload is missing (upload "cv.pdf" to "Resume")')
    return { kind: "upload", files, target: required(split[1], "the file input", 'upload "cv.pdf" to "Resume"') }
  }
  if (verb === "scroll") {
    const where = phrase(tokens.slice(1)).toLowerCase()
    const direction = scrollDirections[where]
    if (direction === undefined) throw new ParseError(`scroll takes down, up, to top or to bottom, not "${where}"`)
    return { kind: "scroll", direction }
  }
  if (verb === "go" && tokens.length === 2 && is(second, "back", "forward")) {
    return { kind: "history", direction: second!.text.toLowerCase() as "back" | "forward" }
  }
  throw new ParseError(`"${first.text}" is not a verb this engine knows`)
}

/** `… in "<context>"` closing a phrase: the quoted scope and what comes before it. */
const scopeAtEnd = (tokens: ReadonlyArray<Token>) => {
  const last = tokens[tokens.length - 1]
  return tokens.length >= 3 && last?.quoted === true && is(tokens[tokens.length - 2], "in", "within", "inside")
    ? { rest: tokens.slice(0, -2), within: last.text }
    : undefined
}

/**
 * A sentence whose last words are `in "<context>"` names its target's scope when the sentence still has a target
 * without them (`click "Apply" in "Data Engineer"`); otherwise those words belong to the sentence itself
 * (`select "Red" in "Colour"`, `press Enter in "Search"`).
 */
const parseScoped = (tokens: ReadonlyArray<Token>): Instruction => {
  const scope = scopeAtEnd(tokens)
  if (scope !== undefined && scope.rest.length >= 2) {
    try {
      const inner = parseTokens(scope.rest)
      if ("target" in inner && inner.target !== undefined && inner.within === undefined) {
        return { ...inner, within: scope.within }
      }
    } catch (error) {
      if (!(error instanceof ParseError)) throw error
    }
  }
  return parseTokens(tokens)
}

/** Parses one instruction; the failure names what was not understood and lists the accepted forms. */
export const parse = (input: string): Result.Result<Instruction, InvalidInput> => {
  try {
    return Result.succeed(parseScoped(tokenize(input.trim().replace(/[.!]+$/, ""))))
  } catch (error) {
    if (!(error instanceof ParseError)) throw error
    return Result.fail(
      new InvalidInput({
        field: "instruction",
        engine: "playwright",
        message: `cannot understand the instruction "${input}": ${error.reason}. Accepted forms: ${acceptedForms.join("; ")}`
      })
    )
  }
}

/**
 * An instruction as it was given, parsed once where it came in (a tool's arguments, a form's field, a replay, a
 * test): its words, which the engines that work through a model read, and the grammar's reading of them (or why
 * there is none), which the model-free engine runs and the Sandbox reads to tell an act that stays on its page.
 * Engines take this value, never a plain string. Logs and answers show its words.
 */
export class Said {
  readonly _tag = "Said"
  readonly text: string
  readonly parsed: Result.Result<Instruction, InvalidInput>
  constructor(text: string) {
    this.text = text
    this.parsed = parse(text)
  }
  toJSON() {
    return this.text
  }
}

/** Words parsed once, here: the value `Engine.act` and `Engine.observe` take. */
export const said = (text: string): Said => new Said(text)

export const isSaid = (input: unknown): input is Said => input instanceof Said

/** An instruction's words as a tool's argument: `text` (a string, described) on the wire, a `Said` once decoded. */
export const wordsFrom = (text: Schema.String) =>
  text.pipe(
    Schema.decodeTo(
      Schema.instanceOf(Said),
      SchemaTransformation.transform({ decode: said, encode: (words: Said) => words.text })
    )
  )
