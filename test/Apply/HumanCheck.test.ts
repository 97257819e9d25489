/**
 * The application workflow and the cascade see the same human checks: a page the cascade would hand to a person (a
 * CAPTCHA, "verify you are a human") makes apply's captcha step hand it over too, in the phrasings real sites use.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Facts } from "../../src/Apply/SessionDriver.ts"
import { hasHumanCheck } from "../../src/Apply/Steps.ts"

const page = (over: Partial<Facts>): Facts => ({
  url: "http://127.0.0.1/apply",
  title: "Apply — Data Engineer",
  text: "",
  headings: [],
  links: [],
  fields: [],
  ...over
})

describe("the human check apply looks for", () => {
  it("is every phrasing the cascade hands to a person", () => {
    const headings = [
      "Please verify you are a human",
      "Verify that you are human",
      "Human verification",
      "Prove you are human",
      "Security check: CAPTCHA",
      "I'm not a robot"
    ]
    for (const heading of headings) assert.isTrue(hasHumanCheck(page({ headings: [heading] })), heading)
    assert.isTrue(
      hasHumanCheck(
        page({ fields: [{ label: "Type the characters from the image", name: "code", type: "text", value: "" }] })
      )
    )
    assert.isTrue(hasHumanCheck(page({ title: "Human verification required" })))
  })

  it("is no ordinary form", () => {
    const fields = [
      { label: "First name", name: "first_name", type: "text", value: "" },
      { label: "Are you legally authorized to work in the US?", name: "authorized", type: "radio", value: "" }
    ]
    assert.isFalse(hasHumanCheck(page({ headings: ["Apply for Data Engineer", "Human resources"], fields })))
  })
})
