/**
 * Seed 001's job-application steps on a page: read the form's fields, fill them from the profile, set the résumé,
 * notice a human check and recognise the confirmation (the submit itself is Submit.ts). Each decides from the page's
 * facts, read afresh without a model (so a step run again after a crash, on another runner or after a person does
 * only what is still missing); its actions go through the session's cascade, the model's engines first when one is
 * configured. A field is filled by a sentence naming it as the page does (`fill "First Name" with "Ada"`), so the
 * replay level answers it on the next application to a page of the same shape; the fields are then read again and
 * any that does not hold its own value is set through its id.
 */
import { Effect } from "effect"
import { StepFailed } from "../Errors/Service.ts"
import * as HumanCheck from "../Takeover/HumanCheck.ts"
import { type Profile, valueFor } from "./Profile.ts"
import type { Driver, Facts, Field } from "./SessionDriver.ts"

export type Platform = "greenhouse" | "lever" | "workday" | "other"

const confirmation = /application (received|submitted)|thank you for applying|already applied/i
const advance = /^(continue|next|save and continue|save & continue)$/i
const submitButton = 'button[type="submit"], input[type="submit"]'

/** Which ATS family the page belongs to, from its URL and what it says about itself. */
export const platformOf = (facts: Facts): Platform => {
  const all = `${facts.url} ${facts.text}`.toLowerCase()
  if (all.includes("greenhouse")) return "greenhouse"
  if (all.includes("lever")) return "lever"
  if (all.includes("workday") || all.includes("myworkdayjobs")) return "workday"
  return "other"
}

export const isConfirmation = (facts: Facts) => confirmation.test(facts.text) || confirmation.test(facts.title)

/** The words the cascade hands a page to a person for (Takeover/HumanCheck.ts), in the page's title, headings or fields. */
export const hasHumanCheck = (facts: Facts) =>
  HumanCheck.words.test(facts.title) ||
  facts.fields.some((f) => HumanCheck.words.test(`${f.label} ${f.name}`)) ||
  facts.headings.some((h) => HumanCheck.words.test(h))

const selectorOf = (field: Field) =>
  field.id ? `[id="${field.id.replace(/"/g, '\\"')}"]` : `[name="${field.name.replace(/"/g, '\\"')}"]`

const fillable = (f: Field) => ["text", "email", "tel", "textarea", "url", "number"].includes(f.type)

/** Letters and digits in order: a value as the page may show it back (a phone mask, a date in its own format). */
const essence = (s: string) =>
  s
    .normalize("NFKC")
    .replace(/[^\p{L}\p{N}]+/gu, "")
    .toLowerCase()

const holds = (field: Field, value: string) => essence(field.value) === essence(value)

/** Quotes would end the sentence's quoted words early, and a placeholder's form would be read as one: such a field is
 * filled through its id. A secret's reference (`{{secret:NAME}}`) is carried as it is, and kept as a reference. */
