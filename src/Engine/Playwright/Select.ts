/**
 * Choosing options as a person does: in a native `<select>` by label or value (several at once in a `<select
 * multiple>`, added to what was already chosen), in an ARIA listbox by clicking each option not yet selected, in a
 * custom dropdown by opening it (typing into an editable one) and clicking the option. The chosen set is read back.
 */
import { Effect } from "effect"
import { ActionFailed, ElementNotFound, type ElementRef, InvalidInput } from "../../Errors/Page.ts"
import type { SwitchyardError } from "../../Errors.ts"
import * as AccessibilityTree from "../AccessibilityTree.ts"
import { attempt, engine } from "./Errors.ts"
import { type Held, hold } from "./Held.ts"
import type { SessionPage } from "./Page.ts"
import * as Pointer from "./Pointer.ts"
import type * as Settle from "./Settle.ts"
import * as Verify from "./Verify.ts"

const quote = (s: string) => JSON.stringify(s)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** What a select needs to know about where it runs. */
export interface Context {
  readonly label: string
  /** The target as a person reads it: `combobox "Country"`. */
  readonly target: string
  readonly before: Verify.Before
  /** Reads the page's elements (references for options). */
  readonly read: () => Effect.Effect<ReadonlyArray<AccessibilityTree.Element>, SwitchyardError>
  /** The reference of the dropdown, when it was named by one: its options are looked for inside it first. */
  readonly ref?: string
  /** An element as errors point to it. */
  readonly refFor: (e: AccessibilityTree.Element) => ElementRef
}

/** The index of the native option whose label or value matches `wanted`, or ElementNotFound listing the options. */
const matchOption = (options: NonNullable<Verify.Before["options"]>, wanted: string, ctx: Context) => {
  const exact = options.findIndex((o) => o.label === wanted || o.value === wanted)
  const loose = options.findIndex(
    (o) =>
      AccessibilityTree.normalize(o.label) === AccessibilityTree.normalize(wanted) ||
      o.value.toLowerCase() === wanted.toLowerCase()
  )
  const index = exact >= 0 ? exact : loose
  if (index >= 0) return Effect.succeed(index)
  return Effect.fail(
    new ElementNotFound({
      engine,
      action: ctx.label,
      target: `option ${quote(wanted)}`,
      message: `no option ${quote(wanted)} in ${ctx.target}; the options are ${options.map((o) => quote(o.label)).join(", ")}`
    })
  )
}

/**
 * A native `<select>`: the options asked for, by index. A `<select multiple>` keeps what was chosen before (a person
 * adds with Ctrl-click); a single select takes one option. Answers the labels that should now be selected.
 */
export const native = (sp: SessionPage, held: Held, wanted: ReadonlyArray<string>, ctx: Context) =>
  Effect.gen(function* () {
    const options = ctx.before.options!
    if (!ctx.before.multiple && wanted.length > 1) {
      return yield* Effect.fail(
        new InvalidInput({
          engine,
          action: ctx.label,
          field: "arguments",
          message: `${ctx.target} takes one option; ${wanted.map(quote).join(", ")} are several`
        })
      )
    }
    const asked = yield* Effect.forEach(wanted, (w) => matchOption(options, w, ctx))
    const disabled = asked.filter((i) => options[i]!.disabled)
    if (disabled.length > 0) {
      return yield* Effect.fail(
        new ActionFailed({
          engine,
          action: ctx.label,
          sideEffect: "none",
          message: `${ctx.label} did nothing: the option ${disabled.map((i) => quote(options[i]!.label)).join(", ")} of ${ctx.target} is disabled`
        })
      )
    }
    const kept = ctx.before.multiple ? options.flatMap((o, i) => (o.selected ? [i] : [])) : []
    const indexes = [...new Set([...kept, ...asked])].sort((a, b) => a - b)
    const timeout = sp.limits.actionTimeoutMs
    const selected = indexes.map((i) => options[i]!.label)
    return {
      // As Playwright's selectOption chooses them, on the held element, with what the page then showed and saw start;
      // where it cannot (hidden, replaced), Playwright's own waits for it, and nothing was seen.
      run: async (): Promise<Chose | undefined> => {
        const chose = await held.evaluate(chooseAndRead, { indexes, ask: { selected, early: true } }, timeout)
        if (chose !== false) return chose
        await held.locator.selectOption(
          indexes.map((index) => ({ index })),
          { timeout }
        )
        return undefined
      },
      selected
    }
  })

