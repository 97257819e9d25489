/**
 * A form filled in one call: each field becomes the act a single `browser.act` would run (a grammar sentence for a
 * named field, an Action for a reference), run in order through the engine's own `act`, so each is resolved and
 * checked on the page as a single act is. The first field that fails stops the call before anything is submitted.
 */
import { Effect } from "effect"
import { InvalidInput } from "../Errors/Page.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as AccessibilityTree from "./AccessibilityTree.ts"
import type { Action, ActResult, Engine } from "./Engine.ts"
import * as Instruction from "./Instruction.ts"

/** What kind of control a field is, when the caller says so (otherwise the value and the page decide). */
export type FieldType = "textbox" | "checkbox" | "radio" | "combobox" | "listbox" | "slider" | "date" | "file"

export interface Field {
  /** The field's label or name as a person reads it. */
  readonly target?: string
  /** A reference from browser.snapshot, observe or extract. */
  readonly ref?: string
  /** Text; true/false for a checkbox; several options for a multi-select (or files for an upload). */
  readonly value: string | boolean | ReadonlyArray<string>
  readonly type?: FieldType
}

export interface Filled {
  /** The field as the call named it. */
  readonly field: string
  readonly description: string
  /** What the page shows for the element now, when the engine reads it back. */
  readonly target?: unknown
  /** For a file field whose input took the files directly: the action that put them there. */
  readonly action?: Action
}

export interface FormResult {
  readonly success: true
  readonly fields: ReadonlyArray<Filled>
  /** The submit the call asked for, once every field was done. */
  readonly submitted?: { readonly description: string; readonly navigated?: ActResult["navigated"] }
  readonly navigated?: ActResult["navigated"]
}

/** `"x"`, or in other quotes when the text holds double quotes (the grammar has no escapes). */
const quote = (text: string) =>
  !text.includes('"') ? `"${text}"` : !text.includes("'") ? `'${text}'` : `“${text.replaceAll("”", "'")}”`

const truthy = (value: string) => /^(true|yes|on|checked|1)$/i.test(value.trim())
const selectRoles = new Set(["combobox", "listbox"])
const toggleRoles = new Set(["checkbox", "switch", "menuitemcheckbox"])

/** How a field names itself in answers and errors. */
const label = (field: Field) => (field.ref !== undefined ? `[ref=${field.ref}]` : quote(field.target ?? ""))

/** A control as observe lists it (`aria-ref=e12`, `combobox "Plan" …`): its reference, role and name. */
const controlOf = (action: Action): AccessibilityTree.Element => ({
  ref: action.selector.replace(/^aria-ref=/, ""),
  role: action.description.split(" ")[0] ?? "",
  name: /^\S+ "([^"]*)"/.exec(action.description)?.[1] ?? "",
  also: [],
  within: [],
  clickable: false,
  disabled: false
})

/**
 * The role of the control a field names, among the page's controls, for a field whose kind its value leaves open: a
 * target that names no control but whose value names a radio button is a radio group (the group is no control).
 */
const roleOf = (field: Field, controls: ReadonlyArray<AccessibilityTree.Element>) => {
  if (field.ref !== undefined) return controls.find((c) => c.ref === field.ref)?.role
  const operated = controls.filter(AccessibilityTree.isInteractive)
  const choice = AccessibilityTree.choose(AccessibilityTree.rank(operated, "any", field.target ?? ""))
  if (choice._tag === "one") return choice.chosen.element.role
  const radios = operated.filter((c) => c.role === "radio")
  const option = typeof field.value === "string" ? field.value : ""
  return AccessibilityTree.choose(AccessibilityTree.rank(radios, "check", option))._tag === "one" ? "radio" : undefined
}

/** The verb a named field's element is looked for with, by its kind (as the grammar's sentence for it would). */
const verbs: Record<string, AccessibilityTree.Verb | undefined> = {
  checkbox: "check",
  combobox: "select",
  listbox: "select",
  textbox: "fill",
  slider: "fill",
  date: "fill"
}

/**
 * A named field as its element's reference, when the page's controls read at the call's start show that element clearly
 * by the fuzzy-match rule (its sentence would resolve to it at once); otherwise as named, and the act looks for it (and
 * waits for it) as a single act does. Radio groups and uploads keep their own sentences.
 */
