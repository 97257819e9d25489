/**
 * Seed 001's job-application steps on a page: read the form's fields, fill them from the profile, set the résumé,
 * notice a human check and recognise the confirmation (the submit itself is Submit.ts). Each decides from the page's
 * facts, read afresh without a model (so a step run again after a crash, on another runner or after a person does
 * only what is still missing); its actions go through the session's cascade, the model's engines first when one is
 * configured.
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

/** Fills the page's empty or wrong fields the profile answers, and its empty file inputs; how many it set. */
export const fillPage = (driver: Driver, profile: Profile, facts: Facts) =>
  Effect.gen(function* () {
    let set = 0
    for (const field of facts.fields) {
      if (fillable(field)) {
        const value = valueFor(profile, field)
        if (value === undefined || field.value === value) continue
        yield* driver.call("browser.act", {
          action: { selector: selectorOf(field), method: "fill", arguments: [value], description: field.label }
        })
        set++
      } else if (field.type === "file" && field.value === "") {
        yield* driver.upload(field.label || field.name, profile.resume)
        set++
      }
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