/** What a choice made in the page saw: whether it moved the page (in the top document only), and what it showed. */
export interface Chose {
  readonly navigating: boolean
  /** Whether the select is in the top document, whose navigations its page sees. */
  readonly top: boolean
  readonly state: Verify.After
}

/** What the Settle wait is told: only the top document sees every navigation of the page. */
export const seen = (chose: Chose | undefined): Settle.Seen | undefined =>
  chose?.top === true ? { navigating: chose.navigating } : undefined

/**
 * Runs in the page: the options at `indexes` chosen as Playwright's `selectOption` chooses them (the others let go,
 * then `input` and `change`), in a `<select>` that shows and takes input; false otherwise. Then what the choice
 * started, seen where it starts: the timers of up to 50 ms its handlers set are let run, then one task more (a message
 * or a promise chain), unless a navigation began — the Navigation API's `navigate` event (a form, `location`,
 * `pushState`) or a new address — which is answered at once, before the page unloads.
 */
const chooseIndexes = async (el: Element, indexes: ReadonlyArray<number>) => {
  const label = el.closest("label")
  const select =
    el instanceof HTMLSelectElement ? el : label?.control instanceof HTMLSelectElement ? label.control : null
  if (select === null || select.disabled || select.getClientRects().length === 0) return false
  if (getComputedStyle(select).visibility !== "visible") return false
  const options = Array.from(select.options)
  if (indexes.some((i) => options[i] === undefined || options[i]!.disabled)) return false
  const address = location.href
  const navigation = (window as unknown as { navigation?: EventTarget }).navigation
  let navigating = false
  let moved = () => {}
  const navigated = new Promise<void>((resolve) => (moved = resolve))
  const onNavigate = () => {
    navigating = true
    moved()
  }
  navigation?.addEventListener("navigate", onNavigate)
  const plain = window.setTimeout
  const deferred: Array<Promise<void>> = []
  const watching = ((handler: unknown, ms?: number, ...args: Array<unknown>) => {
    if (typeof handler !== "function" || (ms ?? 0) > 50) return plain(handler as TimerHandler, ms, ...args)
    let ran = () => {}
    deferred.push(new Promise<void>((resolve) => (ran = resolve)))
    return plain(() => {
      try {
        ;(handler as (...a: Array<unknown>) => void)(...args)
      } finally {
        ran()
      }
    }, ms)
  }) as typeof window.setTimeout
  try {
    window.setTimeout = watching
  } catch {
    // A page that froze its timers is watched for a task only.
  }
  try {
    select.value = undefined as unknown as string
    for (const i of indexes) options[i]!.selected = true
    select.dispatchEvent(new Event("input", { bubbles: true, composed: true }))
    select.dispatchEvent(new Event("change", { bubbles: true }))
  } finally {
    if (window.setTimeout === watching) window.setTimeout = plain
  }
  const task = () => new Promise<void>((resolve) => plain(resolve, 0))
  if (!navigating) await Promise.race([Promise.all(deferred).then(task), navigated, new Promise((r) => plain(r, 100))])
  navigation?.removeEventListener("navigate", onNavigate)
  return { navigating: navigating || location.href !== address, top: window === window.top }
}

/** `chooseIndexes`, then what the select shows (`Verify.readBack`), in one round trip. */
const chooseAndRead = new Function(
  "el",
  "arg",
  `return (${chooseIndexes})(el, arg.indexes).then((chose) => chose === false ? false : { ...chose, state: (${Verify.readBack})(el, arg.ask) })`
) as (el: Element, arg: { indexes: ReadonlyArray<number>; ask: Verify.Ask }) => Promise<false | Chose>

/** What `inspectChoosing` answers: what the control is, and the choice when it was made in the same round trip. */
export interface Inspected {
  readonly before: Verify.Before
  /** The choice made, with the labels that should now be selected. */
  readonly chose?: Chose & { readonly selected: ReadonlyArray<string> }
}

/**
 * Runs in the page: what the control is (`Verify.inspect`) and, where it is a native select that takes input and each
 * option asked for is one of its own (matched as `matchOption` matches them) that takes input, the choice made and
 * read back (`chooseAndRead`) at once: one round trip where there were two. Anything else only answers `before`, and
 * is chosen from (or refused) as before.
 */
