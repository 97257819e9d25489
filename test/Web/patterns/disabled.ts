/**
 * Controls the page has switched off: a submit button disabled until the terms are accepted, a button marked
 * aria-disabled that ignores clicks, a fieldset disabled as a whole, an option that cannot be chosen. An act on them
 * answers at once that they are disabled, and nothing happens on the page.
 */
import assert from "node:assert/strict"
import { type Answer, pattern, recordScript, reportState } from "../Pattern.ts"

/** The refusal the contract asks for: action_failed, no side effect, the word "disabled", the element's name. */
const refusedAsDisabled = (answer: Answer, name: string) => {
  assert.equal(answer.error?.type, "action_failed", JSON.stringify(answer.error ?? answer.result))
  assert.equal(answer.error?.sideEffect, "none", JSON.stringify(answer.error))
  assert.match(answer.error?.message ?? "", /disabled/i)
  assert.ok(answer.error?.message.includes(name), `the refusal names "${name}": ${answer.error?.message}`)
}

export const patterns = [
  pattern({
    name: "submit-disabled-until-terms",
    class: "disabled",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<form id="f" method="post" action="record">
  <p><label for="name">Full name</label> <input id="name" name="name"></p>
  <p><label><input type="checkbox" id="ok" name="ok" value="yes"> I confirm the information above is accurate</label></p>
  <button id="send" disabled>Submit application</button>
</form>
<script>ok.addEventListener("change", () => { send.disabled = !ok.checked })</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Full name" with "Ada Lovelace"' })
      const early = await agent.call("browser.act", { instruction: 'click "Submit application"' })
      // Success would mean the form went; a refusal sends nothing.
      await agent.expectRecorded(early.ok ? [{ name: "Ada Lovelace" }] : [], "the page after clicking Submit")
      refusedAsDisabled(early, "Submit application")
      await agent.ok("browser.act", { instruction: 'check "I confirm the information above is accurate"' })
      await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      await agent.expectRecorded([{ name: "Ada Lovelace", ok: "yes" }], "the form post once enabled")
    }
  }),
  pattern({
    name: "aria-disabled-button-ignores-clicks",
    class: "disabled",
    pages: {
      // Kept focusable for screen readers, so it is marked aria-disabled rather than disabled; its handler returns
      // early and shows why.
      "/company.html": `<!doctype html><title>Company profile</title>${recordScript}
<p><label for="company">Company name</label> <input id="company"></p>
<button id="next" aria-disabled="true" class="btn disabled" style="opacity:.5">Continue</button>
<p id="hint" hidden>Enter your company name first.</p>
<script>
company.addEventListener("input", () => next.setAttribute("aria-disabled", String(company.value.trim() === "")))
next.addEventListener("click", () => {
  if (next.getAttribute("aria-disabled") === "true") { hint.hidden = false; record({ ignoredClick: true }); return }
  record({ continued: company.value })
})
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/company.html") })
      const early = await agent.call("browser.act", { instruction: 'click "Continue"' })
      // A success here would mean the page went on; it records whether the click was ignored.
      await agent.expectRecorded(early.ok ? [{ continued: "" }] : [], "the page after clicking Continue")
      refusedAsDisabled(early, "Continue")
      await agent.ok("browser.act", { instruction: 'fill "Company name" with "Analytical Engines Ltd"' })
      await agent.ok("browser.act", { instruction: 'click "Continue"' })
      await agent.expectRecorded([{ continued: "Analytical Engines Ltd" }], "the click once enabled")
    }
  }),
  pattern({
    name: "disabled-fieldset-select-and-option",
    class: "disabled",
    pages: {
      "/billing.html": `<!doctype html><title>Billing</title>${reportState}
<form id="f">
<fieldset disabled><legend>Managed by your administrator</legend>
  <p><label for="company">Company name</label> <input id="company" value="Acme"></p>
  <p><label><input type="checkbox" id="annual"> Annual billing</label></p>
</fieldset>
<p><label for="plan">Plan</label> <select id="plan" disabled><option>Team</option><option>Business</option></select></p>
<p><label for="size">T-shirt size</label> <select id="size"><option>S</option><option disabled>M (sold out)</option><option>L</option></select></p>
</form>
<script>function state() { return { company: company.value, annual: annual.checked, plan: plan.value, size: size.value } }</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/billing.html") })
      const unchanged = { company: "Acme", annual: false, plan: "Team", size: "S" }
      // Each try, and what the page would show had it worked.
      const tries: Array<[string, string, Partial<typeof unchanged>]> = [
        ['fill "Company name" with "Globex"', "Company name", { company: "Globex" }],
        ['check "Annual billing"', "Annual billing", { annual: true }],
        ['select "Business" in "Plan"', "Plan", { plan: "Business" }]
      ]
      for (const [instruction, name, done] of tries) {
        const answer = await agent.call("browser.act", { instruction })
        await agent.expectState(answer.ok ? { ...unchanged, ...done } : unchanged, `the page after ${instruction}`)
        refusedAsDisabled(answer, name)
      }
      const soldOut = await agent.call("browser.act", { instruction: 'select "M (sold out)" in "T-shirt size"' })
      await agent.expectState(
        soldOut.ok ? { ...unchanged, size: "M (sold out)" } : unchanged,
        "the size after choosing a disabled option"
      )
      assert.equal(soldOut.ok, false, "a disabled option cannot be chosen")
      assert.match(soldOut.error?.message ?? "", /disabled/i, JSON.stringify(soldOut.error))
    }
  })
]