const onPage = (field: Field, kind: string | undefined, controls: ReadonlyArray<AccessibilityTree.Element>): Field => {
  const verb = verbs[kind ?? "textbox"]
  if (field.target === undefined || verb === undefined || controls.length === 0) return field
  const choice = AccessibilityTree.choose(AccessibilityTree.rank(controls, verb, field.target))
  if (choice._tag !== "one") return field
  const { target: _target, ...rest } = field
  return { ...rest, ref: choice.chosen.element.ref }
}

/** The submit button as the page showed it at the call's start (its reference), else by its name. */
const clickOn = (button: string, controls: ReadonlyArray<AccessibilityTree.Element>): Instruction.Said | Action => {
  const choice = AccessibilityTree.choose(AccessibilityTree.rank(controls, "click", button))
  return choice._tag === "one"
    ? { selector: choice.chosen.element.ref, method: "click", arguments: [], description: "" }
    : Instruction.said(`click ${quote(button)}`)
}

/** `check "Pro" in "Plan"` when the grammar scopes by group, else `check "Pro"`. */
const radioSentence = (option: string, group: string) => {
  const scoped = Instruction.said(`check ${quote(option)} in ${quote(group)}`)
  const { parsed } = scoped
  return parsed._tag === "Success" && "target" in parsed.success && parsed.success.target === option
    ? scoped
    : Instruction.said(`check ${quote(option)}`)
}

/** What kind of control a field is: its type, else what its value or the page's control says. */
const kindOf = (field: Field, role: string | undefined): string | undefined => {
  const { value } = field
  return (
    field.type ??
    (typeof value === "boolean"
      ? "checkbox"
      : Array.isArray(value)
        ? "combobox"
        : role !== undefined && selectRoles.has(role)
          ? "combobox"
          : role !== undefined && toggleRoles.has(role)
            ? "checkbox"
            : role === "radio" || role === "radiogroup"
              ? "radio"
              : undefined)
  )
}

/** What a field means to the engine: a sentence (named field) or an Action (reference). */
const actOf = (field: Field, kind: string | undefined): Instruction.Said | Action => {
  const { value } = field
  const values = typeof value === "boolean" ? [String(value)] : typeof value === "string" ? [value] : [...value]
  const on = typeof value === "boolean" ? value : truthy(values[0] ?? "")
  if (field.ref !== undefined) {
    const action = (method: string, args: ReadonlyArray<string>): Action => ({
      selector: field.ref!,
      method,
      arguments: [...args],
      description: ""
    })
    switch (kind) {
      case "checkbox":
      case "radio":
        return action(on ? "check" : "uncheck", [])
      case "combobox":
      case "listbox":
        return action("selectOption", values)
      case "file":
        return action("setInputFiles", values)
      default:
        return action("fill", values.slice(0, 1))
    }
  }
  const target = field.target ?? ""
  switch (kind) {
    case "checkbox":
      return Instruction.said(`${on ? "check" : "uncheck"} ${quote(target)}`)
    case "radio":
      // A radio field names its group and the option to choose; a radio named by itself is checked.
      return typeof value === "boolean" || truthy(values[0] ?? "")
        ? Instruction.said(`check ${quote(target)}`)
        : radioSentence(values[0] ?? "", target)
    case "combobox":
    case "listbox":
      return Instruction.said(`select ${values.map(quote).join(", ")} in ${quote(target)}`)
    case "file":
      return Instruction.said(`upload ${values.map(quote).join(", ")} to ${quote(target)}`)
    default:
      return Instruction.said(`fill ${quote(target)} with ${quote(values[0] ?? "")}`)
  }
}

/**
 * The same error (its type and references kept), saying `message` instead; after fields were filled the call did
 * change the page, which its side effect says (so it is not repeated blindly).
 */
const saying = (error: SwitchyardError, message: string, changed: boolean) => {
  const { _tag, ...fields } = error as unknown as Record<string, unknown>
  const Same = error.constructor as new (fields: Record<string, unknown>) => SwitchyardError
  const same = new Same({ ...fields, message })
  if (changed && "sideEffect" in same) Object.defineProperty(same, "sideEffect", { value: "possible" })
  return same
}

/** A field's failure, saying which field failed, what was done before it and that nothing was sent. */
const inField = (error: SwitchyardError, field: Field, index: number, total: number, done: ReadonlyArray<Filled>) => {
  const before =
    done.length === 0 ? "no field was filled before it" : `done before it: ${done.map((d) => d.description).join("; ")}`
  return saying(
    error,
    `field ${index + 1} of ${total} (${label(field)}): ${error.message}; ${before}; the fields after it were not touched and nothing was submitted`,
    done.length > 0
  )
}