const inspectChoosing = new Function(
  "el",
  "wanted",
  `const before = (${Verify.inspect})(el, false);
  const options = before.options;
  if (options === undefined || before.disabled || before.blocked !== undefined) return { before };
  if (!before.multiple && wanted.length > 1) return { before };
  const normalize = ${AccessibilityTree.normalize};
  const asked = [];
  for (const w of wanted) {
    const exact = options.findIndex((o) => o.label === w || o.value === w);
    const index = exact >= 0 ? exact : options.findIndex((o) =>
      normalize(o.label) === normalize(w) || o.value.toLowerCase() === w.toLowerCase());
    if (index < 0 || options[index].disabled) return { before };
    asked.push(index);
  }
  const kept = before.multiple ? options.flatMap((o, i) => (o.selected ? [i] : [])) : [];
  const indexes = [...new Set([...kept, ...asked])].sort((a, b) => a - b);
  const selected = indexes.map((i) => options[i].label);
  return (${chooseAndRead})(el, { indexes, ask: { selected, early: true } })
    .then((chose) => (chose === false ? { before } : { before, chose: { ...chose, selected } }));`
) as (el: Element, wanted: ReadonlyArray<string>) => Promise<Inspected>

/** What the control is, and a native select's choice made in the same round trip where it can be. */
export const inspectAndChoose = (held: Held, wanted: ReadonlyArray<string>, timeout: number) =>
  held.evaluate(inspectChoosing, wanted, timeout)

/** What the Settle wait is told of `inspectAndChoose`: nothing started when nothing was chosen. */
export const seenFirst = (inspected: Inspected | undefined): Settle.Seen | undefined =>
  inspected?.chose === undefined ? { navigating: false } : seen(inspected.chose)

const optionRoles = ["option", "menuitem", "menuitemradio", "treeitem", "gridcell"]

/** One option named `wanted` among those shown (inside the dropdown first), waited for a moment after opening. */
const findOption = (sp: SessionPage, wanted: string, ctx: Context) =>
  Effect.gen(function* () {
    const deadline = Date.now() + sp.limits.elementWaitMs
    for (;;) {
      const all = (yield* ctx.read()).filter((e) => optionRoles.includes(e.role))
      const inside = ctx.ref === undefined ? [] : all.filter((e) => e.within.includes(ctx.ref!))
      const options = inside.length > 0 ? inside : all
      const choice = AccessibilityTree.choose(AccessibilityTree.rank(options, "click", wanted))
      if (choice._tag === "one") return choice.chosen.element
      if (choice._tag === "ambiguous" || Date.now() >= deadline) {
        return yield* Effect.fail(
          new ElementNotFound({
            engine,
            action: ctx.label,
            target: `option ${quote(wanted)}`,
            elements: options.slice(0, 10).map(ctx.refFor),
            message: `no single option ${quote(wanted)} in ${ctx.target}; the options shown are ${options.map((o) => quote(o.name)).join(", ") || "none"}`
          })
        )
      }
      yield* Effect.promise(() => sleep(200))
    }
  })

/**
 * A custom dropdown (an ARIA combobox or listbox, not a native `<select>`). A listbox shows its options: each one asked
 * for that is not selected yet is clicked (clicking a selected one would deselect it). A combobox is opened as a person
 * opens it — typing into an editable one, clicking another — for each option, then the option is clicked once shown.
 * Answers the names of the options clicked or already selected.
 */
export const custom = (sp: SessionPage, held: Held, wanted: ReadonlyArray<string>, ctx: Context) =>
  Effect.gen(function* () {
    const { page } = sp
    const timeout = sp.limits.actionTimeoutMs
    const chosen: Array<string> = []
    const listbox = ctx.before.role === "listbox"
    for (const w of wanted) {
      if (!listbox) {
        const editable = ["text", "search", "contenteditable", "textarea"].includes(ctx.before.kind)
        yield* attempt(sp.at(ctx.label, "possible"), async () => {
          const aim = await Pointer.approach(page, held, timeout, { enabled: true, target: ctx.target })
          await Pointer.click(page, held, aim, timeout)
          if (editable) await Pointer.fill(page, held, w, timeout, ctx.before.kind)
        })
      }
      const option = yield* findOption(sp, w, ctx)
      const on = hold(sp.elements.locate(option.ref)!)
      yield* Effect.gen(function* () {
        const selected = yield* attempt(sp.at(ctx.label), () =>
          on.evaluate((el) => el.getAttribute("aria-selected") === "true", undefined, timeout)
        )
        if (!(listbox && selected)) {
          yield* attempt(sp.at(ctx.label, "possible"), async () => {
            const aim = await Pointer.approach(page, on, timeout, {
              enabled: true,
              target: AccessibilityTree.describe(option)
            })
            await Pointer.click(page, on, aim, timeout)
          })
        }
      }).pipe(Effect.ensuring(Effect.sync(on.release)))
      chosen.push(option.name)
    }
    return chosen
  })
