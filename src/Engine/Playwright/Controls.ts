/**
 * Each kind of control used as a person uses it, and read back before the answer says success: a click or hover
 * pointed where the target shows, a checkbox ticked (through its own label when the input is hidden), options chosen,
 * a field filled with the value converted to its format (InputValue.ts). What the page shows is checked against what
 * was asked (Verify.ts); a control that takes no input now fails at once.
 */
import { Effect, Result } from "effect"
import type { Locator } from "playwright-core"
import { ActionFailed, type ElementRef, InvalidInput } from "../../Errors/Page.ts"
import type { SwitchyardError } from "../../Errors.ts"
import type * as AccessibilityTree from "../AccessibilityTree.ts"
import type { Action, ActResult, ActTarget } from "../Engine.ts"
import * as InputValue from "../InputValue.ts"
import { attempt, engine } from "./Errors.ts"
import { type Held, hold } from "./Held.ts"
import type { SessionPage } from "./Page.ts"
import * as Pointer from "./Pointer.ts"
import * as Select from "./Select.ts"
import * as Settle from "./Settle.ts"
import * as Verify from "./Verify.ts"

const quote = (s: string) => JSON.stringify(s)

/** A field that received a secret shows dots from then on, like a password field, in every screenshot. */
export const hideTyped = (element: unknown) => {
  const style = (element as { style?: { setProperty: (n: string, v: string, p: string) => void } } | null)?.style
  style?.setProperty("-webkit-text-security", "disc", "important")
}

export type Method = "click" | "doubleClick" | "hover" | "check" | "uncheck" | "selectOption" | "fill" | "type"

/** Where one Action runs: the element, how it reads in answers and errors, and how its effect settles. */
export interface Acting {
  readonly sp: SessionPage
  readonly action: Action
  readonly method: Method
  readonly label: string
  readonly locator: Locator
  /** The element itself, held for the act: reads and writes on it are one round trip each. */
  readonly held: Held
  /** Another element held during the act (the target re-rendered), released with it. */
  readonly also: (other: Held) => void
  /** The element as last read under the reference it was named by; undefined for a selector. */
  readonly described: AccessibilityTree.Element | undefined
  /** How the target reads in the answer: `textbox "Email"`. */
  readonly target: string
  readonly settle: Settle.SettleOptions
  readonly done: (text: string, settled: Settle.Settled, shown?: ActTarget) => ActResult
  /** What was done, in words: `filled textbox "Email" with "a@b.c"`. */
  readonly past: (target: string, argument: string) => string
  /** An element as answers and errors point to it. */
  readonly refFor: (e: AccessibilityTree.Element) => ElementRef
  /** Reads the page's elements (every frame) with fresh references. */
  readonly read: () => Effect.Effect<ReadonlyArray<AccessibilityTree.Element>, SwitchyardError>
}

const toggles = ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"]

/** The steps of an act, each a span of its own: what the target is before, the input and its settling, the read-back. */
const inspecting = Effect.withSpan("Controls.inspect")
const inputting = Effect.withSpan("Controls.input")

/** The element acted on, as the answer names it: its reference and name, or the selector and what the page says. */
const identity = (a: Acting, before?: Verify.Before): ElementRef =>
  a.described !== undefined
    ? a.refFor(a.described)
    : { ref: a.action.selector, role: before?.role ?? "element", name: before?.name ?? a.action.description }

/** How the target reads in a message: as the page names it when a selector named it. */
const named = (a: Acting, before: Verify.Before) =>
  a.described !== undefined || (before.name === "" && a.action.description !== "")
    ? a.target
    : `${before.role}${before.name === "" ? "" : ` ${quote(before.name)}`}`

/** A control that takes no input now (disabled, read-only, inert behind a dialog) fails at once, untouched. */
const refuseDisabled = (a: Acting, before: Verify.Before, method: string) => {
  const target = named(a, before)
  const why = before.disabled
    ? `${target} is disabled; it can be used once the page enables it (a form often enables its controls once its required fields are filled)`
    : before.readOnly && method === "fill"
      ? `${target} is read-only`
      : before.blocked !== undefined
        ? `${target} is behind ${before.blocked}, which holds the input (the page behind it is inert); close it or use it first`
        : undefined
  return why === undefined
    ? Effect.void
    : Effect.fail(
        new ActionFailed({ engine, action: a.label, sideEffect: "none", message: `${a.label} did nothing: ${why}` })
      )
}

