/** A name that is not on the page: a close one may be suggested, never filled in its place. */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

const form = `<!doctype html><title>Apply</title>${recordScript}
<form id="f" onsubmit="event.preventDefault(); record({ full: f.full.value, email: f.email.value })">
  <label for="full">Full name</label><input id="full" name="full">
  <label for="email">Email address</label><input id="email" name="email" type="email">
  <label for="p1">Phone number</label><input id="p1" name="p1">
  <label for="p2">Phone extension</label><input id="p2" name="p2">
  <button>Submit application</button>
</form>`

export const patterns = [
  pattern({
    name: "missing-field-never-replaced",
    class: "fuzzy",
    pages: { "/apply.html": form },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Full name" with "Ada Lovelace"' })
      const answer = await agent.call("browser.act", { instruction: 'fill "Middle name" with "X"' })
      assert.equal(answer.ok, false, `filled something: ${JSON.stringify(answer.result)}`)
      assert.equal(answer.error?.type, "element_not_found")
      const suggested = (answer.error?.elements ?? []) as Array<{ ref: string; name: string }>
      assert.ok(
        suggested.some((e) => e.name === "Full name" && /e\d+$/.test(e.ref)),
        JSON.stringify(answer.error)
      )
      await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      agent.expectPage(agent.recorded(), [{ full: "Ada Lovelace", email: "" }])
    }
  }),
  pattern({
    name: "whole-words-name-is-the-same-field",
    class: "fuzzy",
    pages: { "/apply.html": form },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Email" with "ada@example.com"' })
      await agent.ok("browser.act", { instruction: 'click "Submit"' })
      agent.expectPage(agent.recorded(), [{ full: "", email: "ada@example.com" }])
    }
  }),
  pattern({
    name: "two-close-fields-are-ambiguous",
    class: "fuzzy",
    pages: { "/apply.html": form },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      const answer = await agent.call("browser.act", { instruction: 'fill "Phone" with "555"' })
      assert.equal(answer.error?.type, "ambiguous_target", JSON.stringify(answer))
      const names = ((answer.error?.elements ?? []) as Array<{ name: string }>).map((e) => e.name).sort()
      assert.deepEqual(names, ["Phone extension", "Phone number"])
      await agent.ok("browser.act", { instruction: 'fill "Phone number" with "555"' })
      const read = await agent.ok("browser.extract", { instruction: "the form fields" })
      const phone = (read.result.fields as Array<{ label: string; value: string }>).find(
        (f) => f.label === "Phone number"
      )
      assert.equal(phone?.value, "555")
    }
  })
]
