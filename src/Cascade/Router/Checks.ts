/**
 * The checks a call passes before it runs, each a named Effect that refuses the call with the error its answer
 * carries: a known tool, offered, arguments that decode, the storage state given, no person or dialog in the way.
 */
import { Data, Effect, Option } from "effect"
import type { Egress } from "../../Egress/Egress.ts"
import { PolicyRejected } from "../../Errors/Service.ts"
import { type SwitchyardError, toErrorInfo } from "../../Errors.ts"
import * as Files from "../../Sandbox/Files.ts"
import { dialogError, type Sandbox } from "../../Sandbox/Sandbox.ts"
import * as Handoff from "../../Takeover/Handoff.ts"
import type * as HandoffTools from "../HandoffTools.ts"
import type * as StateBlock from "../StateBlock.ts"
import type * as Tool from "../Tool.ts"
import * as Tools from "../Tools.ts"
import * as UrlPolicy from "../UrlPolicy.ts"

/** A check refused the call: the answer carries `error`. */
export class Refused extends Data.TaggedError("Refused")<{ readonly error: StateBlock.ToolError }> {}

/** A check's failure as the refusal the answer carries. */
export const refusing = <A, E extends SwitchyardError>(self: Effect.Effect<A, E>) =>
  Effect.mapError(self, (error) => new Refused({ error: toErrorInfo(error) }))

const badArguments = (tool: Tool.Any, message: string) =>
  new Refused({
    error: { type: "invalid_input", retryable: false, action: tool.name, field: "arguments", message }
  })

/** Deeper than any tool's arguments go: past it the input is hostile or broken, and a recursive walk of it (its JSON
 * text, the schema's decode) could run out of stack at a depth that depends on the stack already in use. */
export const maxArgumentDepth = 64

/** Whether a value nests deeper than `maxArgumentDepth`, found without recursion; each object is visited once. */
const tooDeep = (value: unknown): boolean => {
  const seen = new Set<object>()
  const pending: Array<readonly [unknown, number]> = [[value, 0]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next
    if (typeof node !== "object" || node === null || seen.has(node)) continue
    if (depth >= maxArgumentDepth) return true
    seen.add(node)
    for (const child of Object.values(node)) pending.push([child, depth + 1])
  }
  return false
}

/** A value's JSON text, or why it has none (a cycle, a BigInt, a `toJSON` that throws: an in-process caller's). */
const jsonText = (value: unknown): { readonly text: string } | { readonly error: string } => {
  try {
    return { text: JSON.stringify(value) ?? "" }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) }
  }
}

export interface ChecksOptions {
  readonly sandbox: Sandbox["Service"]
  readonly handoff: HandoffTools.HandoffTools
  readonly features: Tool.Features
  readonly egress: Egress["Service"] | undefined
  readonly urlPolicy: Parameters<typeof UrlPolicy.check>[1]
  readonly maxArgumentBytes: number
  readonly uploadRoots: ReadonlyArray<string>
  /** The session's storage state before a call that needs one (`StorageStart`). */
  readonly startFrom: (wanted: string | undefined, named: boolean) => Effect.Effect<void, SwitchyardError>
  /** The storage state the session starts from unless a first call names another. */
  readonly storageState: string | undefined
}

export const make = ({
  sandbox,
  handoff,
  features,
  egress,
  urlPolicy,
  maxArgumentBytes,
  uploadRoots,
  startFrom,
  storageState
}: ChecksOptions) => {
  // The checks a call passes before it runs, in order; each refuses it with the error its answer carries.

  const known = (toolName: string) =>
    Option.match(Tools.find(toolName), {
      onNone: () =>
        Effect.fail(
          new Refused({
            error: {
              type: "invalid_input",
              retryable: false,
              field: "tool",
              message: `unknown tool "${toolName}"; the tools are ${Tools.toolNames.join(", ")}`
            }
          })
        ),
      onSome: Effect.succeed
    })

  /** The operator turned the tool on. */
  const offered = (tool: Tool.Any) => {
    const off = tool.offered(features)
    return off === undefined
      ? Effect.void
      : refusing(Effect.fail(new PolicyRejected({ action: tool.name, message: off })))
  }

  /** The arguments fit the limit and decode with the tool's Schema. */
  const decoded = (tool: Tool.Any, rawArgs: unknown) => {
    // The caller's arguments, not a service bug: refused before anything walks them.
    if (tooDeep(rawArgs))
      return Effect.fail(
        badArguments(
          tool,
          `arguments for ${tool.name} are nested deeper than ${maxArgumentDepth} levels; no tool's are`
        )
      )
    const json = jsonText(rawArgs ?? {})
    if ("error" in json)
      return Effect.fail(badArguments(tool, `arguments for ${tool.name} cannot be written as JSON: ${json.error}`))
    const size = Buffer.byteLength(json.text)
    if (size > maxArgumentBytes) {
      return Effect.fail(
        badArguments(tool, `arguments for ${tool.name} are ${size} bytes; the limit is ${maxArgumentBytes}`)
      )
    }
    return tool
      .decode(rawArgs)
      .pipe(Effect.mapError((error) => badArguments(tool, `bad arguments for ${tool.name}: ${error.message}`)))
  }

  /** A tool that works on a logged-in page gets the session's storage state first. */
  const stateGiven = (tool: Tool.Any, meta: Tool.CallMeta) =>
    tool.needsStorageState
      ? refusing(startFrom(meta.storageState ?? storageState, meta.storageState !== undefined))
      : Effect.void

  /**
   * Engine work needs no person holding the browser, a URL the policy allows, no open dialog (every engine would
   * wait behind it) and files under the upload roots: it gets the files confined, when it names some.
   */
  const engineMay = (tool: Tool.Any, bound: Tool.Bound & { readonly _tag: "engine" }) =>
    Effect.gen(function* () {
      const person = yield* handoff.active
      if (Option.isSome(person)) return yield* refusing(Effect.fail(Handoff.inControl(person.value, tool.name)))
      if (bound.opens !== undefined) yield* refusing(UrlPolicy.check(bound.opens, urlPolicy, egress?.resolve))
      const dialog = yield* sandbox.openDialog
      if (Option.isSome(dialog)) return yield* refusing(Effect.fail(dialogError(dialog.value, false)))
      return bound.files.length > 0 ? yield* refusing(Files.confine(uploadRoots, bound.files)) : undefined
    })

  return { known, offered, decoded, stateGiven, engineMay }
}
