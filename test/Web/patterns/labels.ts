/**
 * Where the label sits decides the name a person reads: a row of labels above a row of inputs (a CSS grid, a table's
 * header row), labels laid over their inputs (floating labels), sub-labels under the fields, text beside a file input.
 */
import assert from "node:assert/strict"
import { pattern, recordScript, reportState } from "../Pattern.ts"

/** `state()` reporting every input's value in page order, so text that lands in the wrong field shows. */
const inputsState = `<script>
function state() { return Object.fromEntries([...document.querySelectorAll("input:not([type=file])")].map((el) => [el.name, el.value])) }
</script>`

export const patterns = [
  pattern({
    name: "grid-form-label-row-above-inputs",
    class: "labels",
    pages: {
      "/compensation.html": `<!doctype html><title>Application — compensation</title>${reportState}${inputsState}
<style>.grid{display:grid;grid-template-columns:repeat(3,180px);gap:4px 16px}.grid input{width:160px}</style>
<h2>Compensation</h2>
<p>All amounts in EUR, gross per year.</p>
<div class="grid">
  <div>Current salary</div><div>Expected salary</div><div>Notice period (weeks)</div>
  <input name="current"><input name="expected"><input name="notice">
</div>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/compensation.html") })
      await agent.ok("browser.act", { instruction: 'fill "Expected salary" with "120000"' })
      await agent.expectState({ current: "", expected: "120000", notice: "" }, "the row after filling Expected salary")
      await agent.ok("browser.act", { instruction: 'fill "Current salary" with "98000"' })
      await agent.expectState(
        { current: "98000", expected: "120000", notice: "" },
        "the row after filling Current salary"
      )
      await agent.ok("browser.act", { instruction: 'fill "Notice period" with "6"' })
      await agent.expectState(
        { current: "98000", expected: "120000", notice: "6" },
        "the row after filling Notice period"
      )
      const seen = await agent.ok("browser.observe", { instruction: "all controls" })
      const names = (seen.result as Array<{ description: string }>).map(
        (a) => /^textbox "([^"]*)"/.exec(a.description)?.[1]
      )
      assert.deepEqual(
        names,
        ["Current salary", "Expected salary", "Notice period (weeks)"],
        "each input is named by the label above it"
      )
    }
  }),
  pattern({
    name: "table-form-header-row-above-inputs",
    class: "labels",
    pages: {
      "/invite.html": `<!doctype html><title>Invite your team</title>${reportState}${inputsState}
<h1>Invite your team</h1>
<form method="post" action="record">
<table>
  <thead><tr><th>First name</th><th>Last name</th><th>Work email</th><th>Role</th></tr></thead>
  <tbody><tr>
    <td><input name="first"></td><td><input name="last"></td><td><input name="email" type="email"></td>
    <td><select name="role"><option>Member</option><option>Admin</option><option>Viewer</option></select></td>
  </tr></tbody>
</table>
<button>Send invite</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/invite.html") })
      await agent.ok("browser.act", { instruction: 'fill "Last name" with "Hopper"' })
      await agent.expectState({ first: "", last: "Hopper", email: "" }, "the row after filling Last name")
      await agent.ok("browser.act", { instruction: 'fill "First name" with "Grace"' })
      await agent.ok("browser.act", { instruction: 'fill "Work email" with "grace@example.com"' })
      await agent.ok("browser.act", { instruction: 'select "Admin" in "Role"' })
      await agent.ok("browser.act", { instruction: 'click "Send invite"' })
      await agent.expectRecorded(
        [{ first: "Grace", last: "Hopper", email: "grace@example.com", role: "Admin" }],
        "the form post"
      )
    }
  }),
  pattern({
    name: "floating-labels-over-inputs",
    class: "labels",
    pages: {
      // Material-style: a span laid over the input that moves up when it is filled; a Bootstrap-style form-floating
      // whose <label> follows its input without a for; neither is tied to its input.
      "/profile.html": `<!doctype html><title>Create your profile</title>${reportState}${inputsState}
<style>
.field{position:relative;margin:14px 0;width:280px}
.field input{width:100%;padding:18px 10px 6px;font-size:15px;box-sizing:border-box}
.field .float{position:absolute;left:11px;top:13px;color:#777;pointer-events:none;transition:all .15s}
.field input:focus + .float,.field input:not(:placeholder-shown) + .float{top:2px;font-size:11px}
.form-floating{position:relative;margin:14px 0;width:280px}
.form-floating>input{width:100%;height:58px;padding:26px 12px 8px;box-sizing:border-box}
.form-floating>label{position:absolute;top:0;left:0;padding:16px 12px;pointer-events:none;transform-origin:0 0;transition:transform .1s}
.form-floating>input:focus~label,.form-floating>input:not(:placeholder-shown)~label{transform:scale(.85) translateY(-.5rem)}
</style>
<h1>Create your profile</h1>
<div class="field"><input name="first" placeholder=" "><span class="float">First name</span></div>
<div class="field"><input name="last" placeholder=" "><span class="float">Last name</span></div>
<div class="form-floating"><input name="email" type="email" placeholder=" "><label>Email address</label></div>
<div class="form-floating"><input name="phone" type="tel" placeholder=" "><label>Mobile phone</label></div>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/profile.html") })
      const now = { first: "", last: "", email: "", phone: "" }
      const asked: Array<[string, keyof typeof now, string]> = [
        ["Last name", "last", "Lovelace"],
        ["First name", "first", "Ada"],
        ["Email address", "email", "ada@example.com"],
        ["Mobile phone", "phone", "+44 20 7946 0958"]
      ]
      for (const [label, name, value] of asked) {
        await agent.ok("browser.act", { instruction: `fill "${label}" with "${value}"` })
        now[name] = value
        await agent.expectState(now, `the fields after filling ${label}`)
      }
    }
  }),
  pattern({
    name: "sublabels-under-fields",
    class: "labels",
    pages: {
      // A form builder's name and address blocks: one legend, then inputs each with a small label under it.
      "/contact.html": `<!doctype html><title>Contact details</title>${reportState}${inputsState}
<style>.row{display:flex;gap:12px}.sub{display:flex;flex-direction:column}.sub label{font-size:12px;color:#555}</style>
<form method="post" action="record">
<fieldset><legend>Name</legend>
  <div class="row"><span class="sub"><input name="first"><label>First</label></span><span class="sub"><input name="last"><label>Last</label></span></div>
</fieldset>
<fieldset><legend>Address</legend>
  <div class="sub"><input name="street" size="50"><label>Street Address</label></div>
  <div class="row"><span class="sub"><input name="city"><label>City</label></span><span class="sub"><input name="zip"><label>ZIP / Postal Code</label></span></div>
</fieldset>
<button>Submit</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/contact.html") })
      const now = { first: "", last: "", street: "", city: "", zip: "" }
      const asked: Array<[string, keyof typeof now, string]> = [
        ["First", "first", "Ada"],
        ["Last", "last", "Lovelace"],
        ["Street Address", "street", "12 St James's Square"],
        ["City", "city", "London"],
        ["ZIP / Postal Code", "zip", "SW1Y 4JH"]
      ]
      for (const [label, name, value] of asked) {
        await agent.ok("browser.act", { instruction: `fill "${label}" with "${value}"` })
        now[name] = value
        await agent.expectState(now, `the fields after filling ${label}`)
      }
      await agent.ok("browser.act", { instruction: 'click "Submit"' })
      await agent.expectRecorded([now], "the form post")
    }
  }),
  pattern({
    name: "file-input-named-by-text-beside",
    class: "labels",
    pages: {
      "/documents.html": `<!doctype html><title>Documents</title>${recordScript}
<h2>Documents</h2>
<div><span>Your CV</span> <input type="file" id="cv" onchange="sent(this)"></div>
<div><span>Cover letter (optional)</span> <input type="file" id="letter" onchange="sent(this)"></div>
<script>function sent(input) { record({ input: input.id, files: [...input.files].map((f) => f.name) }) }</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/documents.html") })
      await agent.ok("browser.upload", { files: ["test/fixtures/uploads/resume.pdf"], target: "Your CV" })
      await agent.expectRecorded([{ input: "cv", files: ["resume.pdf"] }], "the file input beside 'Your CV'")
      await agent.ok("browser.act", {
        instruction: 'upload "test/fixtures/uploads/cover-letter.txt" to "Cover letter"'
      })
      await agent.expectRecorded(
        [
          { input: "cv", files: ["resume.pdf"] },
          { input: "letter", files: ["cover-letter.txt"] }
        ],
        "the file input beside 'Cover letter (optional)'"
      )
      // One control, one name: observe and extract call it what the grammar and upload took.
      const seen = await agent.ok("browser.observe", { instruction: "all controls" })
      const described = (seen.result as Array<{ description: string }>).map((a) => a.description)
      assert.ok(
        described.some((d) => d.startsWith('file upload "Your CV"')),
        JSON.stringify(described)
      )
      const read = await agent.ok("browser.extract", { instruction: "the form fields" })
      const controls = (read.result.controls as Array<{ name: string }>).map((c) => c.name)
      assert.ok(controls.includes("Your CV") && controls.includes("Cover letter (optional)"), JSON.stringify(controls))
    }
  })
]
