/** Controls without an accessible name, the way hand-written and generated forms leave them. */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "unnamed-input-beside-text",
    class: "unnamed",
    pages: {
      "/login.html": `<!doctype html><title>Sign in</title>${recordScript}
<form onsubmit="event.preventDefault(); record({ user: this.elements[0].value }); document.body.append('Welcome')">
  <div>Username</div><input type="text">
  <div>Password</div><input type="password">
  <button>Sign in</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/login.html") })
      await agent.ok("browser.act", { instruction: 'fill "Username" with "ada"' })
      await agent.ok("browser.act", { instruction: 'click "Sign in"' })
      agent.expectPage(agent.recorded(), [{ user: "ada" }])
    }
  }),
  pattern({
    name: "unnamed-select-and-textarea",
    class: "unnamed",
    pages: {
      // Workday-style rows: the label is a div in one column, the control in the next, tied by nothing.
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<style>.row{display:flex;gap:8px;margin:6px}.label{width:160px}</style>
<form id="f">
  <div class="row"><div class="label">Country of residence</div><div class="control"><select name="c">
    <option value="">Select one</option><option>Canada</option><option>France</option></select></div></div>
  <div class="row"><div class="label">Why do you want this job?</div><div class="control"><textarea name="why"></textarea></div></div>
  <div class="row"><div class="label">Notes</div><div class="control"><input name="notes"></div></div>
  <button type="button" onclick="record({ c: f.c.value, why: f.why.value, notes: f.notes.value })">Submit</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'select "Canada" in "Country of residence"' })
      await agent.ok("browser.act", { instruction: 'fill "Why do you want this job?" with "I like trains"' })
      await agent.ok("browser.act", { instruction: 'click "Submit"' })
      agent.expectPage(agent.recorded(), [{ c: "Canada", why: "I like trains", notes: "" }])
    }
  }),
  pattern({
    name: "untied-label-beside-placeholder",
    class: "unnamed",
    pages: {
      "/signup.html": `<!doctype html><title>Create account</title>${recordScript}
<form onsubmit="event.preventDefault(); record({ email: this.email.value })">
  <label>Email</label><input name="email" placeholder="you@example.com">
  <label>Phone</label><input name="phone" placeholder="+1 555 0100">
  <button>Create account</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/signup.html") })
      await agent.ok("browser.act", { instruction: 'fill "Email" with "ada@example.com"' })
      await agent.ok("browser.act", { instruction: 'click "Create account"' })
      agent.expectPage(agent.recorded(), [{ email: "ada@example.com" }])
    }
  }),
  pattern({
    name: "observe-hands-out-references-for-unnamed-controls",
    class: "unnamed",
    pages: {
      "/profile.html": `<!doctype html><title>Profile</title>${recordScript}
<table>
  <tr><td>First name</td><td><input id="a"></td></tr>
  <tr><td>Last name</td><td><input id="b"></td></tr>
</table>
<span role="button" tabindex="0" onclick="record({ first: a.value, last: b.value })">Save</span>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/profile.html") })
      const seen = await agent.ok("browser.observe", { instruction: "all controls" })
      const last = (seen.result as Array<{ selector: string; description: string }>).find((a) =>
        a.description.includes('"Last name"')
      )
      assert.ok(last, `observe listed no "Last name" textbox: ${JSON.stringify(seen.result)}`)
      assert.match(last.description, /^textbox/)
      const ref = last.selector.replace(/^aria-ref=/, "")
      await agent.ok("browser.act", { ref, method: "fill", arguments: ["Lovelace"] })
      await agent.ok("browser.act", { instruction: 'fill "First name" with "Ada"' })
      await agent.ok("browser.act", { instruction: "click Save" })
      agent.expectPage(agent.recorded(), [{ first: "Ada", last: "Lovelace" }])
    }
  }),
  pattern({
    name: "icon-buttons-and-div-soup",
    class: "unnamed",
    pages: {
      "/jobs.html": `<!doctype html><title>Saved jobs</title>${recordScript}
<style>.btn{cursor:pointer;display:inline-block;padding:4px;border:1px solid #999}</style>
<div class="card"><h3>Data engineer</h3>
  <button aria-label="Save job" onclick="record({ saved: 'data' })"><svg width="16" height="16"><path d="M0 0h16v16z"/></svg></button>
  <div class="btn" onclick="record({ applied: 'data' })"><span>Easy</span> <span>apply</span></div>
</div>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/jobs.html") })
      await agent.ok("browser.act", { instruction: 'click "Save job"' })
      await agent.ok("browser.act", { instruction: 'click "Easy apply"' })
      agent.expectPage(agent.recorded(), [{ saved: "data" }, { applied: "data" }])
    }
  })
]