/** The click, double-click or hover a person makes: pointing where the target shows, then the toggle's state read. */
export const point = (a: Acting) =>
  Effect.gen(function* () {
    const { sp, held, method } = a
    const { page } = sp
    const timeout = sp.limits.actionTimeoutMs
    // A selector names an element whose role and name the answer reads from the page.
    const before =
      a.described === undefined
        ? yield* attempt(sp.at(a.label), () => Verify.before(held, false, timeout)).pipe(inspecting)
        : undefined
    let aim: Pointer.Aim | undefined
    const perform = async (on: Held) => {
      if (method === "hover") return Pointer.hover(page, on, timeout)
      aim = await Pointer.approach(page, on, timeout, {
        enabled: true,
        target: before === undefined ? a.target : named(a, before)
      })
      return Pointer.click(page, on, aim, timeout, method === "doubleClick" ? 2 : 1)
    }
    const settled = yield* attempt(a.sp.at(a.label, "possible"), () =>
      Settle.around(page, () => retargeted(a, perform), a.settle)
    ).pipe(inputting)
    const role = a.described?.role ?? before?.role ?? ""
    // A click on a checkbox answers with the state it left; a click that navigated (or is waiting on the site) has no
    // target left to read.
    const away = settled.navigated !== undefined || settled.pending !== undefined
    if (method === "hover" || away || !(aim?.toggle || toggles.includes(role))) {
      return a.done(a.past(a.target, ""), settled, { ...identity(a, before) })
    }
    // The click is done: a box gone from the page since (a list re-rendered) leaves the answer without its state.
    const read = yield* Effect.option(readBack(a, held, {}))
    const shown = read._tag === "Some" ? Verify.shown(read.value.state) : {}
    return a.done(a.past(a.target, ""), settled, { ...identity(a, before), ...shown })
  })

/** A row re-rendered as it scrolled into view is the same row: the act is made on the one now in view (once). */
export const retargeted = async <A>(a: Acting, perform: (on: Held) => Promise<A>): Promise<A> => {
  try {
    return await perform(a.held)
  } catch (e) {
    if (!(e instanceof Pointer.Detached) || a.described === undefined) throw e
    const before = a.described
    const same = (await a.sp.elements.read(a.sp.limits.actionTimeoutMs)).filter(
      (x) => x.role === before.role && x.name === before.name && before.name !== ""
    )
    if (same.length !== 1) throw new Pointer.Detached()
    const now = hold(a.sp.elements.locate(same[0]!.ref)!)
    try {
      return await perform(now)
    } finally {
      now.release()
    }
  }
}

/** How long a target that does not show what was asked yet is watched (a state set a moment after the event). */
const settleMs = 600

/**
 * What the target shows after the act. One that does not show what was asked yet is looked at again for a moment,
 * then once more as the last look (which names the field typed text reached instead). A target re-rendered meanwhile
 * (a framework replacing the field as it was typed into) is read where it now is: the one element with its role and
 * name. Answers that element too.
 */
const readBack = (a: Acting, on: Held, ask: Verify.Ask) =>
  attempt(a.sp.at(a.label, "possible"), async () => {
    const timeout = a.sp.limits.actionTimeoutMs
    const look = async (at: Held, early: boolean) => Verify.after(at, { ...ask, early }, timeout)
    let at = on
    let state: Verify.After
    try {
      // A target still there answers at once; a reference to a replaced one would be waited on.
      state = await Verify.after(on, { ...ask, early: true }, Math.min(timeout, 1_500))
    } catch (e) {
      if ((await on.locator.count().catch(() => 0)) > 0) state = await look(on, true)
      else {
        const before = a.described
        if (before === undefined || before.name === "") throw e
        const same = (await a.sp.elements.read(timeout)).filter((x) => x.role === before.role && x.name === before.name)
        if (same.length !== 1) throw new Pointer.Detached()
        // The act's own release ends the element held here too.
        at = hold(a.sp.elements.locate(same[0]!.ref)!)
        a.also(at)
        state = await look(at, true)
      }
    }
    const deadline = Date.now() + settleMs
    while (!state.ok && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      state = await look(at, true)
    }
    return { on: at, state: state.ok ? state : await look(at, false) }
  }).pipe(Effect.withSpan("Controls.readBack"))

