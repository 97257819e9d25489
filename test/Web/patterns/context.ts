/**
 * Same-named controls a person tells apart by what surrounds them: Yes/No under different questions (fieldset legends,
 * ARIA radiogroups), "Apply" in each job card, "Edit" in each table row, the same fields in two address sections,
 * and a confirm dialog whose button shares its name with the page's.
 */
import assert from "node:assert/strict"
import { pattern, recordScript, reportState } from "../Pattern.ts"

type Candidate = { readonly ref: string; readonly role: string; readonly name: string; readonly context?: string }

/** The candidates of an ambiguous_target answer, after checking that is what came back. */
const candidates = (answer: { ok: boolean; error?: Record<string, any> | undefined }): ReadonlyArray<Candidate> => {
  assert.equal(answer.error?.type, "ambiguous_target", JSON.stringify(answer.error ?? answer))
  return answer.error?.elements as ReadonlyArray<Candidate>
}

const questions = [
  ["authorized", "Are you legally authorized to work in the United States?"],
  ["sponsorship", "Will you now or in the future require sponsorship for employment visa status?"],
  ["adult", "Are you at least 18 years of age?"]
] as const

export const patterns = [
  pattern({
    name: "yes-no-radios-under-fieldset-legends",
    class: "context",
    pages: {
      "/questions.html": `<!doctype html><title>Application questions</title>${reportState}
<h1>Application questions</h1>
<form id="f" method="post" action="record">
${questions
  .map(
    ([name, q]) => `<fieldset><legend>${q}</legend>
  <label><input type="radio" name="${name}" value="yes"> Yes</label>
  <label><input type="radio" name="${name}" value="no"> No</label>
</fieldset>`
  )
  .join("\n")}
<button>Submit application</button>
</form>
<script>function state() { return { authorized: f.authorized.value, sponsorship: f.sponsorship.value, adult: f.adult.value } }</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/questions.html") })
      const yeses = candidates(await agent.call("browser.act", { instruction: 'check "Yes"' }))
      await agent.expectState({ authorized: "", sponsorship: "", adult: "" }, "nothing ticked on an ambiguous target")
      assert.equal(yeses.length, 3, JSON.stringify(yeses))
      // Each candidate says which question it answers.
      for (const [i, [, q]] of questions.entries()) {
        assert.ok(yeses[i]?.context?.includes(q.slice(0, 30)), `candidate ${i}: ${JSON.stringify(yeses[i])}`)
      }
      await agent.ok("browser.act", { instruction: 'check "Yes" in "Are you legally authorized to work"' })
      await agent.expectState(
        { authorized: "yes", sponsorship: "", adult: "" },
        "after Yes to the authorization question"
      )
      await agent.ok("browser.act", { instruction: 'check "No" in "require sponsorship"' })
      await agent.expectState(
        { authorized: "yes", sponsorship: "no", adult: "" },
        "after No to the sponsorship question"
      )
      await agent.ok("browser.act", { ref: yeses[2]!.ref, method: "check" })
      await agent.expectState(
        { authorized: "yes", sponsorship: "no", adult: "yes" },
        "after Yes to the age question by reference"
      )
      // An observe phrase naming the question finds its options.
      const seen = await agent.ok("browser.observe", { instruction: 'the "No" option for "require sponsorship"' })
      const first = (seen.result as Array<{ description: string }>)[0]?.description ?? ""
      assert.match(first, /^radio "No".*sponsorship/, JSON.stringify(seen.result))
      await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      await agent.expectRecorded([{ authorized: "yes", sponsorship: "no", adult: "yes" }], "the form post")
    }
  }),
  pattern({
    name: "yes-no-aria-radiogroups",
    class: "context",
    pages: {
      // Custom radios: role radiogroup named by the question above it through aria-labelledby.
      "/screening.html": `<!doctype html><title>Screening</title>${reportState}
<style>[role=radio]{display:inline-block;padding:6px 14px;border:1px solid #888;border-radius:14px;margin-right:6px;cursor:pointer}
[role=radio][aria-checked=true]{background:#2557a7;color:#fff}</style>
<p id="q-license">Do you hold a valid driver's license?</p>
<div role="radiogroup" aria-labelledby="q-license" data-q="license"><div role="radio" aria-checked="false" tabindex="0">Yes</div><div role="radio" aria-checked="false" tabindex="-1">No</div></div>
<p id="q-travel">Are you willing to travel up to 25% of the time?</p>
<div role="radiogroup" aria-labelledby="q-travel" data-q="travel"><div role="radio" aria-checked="false" tabindex="0">Yes</div><div role="radio" aria-checked="false" tabindex="-1">No</div></div>
<script>
for (const group of document.querySelectorAll("[role=radiogroup]")) {
  const radios = [...group.querySelectorAll("[role=radio]")]
  for (const r of radios) r.addEventListener("click", () => {
    for (const o of radios) { o.setAttribute("aria-checked", String(o === r)); o.tabIndex = o === r ? 0 : -1 }
  })
}
function state() {
  const out = {}
  for (const g of document.querySelectorAll("[role=radiogroup]"))
    out[g.dataset.q] = g.querySelector("[aria-checked=true]")?.textContent ?? ""
  return out
}
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/screening.html") })
      await agent.ok("browser.act", { instruction: 'check "No" in "willing to travel"' })
      await agent.expectState({ license: "", travel: "No" }, "after No to the travel question")
      await agent.ok("browser.act", { instruction: `check "Yes" in "Do you hold a valid driver's license"` })
      await agent.expectState({ license: "Yes", travel: "No" }, "after Yes to the license question")
      await agent.ok("browser.act", { instruction: 'click "Yes" in "willing to travel"' })
      await agent.expectState({ license: "Yes", travel: "Yes" }, "after clicking Yes in the travel question")
      const seen = await agent.ok("browser.observe", { instruction: "all controls" })
      const described = (seen.result as Array<{ description: string }>).map((a) => a.description)
      assert.equal(
        described.filter((d) => /^radio "Yes".*driver's license/.test(d)).length,
        1,
        JSON.stringify(described)
      )
      assert.equal(
        described.filter((d) => /^radio "Yes".*willing to travel/.test(d)).length,
        1,
        JSON.stringify(described)
      )
    }
  }),
  pattern({
    name: "job-cards-apply-in-card",
    class: "context",
    pages: {
      "/jobs.html": `<!doctype html><title>Careers — open roles</title>${recordScript}
<style>.cards{display:grid;grid-template-columns:repeat(2,260px);gap:12px}.card{border:1px solid #ccc;border-radius:8px;padding:12px}</style>
<h1>Open roles</h1>
<div class="cards">
  <article class="card"><h3>Senior Data Engineer</h3><p>Berlin · Full-time</p><button onclick="record({ applied: 'senior-data-engineer' })">Apply</button></article>
  <article class="card"><h3>Data Engineer</h3><p>Remote · Full-time</p><button onclick="record({ applied: 'data-engineer' })">Apply</button></article>
  <article class="card"><h3>Product Designer</h3><p>Lisbon · Part-time</p><button onclick="record({ applied: 'product-designer' })">Apply</button></article>
  <div class="card"><h3>Customer Success Manager</h3><p>Remote · Contract</p><a href="#" role="button" onclick="record({ applied: 'csm' }); return false">Apply</a></div>
</div>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/jobs.html") })
      const applies = candidates(await agent.call("browser.act", { instruction: 'click "Apply"' }))
      await agent.expectRecorded([], "nothing is clicked on an ambiguous target")
      assert.equal(applies.length, 4, JSON.stringify(applies))
      for (const [i, title] of [
        "Senior Data Engineer",
        "Data Engineer",
        "Product Designer",
        "Customer Success Manager"
      ].entries()) {
        assert.ok(applies[i]?.context?.includes(title), `candidate ${i} names its card: ${JSON.stringify(applies[i])}`)
      }
      // The exact title wins over a longer one containing its words.
      await agent.ok("browser.act", { instruction: 'click "Apply" in "Data Engineer"' })
      await agent.expectRecorded([{ applied: "data-engineer" }], "Apply in the Data Engineer card")
      await agent.ok("browser.act", { instruction: 'click "Apply" in "Customer Success Manager"' })
      await agent.expectRecorded([{ applied: "data-engineer" }, { applied: "csm" }], "Apply in the CSM card")
    }
  }),
  pattern({
    name: "table-rows-edit-in-row",
    class: "context",
    pages: {
      "/members.html": `<!doctype html><title>Team members</title>${recordScript}
<h1>Team members</h1>
<table>
  <thead><tr><th>Name</th><th>Email</th><th>Role</th><th><span style="position:absolute;left:-9999px">Actions</span></th></tr></thead>
  <tbody>
${["Jane Doe", "John Smith", "Ada Lovelace", "Grace Hopper"]
  .map(
    (n) =>
      `    <tr><td>${n}</td><td>${n.split(" ")[0]!.toLowerCase()}@example.com</td><td>Member</td><td><button onclick="record({ edit: '${n}' })">Edit</button> <button aria-label="Remove" onclick="record({ remove: '${n}' })">🗑</button></td></tr>`
  )
  .join("\n")}
  </tbody>
</table>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/members.html") })
      const edits = candidates(await agent.call("browser.act", { instruction: 'click "Edit"' }))
      assert.equal(edits.length, 4, JSON.stringify(edits))
      assert.ok(edits[1]?.context?.includes("John Smith"), `each candidate names its row: ${JSON.stringify(edits)}`)
      await agent.ok("browser.act", { instruction: 'click "Edit" in "John Smith"' })
      await agent.expectRecorded([{ edit: "John Smith" }], "Edit in John Smith's row")
      await agent.ok("browser.act", { instruction: 'click "Remove" in "Ada Lovelace"' })
      await agent.expectRecorded([{ edit: "John Smith" }, { remove: "Ada Lovelace" }], "Remove in Ada Lovelace's row")
    }
  }),
  pattern({
    name: "same-fields-in-two-address-sections",
    class: "context",
    pages: {
      "/checkout.html": `<!doctype html><title>Checkout</title>${reportState}
<form id="f" method="post" action="record">
<section aria-labelledby="ship-h"><h2 id="ship-h">Shipping address</h2>
  <p><label>Email <input name="ship_email"></label></p>
  <p><label>Street <input name="ship_street"></label></p>
  <p><label>Country <select name="ship_country"><option></option><option>France</option><option>Germany</option><option>Spain</option></select></label></p>
</section>
<fieldset><legend>Billing address</legend>
  <p><label>Email <input name="bill_email"></label></p>
  <p><label>Street <input name="bill_street"></label></p>
  <p><label>Country <select name="bill_country"><option></option><option>France</option><option>Germany</option><option>Spain</option></select></label></p>
</fieldset>
<button>Place order</button>
</form>
<script>function state() { return Object.fromEntries([...f.elements].filter((e) => e.name).map((e) => [e.name, e.value])) }</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/checkout.html") })
      const now = {
        ship_email: "",
        ship_street: "",
        ship_country: "",
        bill_email: "",
        bill_street: "",
        bill_country: ""
      }
      const steps: Array<[string, keyof typeof now, string]> = [
        ['fill "Street" in "Billing address" with "1 Rue de Rivoli"', "bill_street", "1 Rue de Rivoli"],
        ['fill "Street" in "Shipping address" with "Unter den Linden 5"', "ship_street", "Unter den Linden 5"],
        ['fill "Email" in "Billing address" with "billing@example.com"', "bill_email", "billing@example.com"],
        ['select "France" in "Country" in "Billing address"', "bill_country", "France"],
        ['select "Germany" in "Country" in "Shipping address"', "ship_country", "Germany"]
      ]
      for (const [instruction, name, value] of steps) {
        await agent.ok("browser.act", { instruction })
        now[name] = value
        await agent.expectState(now, instruction)
      }
      await agent.ok("browser.act", { instruction: 'click "Place order"' })
      await agent.expectRecorded([now], "the form post")
    }
  }),
  pattern({
    name: "confirm-dialog-button-named-like-the-page",
    class: "context",
    pages: {
      "/projects.html": `<!doctype html><title>Projects</title>${recordScript}
<style>.backdrop{position:fixed;inset:0;background:rgba(0,0,0,.4)}.modal{position:fixed;top:120px;left:50%;transform:translateX(-50%);background:#fff;padding:16px;width:320px}</style>
<h1>Projects</h1>
<ul>
  <li><h3>Apollo</h3><button onclick="ask('Apollo')">Delete</button></li>
  <li><h3>Gemini</h3><button onclick="ask('Gemini')">Delete</button></li>
</ul>
<div id="box" hidden><div class="backdrop"></div>
  <div class="modal" role="dialog" aria-modal="true" aria-labelledby="confirm-title">
    <h2 id="confirm-title">Delete project?</h2><p id="confirm-text"></p>
    <button onclick="confirmHidden()">Cancel</button> <button id="yes">Delete</button>
  </div></div>
<script>
let pending
function ask(name) { pending = name; document.getElementById("confirm-text").textContent = name + " and its history will be removed."; box.hidden = false }
function confirmHidden() { box.hidden = true }
yes.addEventListener("click", () => { record({ deleted: pending }); box.hidden = true })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/projects.html") })
      await agent.ok("browser.act", { instruction: 'click "Delete" in "Gemini"' })
      await agent.expectRecorded([], "the first Delete only opens the confirmation")
      await agent.ok("browser.act", { instruction: 'click "Delete" in "Delete project?"' })
      await agent.expectRecorded([{ deleted: "Gemini" }], "the confirmed deletion")
    }
  })
]
