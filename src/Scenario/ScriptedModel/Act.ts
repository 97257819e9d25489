/**
 * The scripted model's act and observe answers: an instruction read with the Playwright grammar (or its quoted
 * phrases), matched to a line of the page's tree whose role suits the verb, ties broken by a seed.
 */
import { Result } from "effect"
import * as Instruction from "../../Engine/Instruction.ts"
import { type Line, score, words } from "./Tree.ts"

const editable = ["textbox", "searchbox", "combobox", "spinbutton", "textarea"]
const clickable = [
  "button",
  "link",
  "checkbox",
  "radio",
  "switch",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "tab",
  "option",
  "combobox",
  "treeitem",
  "listitem",
  "cell",
  "gridcell",
  "image",
  "img"
]
const checkable = ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"]
const selectable = ["select", "combobox", "listbox"]

/** A small seeded generator (mulberry32): the same seed and phrase always break a tie the same way. */
const random = (seed: number, phrase: string) => {
  let state = seed >>> 0
  for (let i = 0; i < phrase.length; i++) state = Math.imul(state ^ phrase.charCodeAt(i), 2654435761) >>> 0
  state = (state + 0x6d2b79f5) >>> 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** The best-matching lines among `roles` (all roles when `roles` is undefined), best score first. */
const candidates = (lines: ReadonlyArray<Line>, target: string, roles: ReadonlyArray<string> | undefined) => {
  const scored = lines
    .filter((l) => roles === undefined || roles.includes(l.role.toLowerCase()))
    .map((line) => ({ line, score: score(line.name, target) }))
    .filter((c) => c.score > 0)
  const best = Math.max(0, ...scored.map((c) => c.score))
  return scored.filter((c) => c.score === best).map((c) => c.line)
}

/** One element for a phrase: preferred roles first, then (when `anyRole`) any named line; ties broken by seed. */
export const pick = (
  lines: ReadonlyArray<Line>,
  target: string,
  roles: ReadonlyArray<string>,
  seed: number,
  anyRole = false
): Line | undefined => {
  let found = candidates(lines, target, roles)
  if (found.length === 0 && anyRole) {
    found = candidates(
      lines.filter((l) => l.role !== "LabelText"),
      target,
      undefined
    )
  }
  if (found.length <= 1) return found[0]
  return found[Math.floor(random(seed, target) * found.length)]
}

export interface ScriptedAction {
  readonly elementId: string
  readonly description: string
  readonly method: string
  readonly arguments: ReadonlyArray<string>
}

const actionOf = (line: Line, method: string, args: ReadonlyArray<string>): ScriptedAction => ({
  elementId: line.id,
  description: `${line.role} ${line.name}`.trim(),
  method,
  arguments: args
})

const quotedRe = /"([^"]+)"|“([^”]+)”|'([^']+)'/g
const quoted = (text: string) => [...text.matchAll(quotedRe)].map((m) => (m[1] ?? m[2] ?? m[3])!)

/** Reads an instruction: the Playwright grammar, else its first word as the verb and its quoted phrases. */
const understand = (instruction: string): Instruction.Instruction | undefined => {
  const parsed = Instruction.parse(instruction)
  if (Result.isSuccess(parsed)) return parsed.success
  const phrases = quoted(instruction)
  const verb = instruction.trim().split(/\s+/)[0]?.toLowerCase() ?? ""
  const [first, second] = phrases
  if (first === undefined) return undefined
  switch (verb) {
    case "fill":
    case "enter":
      return second === undefined ? undefined : { kind: "fill", target: first, value: second }
    case "type":
      return second === undefined ? { kind: "type", text: first } : { kind: "type", text: first, target: second }
    case "select":
    case "choose":
      return second === undefined ? undefined : { kind: "select", option: first, target: second }
    case "check":
    case "tick":
      return { kind: "check", target: first, checked: true }
    case "uncheck":
      return { kind: "check", target: first, checked: false }
    default:
      return { kind: "click", target: first, double: false }
  }
}

/**
 * The act answer for an instruction on a page: an element and a method, or null when nothing fits. The instruction
 * is read with the Playwright engine's grammar (Instruction.ts), else from its quoted phrases; the target phrase is
 * scored against the names of the lines whose role suits the verb (text boxes for fill, buttons and links for
 * click, …); equal best scores are broken by the seed. No match answers null, as a real model does for a missing
 * element, so a page that has not rendered yet fails the way it fails in production.
 */
export const act = (instruction: string, lines: ReadonlyArray<Line>, seed: number): ScriptedAction | null => {
  const ins = understand(instruction)
  if (ins === undefined) return null
  const on = (target: string, roles: ReadonlyArray<string>, anyRole = false) =>
    pick(lines, target, roles, seed, anyRole)
  switch (ins.kind) {
    case "click": {
      const line = on(ins.target, clickable, true)
      return line ? actionOf(line, ins.double ? "doubleClick" : "click", []) : null
    }
    case "fill": {
      const line = on(ins.target, editable)
      return line ? actionOf(line, "fill", [ins.value]) : null
    }
    case "type": {
      const line = ins.target === undefined ? undefined : on(ins.target, editable)
      return line ? actionOf(line, "type", [ins.text]) : null
    }
    case "select": {
      const line = on(ins.target, selectable)
      return line ? actionOf(line, "selectOptionFromDropdown", [ins.option]) : null
    }
    case "check": {
      const line = on(ins.target, checkable)
      return line ? actionOf(line, "click", []) : null
    }
    case "press": {
      const line = ins.target === undefined ? undefined : on(ins.target, [...editable, ...clickable], true)
      return line ? actionOf(line, "press", [ins.key]) : null
    }
    case "hover": {
      const line = on(ins.target, clickable, true)
      return line ? actionOf(line, "hover", []) : null
    }
    case "scroll": {
      const line = lines.find((l) => l.role.startsWith("scrollable"))
      if (line === undefined) return null
      const [method, args] =
        ins.direction === "down"
          ? ["nextChunk", []]
          : ins.direction === "up"
            ? ["prevChunk", []]
            : ["scrollTo", [ins.direction === "top" ? "0%" : "100%"]]
      return actionOf(line, method, args)
    }
    default:
      // Going back or forward is not an element action: a model finds nothing to act on.
      return null
  }
}

/** The observe answer: every element matching the instruction's phrases (or its words), with a fitting method. */
export const observe = (instruction: string, lines: ReadonlyArray<Line>): ReadonlyArray<ScriptedAction> => {
  const phrases = quoted(instruction)
  const wanted = phrases.length > 0 ? phrases : [words(instruction).join(" ")]
  const out: Array<ScriptedAction> = []
  for (const phrase of wanted) {
    let found = candidates(lines, phrase, [...editable, ...clickable])
    if (found.length === 0) found = candidates(lines, phrase, undefined)
    for (const line of found) {
      if (out.some((a) => a.elementId === line.id)) continue
      out.push(actionOf(line, editable.includes(line.role.toLowerCase()) ? "fill" : "click", []))
    }
  }
  return out
}
