/**
 * What the replay level knows of a target and its method: the element as kept (role, name, context, frame) and found
 * again only when all of it is the same; which methods may be replayed, which may have acted when they fail, and which
 * acts submit, pay, delete or send.
 */
import { Result } from "effect"
import * as AccessibilityTree from "../../Engine/AccessibilityTree.ts"
import type * as Instruction from "../../Engine/Instruction.ts"
import type { Step, Target } from "../../Store/Resolutions.ts"

/** Methods a kept resolution may replay: acts on one element the page shows (not files, keys alone or scrolls). */
export const replayable = new Set([
  "click",
  "doubleclick",
  "fill",
  "type",
  "press",
  "check",
  "uncheck",
  "selectoption",
  "selectoptionfromdropdown",
  "hover"
])
/** Methods whose failure after the act began may have done something: never followed by the cascade. */
export const pointing = new Set(["click", "doubleclick", "press"])

/** Words of a control that submits, pays, deletes or sends. */
const consequential =
  /\b(submit|send|pay|purchase|buy|order|checkout|check out|delete|remove|apply|confirm|place|sign up|register|transfer|donate|book|publish|post|finish|complete)\b/i

/** What an act that would be repeated at a cost looks like: a click on such a control, or one that navigated. */
export const isDestructive = (step: Step, navigated: boolean) =>
  pointing.has(step.method.toLowerCase()) &&
  (navigated || consequential.test(step.target.name) || step.target.role === "menuitem")

/** Two selectors for one element as a level writes them: `xpath=/html/body` and `/html/body` alike. */
export const sameSelector = (a: string, b: string) => {
  const bare = (s: string) => s.trim().replace(/^xpath=/i, "")
  return bare(a) === bare(b)
}

/**
 * The method a grammar sentence asks for, whatever the level did: `check "I agree"` is kept as a check, which leaves
 * a ticked box ticked, not as the click a model made, which would untick it on a replay.
 */
export const askedMethod = ({ parsed }: Instruction.Said, method: string) => {
  if (Result.isFailure(parsed)) return method
  const ins = parsed.success
  switch (ins.kind) {
    case "check":
      return ins.checked ? "check" : "uncheck"
    case "select":
      return "selectOption"
    case "fill":
    case "type":
      return ins.kind
    default:
      return method
  }
}

/** The target as `elements` lists it, and as it is kept. */
export const targetOf = (e: AccessibilityTree.Element): Target => ({
  role: e.role,
  name: e.name,
  around: (e.around ?? []).map((a) => ({ kind: a.kind, name: a.name })),
  ...(e.frame === undefined ? {} : { frame: e.frame })
})

export const describeTarget = (t: Target) =>
  AccessibilityTree.describeIn({ role: t.role, name: t.name, context: AccessibilityTree.contextOf(t.around) })

const same = (a: string, b: string) => AccessibilityTree.normalize(a) === AccessibilityTree.normalize(b)

/** Whether an element is the kept target: the same role, name, context and frame. */
export const isTarget = (target: Target) => (e: AccessibilityTree.Element) => {
  const around = e.around ?? []
  return (
    e.role === target.role &&
    same(e.name, target.name) &&
    around.length === target.around.length &&
    around.every((a, i) => a.kind === target.around[i]!.kind && same(a.name, target.around[i]!.name)) &&
    same(e.frame ?? "", target.frame ?? "")
  )
}