const quotable = (s: string) => s.trim() !== "" && !/["“”]|\{\{\s*value:/.test(s)

/**
 * The sentence that fills `field` with `value`, naming the field as the page does: the replay level keeps what it
 * resolved to under the page's route with the value as a placeholder. None when the page's name for it is not one
 * the sentence can carry, or is shared with another field (the id says which one is meant).
 */
const sentenceFor = (field: Field, value: string, names: ReadonlyMap<string, number>) =>
  quotable(field.label) && quotable(value) && names.get(essence(field.label)) === 1
    ? `fill "${field.label.trim()}" with "${value}"`
    : undefined

const byId = (driver: Driver, field: Field, value: string) =>
  driver.call("browser.act", {
    action: { selector: selectorOf(field), method: "fill", arguments: [value], description: field.label }
  })

/**
 * Fills the page's empty or wrong fields the profile answers, and its empty file inputs; how many it set. Each text
 * field is filled by its sentence through the cascade (replayed when a page of the same shape was filled before), or
 * through its id when the sentence is not answered; then the page is read again, and a field that does not hold its
 * own value, or took a value meant for another, is set through its id.
 */
export const fillPage = (driver: Driver, profile: Profile, facts: Facts) =>
  Effect.gen(function* () {
    const names = new Map<string, number>()
    for (const f of facts.fields) names.set(essence(f.label), (names.get(essence(f.label)) ?? 0) + 1)
    const wanted = new Map<Field, string>()
    const written: Array<string> = []
    let set = 0
    let sentences = 0
    for (const field of facts.fields) {
      if (fillable(field)) {
        const value = valueFor(profile, field)
        if (value === undefined) continue
        wanted.set(field, value)
        if (field.value === value) continue
        const sentence = sentenceFor(field, value, names)
        if (sentence !== undefined) sentences++
        const said = sentence === undefined ? undefined : yield* driver.answer("browser.act", { instruction: sentence })
        if (said?.ok !== true) yield* byId(driver, field, value)
        written.push(value)
        set++
      } else if (field.type === "file" && field.value === "") {
        yield* driver.upload(field.label || field.name, profile.resume)
        set++
      }
    }
    if (sentences === 0) return set
    // What each field holds now, read from the page: a level that resolved a sentence (a model's pick, say) may have
    // found another field than the one meant, and a sentence that failed may have typed before its check.
    const now = yield* driver.facts
    const same = (a: Field, b: Field) => (a.id ? a.id === b.id : a.name === b.name && a.type === b.type)
    for (const before of facts.fields.filter(fillable)) {
      const after = now.fields.find((f) => same(f, before))
      if (after === undefined) continue
      const value = wanted.get(before)
      if (value !== undefined && !holds(after, value)) yield* byId(driver, after, value)
      else if (value === undefined && !holds(after, before.value) && written.some((w) => holds(after, w)))
        yield* byId(driver, after, before.value)
    }
    return set
  })

/** The click on the form's submit button, as `browser.act` arguments. */
export const submitAction = (description: string) => ({
  action: { selector: submitButton, method: "click", arguments: [], description }
})

export const clickSubmit = (driver: Driver, description: string) =>
  driver.call("browser.act", submitAction(description))

/** Whether the page's button moves to another page of the form rather than sending the application: buttons are
 * lines of the page's visible text. */
const advances = (facts: Facts) => facts.text.split("\n").some((line) => advance.test(line.trim()))

/** Opens the job's page: each attempt starts there, whatever page an earlier one left the session on. */
export const startBrowser = (driver: Driver, job: string) =>
  driver.navigate(job).pipe(
    Effect.andThen(driver.facts),
    Effect.map((facts) => ({ url: facts.url, title: facts.title }))
  )

export const analyzeForm = (driver: Driver) =>
  Effect.gen(function* () {
    const facts = yield* driver.facts
    return {
      platform: platformOf(facts),
      fields: facts.fields.map((f) => f.label || f.name),
      submitted: isConfirmation(facts)
    }
  })

/**
 * Fills the pages of the form up to the résumé, a human check or the final submit: a page with only fields the
 * profile answers and a "Continue" is filled and left.
 */
export const fillFields = (driver: Driver, profile: Profile) =>
  Effect.gen(function* () {
    let filled = 0
    for (let page = 0; page < 8; page++) {
      const facts = yield* driver.facts
      if (isConfirmation(facts) || hasHumanCheck(facts)) break
      filled += yield* fillPage(driver, profile, { ...facts, fields: facts.fields.filter(fillable) })
      if (facts.fields.some((f) => f.type === "file")) break
      if (!advances(facts)) break
      yield* clickSubmit(driver, "continue")
    }
    return { filled }
  })

/** Sets the résumé where the form asks for it, then moves on while the form only continues. */
export const uploadResume = (driver: Driver, profile: Profile) =>
  Effect.gen(function* () {
    const facts = yield* driver.facts
    const file = facts.fields.find((f) => f.type === "file")
    if (file === undefined) return { uploaded: false }
    yield* driver.upload(file.label || file.name, profile.resume)
    if (advances(facts)) {
      yield* clickSubmit(driver, "continue")
      yield* fillFields(driver, profile)
    }
    return { uploaded: true }
  })

/** A human check the model-free level cannot pass fails the step, which hands the page to a person. */
export const checkCaptcha = (driver: Driver) =>
  Effect.gen(function* () {
    const facts = yield* driver.facts
    if (hasHumanCheck(facts)) {
      return yield* new StepFailed({
        step: "check-captcha",
        retryable: false,
        message: `a human check is on ${facts.url}: a person must solve it`
      })
    }
    return { url: facts.url }
  })

/** The confirmation the page shows; a person's word stands for it when the site showed none. */
export const verify = (driver: Driver, confirmedByPerson = false) =>
  Effect.gen(function* () {
    const facts = yield* driver.facts
    if (!isConfirmation(facts) && confirmedByPerson) {
      return { url: facts.url, confirmation: "a person confirmed the application was received" }
    }
    if (!isConfirmation(facts)) {
      return yield* new StepFailed({
        step: "verify",
        retryable: false,
        message: `no confirmation on ${facts.url} ("${facts.title}")`
      })
    }
    return { url: facts.url, confirmation: facts.headings[0] ?? facts.title }
  })
