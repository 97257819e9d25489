/**
 * One visit per frame for a read: its generation (Generation.ts), its scan (Scan.ts) only when the scan kept for it no
 * longer holds, and the page's facts when an extract asks for them, in one evaluate instead of one round trip each.
 */
import { collectFacts, type RawFacts } from "../../PageFacts.ts"
import { listen } from "../Held.ts"
import { generation } from "./Generation.ts"
import { editable, type FrameScan, scanFrame } from "./Scan.ts"

/** What one frame's visit is asked: the generation its kept scan was taken at, how much must match for the last read
 * to stand (`"read"`: the caller reads afresh whatever the answer), and the facts' bounds when they are wanted
 * (`factsAt`: the generation the caller's kept facts were read at; while it holds they are not read again). */
export interface PassInput {
  readonly known: string | null
  readonly what: "names" | "values" | "read"
  readonly facts: { readonly maxText: number; readonly tables: boolean } | null
  readonly factsAt: string | null
}

export interface PassResult {
  readonly generation: string
  /** Absent when the kept scan still holds for what was asked. */
  readonly scan?: FrameScan
  /** Absent when not asked, or when the kept facts still hold. */
  readonly facts?: RawFacts
}

/** A generation without its values part (Generation.ts puts it last). */
export const names = (generations: string) => generations.replace(/:[0-9a-z]+(?=\||$)/g, "")

/** Runs in a frame, given the in-page functions it composes (they are serialized with it). */
const visit = (
  input: PassInput,
  generationOf: typeof generation,
  scan: typeof scanFrame,
  facts: typeof collectFacts,
  editableSelector: string
): PassResult => {
  const now = generationOf()
  const strip = (g: string) => g.replace(/:[0-9a-z]+$/, "")
  const holds =
    input.known !== null && (input.what === "names" ? strip(now) === strip(input.known) : now === input.known)
  return {
    generation: now,
    ...(holds ? {} : { scan: scan(editableSelector) }),
    ...(input.facts === null || input.factsAt === now ? {} : { facts: facts(input.facts.maxText, input.facts.tables) })
  }
}

/**
 * What a frame evaluates on its first visit: its window listening for held elements (Held.ts), then the visit kept on
 * the window for the next calls and run. A function as Playwright sends it, by its source (the same on every call,
 * the input passed apart); its 20 kB of source are sent and compiled once per document. The answer comes as JSON
 * text (`parsed` reads it): one string crosses the page, the protocol and Playwright's client far cheaper than the
 * same answer as objects, which Playwright serializes value by value on each side.
 */
export const installing: (input: PassInput) => string = Object.assign(
  (_: PassInput): string => {
    throw new Error("runs only in a frame")
  },
  {
    toString: () => `(input) => {
  (${listen})()
  const visit = (i) => (${visit})(i, ${generation}, ${scanFrame}, ${collectFacts}, ${JSON.stringify(editable)})
  Object.defineProperty(window, Symbol.for("switchyard.visit"), { value: visit, configurable: true })
  return JSON.stringify(visit(input))
}`
  }
)

/** What a frame evaluates on later visits: the kept visit's answer, or null when its document has none yet. */
export const visiting = (input: PassInput): string | null => {
  const visit = (window as unknown as Record<symbol, ((i: PassInput) => PassResult) | undefined>)[
    Symbol.for("switchyard.visit")
  ]
  return visit === undefined ? null : JSON.stringify(visit(input))
}

/** A visit's answer as its frame gave it. */
export const parsed = (answer: string): PassResult => JSON.parse(answer) as PassResult