const filesOf = (field: Field) =>
  field.type === "file"
    ? typeof field.value === "string"
      ? [field.value]
      : Array.isArray(field.value)
        ? field.value
        : []
    : []

/** Local files the fields put into the page: confined to the upload folders like any upload. */
export const files = (fields: ReadonlyArray<Field>): ReadonlyArray<string> => fields.flatMap(filesOf)

/**
 * Fills `fields` in order through `engine.act`, then submits (`submit`: the button to click, or `true` to press Enter in
 * the last text field, as a person sends a form). A field whose kind neither its `type` nor its value says is looked up
 * on the page first (grammar engines: one observe) so a dropdown is chosen from and a checkbox checked.
 */
export const fill = (engine: Engine["Service"], fields: ReadonlyArray<Field>, submit?: boolean | string) =>
  Effect.gen(function* () {
    for (const [index, field] of fields.entries()) {
      if ((field.target === undefined) === (field.ref === undefined)) {
        return yield* new InvalidInput({
          field: `fields[${index}]`,
          message: `field ${index + 1} needs exactly one of "target" (its label) or "ref" (a reference from browser.snapshot)`
        })
      }
    }
    // One look at the page's controls serves every field: what kind a field is when neither its type nor its value
    // says, and the element a named field means when the page already shows it clearly (the grammar's engines; a
    // model's engine reads "fill" as the field needs).
    const open = (field: Field) => field.type === undefined && typeof field.value === "string"
    const controls: ReadonlyArray<AccessibilityTree.Element> =
      engine.elements !== undefined
        ? yield* engine.elements().pipe(Effect.orElseSucceed(() => []))
        : engine.capabilities.instructions === "grammar" && fields.some(open)
          ? (yield* engine.observe(Instruction.said("")).pipe(Effect.orElseSucceed(() => []))).map(controlOf)
          : []
    const done: Array<Filled> = []
    const kinds: Array<string | undefined> = []
    let navigated: ActResult["navigated"]
    for (const [index, field] of fields.entries()) {
      const kind = kindOf(field, open(field) ? roleOf(field, controls) : undefined)
      kinds.push(kind)
      const acted = yield* engine
        .act(actOf(onPage(field, kind, engine.elements === undefined ? [] : controls), kind))
        .pipe(Effect.mapError((error) => inField(error, field, index, fields.length, done)))
      navigated = acted.navigated ?? navigated
      const readBack = (acted as ActResult & { readonly target?: unknown }).target
      done.push({
        field: field.ref ?? field.target!,
        description: acted.description,
        ...(readBack === undefined ? {} : { target: readBack }),
        ...(acted.action !== undefined && /^setinputfiles$/i.test(acted.action.method) ? { action: acted.action } : {})
      })
    }
    if (submit === undefined || submit === false) {
      return { success: true, fields: done, ...(navigated === undefined ? {} : { navigated }) } satisfies FormResult
    }
    // A field of no other kind is a text field (a date and a slider take text too, but Enter in them sends nothing).
    const lastText = fields.findLast((f, i) => typeof f.value === "string" && (kinds[i] ?? "textbox") === "textbox")
    if (submit === true && lastText === undefined) {
      return yield* new InvalidInput({
        field: "submit",
        message:
          'submit: true presses Enter in the last text field, and no field is one: name the button instead (submit: "Create account")'
      })
    }
    const sending =
      submit === true
        ? lastText!.ref !== undefined
          ? ({ selector: lastText!.ref, method: "press", arguments: ["Enter"], description: "" } satisfies Action)
          : Instruction.said(`press Enter in ${quote(lastText!.target!)}`)
        : clickOn(submit, engine.elements === undefined ? [] : controls)
    const sent = yield* engine
      .act(sending)
      .pipe(
        Effect.mapError((error) =>
          saying(
            error,
            `every field was filled (${done.map((d) => d.description).join("; ")}), but the submit failed: ${error.message}`,
            true
          )
        )
      )
    return {
      success: true,
      fields: done,
      submitted: {
        description: sent.description,
        ...(sent.navigated === undefined ? {} : { navigated: sent.navigated })
      },
      ...((sent.navigated ?? navigated) === undefined ? {} : { navigated: sent.navigated ?? navigated })
    } satisfies FormResult
  })