/** `check` / `uncheck`: nothing to do when the box already shows it; otherwise a click, and the state read back. */
export const toggle = (a: Acting) =>
  Effect.gen(function* () {
    const { sp, held } = a
    const { page } = sp
    const timeout = sp.limits.actionTimeoutMs
    const want = a.method === "check"
    const before = yield* attempt(sp.at(a.label), () => Verify.before(held, false, timeout)).pipe(inspecting)
    yield* refuseDisabled(a, before, a.method)
    const refuse = (why: string) =>
      Effect.fail(
        new ActionFailed({ engine, action: a.label, sideEffect: "none", message: `${a.label} did nothing: ${why}` })
      )
    if (before.checked === undefined)
      return yield* refuse(`${named(a, before)} is not a checkbox, radio button or switch`)
    if (before.checked === want) {
      const shown = { ...identity(a, before), checked: before.checked }
      return a.done(`${a.target} was already ${want ? "checked" : "unchecked"}`, {}, shown)
    }
    if (!want && before.role === "radio") {
      return yield* refuse(`a radio button is unchecked by checking another option of its group, not by itself`)
    }
    const settled = yield* attempt(sp.at(a.label, "possible"), () =>
      Settle.around(
        page,
        () =>
          retargeted(a, async (on) => {
            const aim = await Pointer.approach(page, on, timeout, { enabled: true, target: a.target })
            await Pointer.click(page, on, aim, timeout)
          }),
        a.settle
      )
    ).pipe(inputting)
    const { state } = yield* readBack(a, held, { checked: want })
    if (!state.ok) {
      return yield* Effect.fail(
        Verify.failed({
          engine,
          action: a.label,
          target: identity(a, before),
          expected: want ? "checked" : "not checked",
          state
        })
      )
    }
    return a.done(a.past(a.target, ""), settled, { ...identity(a, before), ...Verify.shown(state) })
  })

/**
 * `selectOption`: the options asked for (several in a multi-select), chosen as a person does, the chosen set read back.
 * A native select that takes the options is read, chosen from and read back in one round trip; `known`: the control
 * as already read (a fill that found a dropdown), chosen from as any other.
 */
export const choose = (a: Acting, wanted: ReadonlyArray<string>, known?: Verify.Before) =>
  Effect.gen(function* () {
    const { sp, held } = a
    const timeout = sp.limits.actionTimeoutMs
    const first =
      known === undefined
        ? yield* attempt(sp.at(a.label, "possible"), () =>
            Settle.around(sp.page, () => Select.inspectAndChoose(held, wanted, timeout), a.settle, Select.seenFirst)
          ).pipe(inputting)
        : undefined
    const before = known ?? first!.result.before
    const made = first?.result.chose
    yield* refuseDisabled(a, before, "selectOption")
    const ctx: Select.Context = {
      label: a.label,
      target: a.target,
      before,
      read: a.read,
      refFor: a.refFor,
      ...(a.described === undefined ? {} : { ref: a.described.ref })
    }
    let settled: Settle.Settled = {}
    let asked: ReadonlyArray<string>
    // What a native select showed once its handlers' work had run, read in the same round trip as the choice.
    let shown: Verify.After | undefined
    if (made !== undefined) {
      settled = first!
      shown = made.state
      asked = made.selected
    } else if (before.options !== undefined) {
      const chosen = yield* Select.native(sp, held, wanted, ctx)
      const ran = yield* attempt(sp.at(a.label, "possible"), () =>
        Settle.around(sp.page, chosen.run, a.settle, Select.seen)
      ).pipe(inputting)
      settled = ran
      shown = ran.result?.state
      asked = chosen.selected
    } else asked = yield* Select.custom(sp, held, wanted, ctx)
    // A choice the page shows is answered as it showed it (a page it moved on from shows it no more); otherwise it is
    // watched a moment, as every act is.
    const { state } = shown?.ok === true ? { state: shown } : yield* readBack(a, held, { selected: asked })
    if (!state.ok) {
      const expected = `${asked.map(quote).join(", ")} selected`
      return yield* Effect.fail(
        Verify.failed({ engine, action: a.label, target: identity(a, before), expected, state })
      )
    }
    const what = (state.selected ?? asked).map(quote).join(", ")
    return a.done(a.past(a.target, what), settled, { ...identity(a, before), ...Verify.shown(state) })
  })

/**
 * `fill` / `type`: the value as people write it converted to the field's format (a date, a time, a number), typed
 * like a person, and read back. A field that does not show it after a second, whole-value try is
 * `verification_failed`, naming the field the text reached instead (put back when that is safe).
 */
export const fillIn = (a: Acting, value: string, secret: boolean) =>
  Effect.gen(function* () {
    const { sp, held, method } = a
    const { page } = sp
    const timeout = sp.limits.actionTimeoutMs
    // A fill's field typed into has its text selected in the same round trip; one refused below is left untouched.
    const { before, selected } = yield* attempt(sp.at(a.label), () =>
      Pointer.ready(held, method === "fill", timeout)
    ).pipe(inspecting)
    yield* refuseDisabled(a, before, "fill")
    // A dropdown filled is a dropdown chosen from.
    if (before.kind === "select") return yield* choose(a, [value], before)
    const kind = Verify.valueKind(before)
    let text = value
    let note: string | undefined
    if (kind !== undefined && !secret) {
      const field = before.slider === undefined ? before : { ...before, ...mapSlider(before.slider) }
      const converted = InputValue.convert(
        { kind, lang: field.lang, min: field.min, max: field.max, step: field.step },
        value
      )
      if (Result.isFailure(converted)) {
        return yield* Effect.fail(
          new InvalidInput({
            engine,
            action: a.label,
            field: "arguments",
            message: `${named(a, before)} takes ${converted.failure}; ${quote(value)} is not one (nothing was typed)`
          })
        )
      }
      text = converted.success.value
      note = converted.success.note
    }
    // A number is typed whole: a half-typed "-" is no number, and spinners drop it.
    const fieldKind = kind === "number" ? "number" : before.kind
    const perform =
      (whole: boolean, on = held) =>
      async () => {
        if (before.slider !== undefined) return Pointer.slide(page, on, Number(text), timeout)
        // Typing into a field adds to its end, where a person's click puts the caret.
        if (method === "type") await Pointer.typeAtEnd(page, on, text, timeout)
        else if (whole) await on.locator.fill(text, { timeout })
        else await Pointer.fill(page, on, text, timeout, fieldKind, selected && on === held)
        if (secret) await on.evaluate(hideTyped, undefined, timeout)
      }
    const settled = yield* attempt(sp.at(a.label, "possible"), () =>
      Settle.around(page, perform(false), a.settle)
    ).pipe(inputting)
    const ask: Verify.Ask = { text: { value: text, mode: Verify.modeOf(method === "type" ? "type" : "fill", before) } }
    let { on, state } = yield* readBack(a, held, ask)
    // Keys a widget dropped (a spinner, a mask, a field re-rendered as it was typed into) may hold when the value is
    // set at once, as a paste sets it.
    if (!state.ok && state.landed === undefined && method === "fill" && before.slider === undefined) {
      yield* attempt(sp.at(a.label, "possible"), perform(true, on))
      ;({ on, state } = yield* readBack(a, on, ask))
    }
    if (!state.ok) {
      const landed = state.landed === undefined ? undefined : yield* whereLanded(a)
      const fallback =
        state.landed === undefined ? undefined : { ref: "", role: state.landed.role, name: state.landed.name }
      return yield* Effect.fail(
        Verify.failed({
          engine,
          action: a.label,
          target: identity(a, before),
          // A secret is named by its reference, never written out.
          expected: secret ? (a.action.arguments[0] ?? "") : text,
          state: secret ? { ...state, value: "[redacted]" } : state,
          ...((landed ?? fallback) ? { landed: (landed ?? fallback)! } : {})
        })
      )
    }
    const shown = quote(secret ? (a.action.arguments[0] ?? "") : text)
    const read = note === undefined ? "" : ` (${quote(value)} read ${note})`
    const targetShown = { ...identity(a, before), ...Verify.shown(secret ? { ...state, value: "[redacted]" } : state) }
    return a.done(`${a.past(a.target, shown)}${read}`, settled, targetShown)
  })

/** An ARIA slider's bounds in the terms of a range input. */
const mapSlider = (slider: NonNullable<Verify.Before["slider"]>) => ({
  min: String(slider.min),
  max: String(slider.max),
  step: "any"
})

/** The field typed text reached instead of the target, found by the mark `Verify.readBack` left on it. */
const whereLanded = (a: Acting) =>
  Effect.gen(function* () {
    const { sp, label } = a
    const fields = (yield* a.read()).filter((e) => ["textbox", "searchbox", "combobox", "spinbutton"].includes(e.role))
    const marks = yield* Effect.forEach(
      fields.slice(0, 200),
      (e) =>
        attempt(sp.at(label), () =>
          Verify.isLanded(sp.elements.locate(e.ref)!, sp.limits.actionTimeoutMs).catch(() => false)
        ),
      { concurrency: 20 }
    )
    yield* Effect.promise(() =>
      Promise.all(
        sp.page.frames().map((f) => f.evaluate(Verify.unmarkLanded, Verify.landedMark).catch(() => undefined))
      )
    )
    const at = marks.indexOf(true)
    return at < 0 ? undefined : a.refFor(fields[at]!)
  })
