/**
 * JavaScript dialogs as application forms use them: a confirm before submitting, an alert on a validation error, a
 * prompt for a referral code, and a "leave this page?" warning on a half-filled form. The agent decides each one.
 */
import assert from "node:assert/strict"
import { type Answer, pattern, recordScript } from "../Pattern.ts"

const events = (answer: Answer) => answer.pageEvents ?? []

const confirmForm = `<!doctype html><title>Apply — Acme ATS</title>${recordScript}
<form id="f">
  <label for="email">Email</label> <input id="email" name="email" type="email">
  <button type="submit">Submit application</button>
</form>
<p id="status">Draft</p>
<script>
document.getElementById("f").addEventListener("submit", async (e) => {
  e.preventDefault()
  if (!confirm("Submit your application? You cannot edit it afterwards.")) {
    document.getElementById("status").textContent = "Not submitted"
    return record({ submitted: false })
  }
  await record({ submitted: true, email: document.getElementById("email").value })
  document.getElementById("status").textContent = "Application submitted"
})
</script>`

export const patterns = [
  pattern({
    name: "dialogs-confirm-on-submit",
    class: "dialogs",
    pages: { "/apply.html": confirmForm },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Email" with "ada@example.com"' })
      const clicked = await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      // The click's answer says a confirm is waiting, and nothing was submitted behind the agent's back.
      assert.match(clicked.result.description, /confirm dialog/)
      assert.equal(clicked.state.dialog?.type, "confirm")
      assert.match(clicked.state.dialog?.message, /Submit your application\?/)
      agent.expectPage(agent.recorded(), [])
      // Anything else is refused at once, saying how to answer.
      const refused = await agent.call("browser.extract", { instruction: "the status" })
      assert.equal(refused.error?.type, "dialog_open")
      assert.match(refused.error?.message ?? "", /browser\.dialog/)
      const accepted = await agent.ok("browser.dialog", { accept: true })
      assert.equal(accepted.result.answered.type, "confirm")
      assert.equal(accepted.state.dialog, null)
      const read = await agent.ok("browser.extract", { instruction: "the status" })
      assert.match(JSON.stringify(read.result), /Application submitted/)
      agent.expectPage(agent.recorded(), [{ submitted: true, email: "ada@example.com" }])
    }
  }),
  pattern({
    name: "dialogs-confirm-dismissed",
    class: "dialogs",
    pages: { "/apply.html": confirmForm },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      const dismissed = await agent.ok("browser.dialog", { accept: false })
      assert.equal(dismissed.result.accepted, false)
      const read = await agent.ok("browser.extract", { instruction: "the status" })
      assert.match(JSON.stringify(read.result), /Not submitted/)
      agent.expectPage(agent.recorded(), [{ submitted: false }])
      const none = await agent.call("browser.dialog", { accept: true })
      assert.equal(none.error?.type, "invalid_input")
    }
  }),
  pattern({
    name: "dialogs-alert-on-validation",
    class: "dialogs",
    pages: {
      "/apply.html": `<!doctype html><title>Quick apply</title>${recordScript}
<form onsubmit="event.preventDefault(); const v = document.getElementById('phone').value; if (!/^[0-9 +]{7,}$/.test(v)) { alert('Please enter a valid phone number.'); return } record({ phone: v })">
  <label>Phone <input id="phone"></label>
  <button>Send</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      const sent = await agent.ok("browser.act", { instruction: 'click "Send"' })
      assert.equal(sent.state.dialog?.type, "alert")
      assert.equal(sent.state.dialog?.message, "Please enter a valid phone number.")
      assert.ok(sent.state.tools.masked["browser.act"], "engine tools are masked while the alert is open")
      await agent.ok("browser.dialog", { accept: true })
      await agent.ok("browser.act", { instruction: 'fill "Phone" with "+44 20 7946 0958"' })
      const again = await agent.ok("browser.act", { instruction: 'click "Send"' })
      assert.equal(again.state.dialog, null)
      agent.expectPage(agent.recorded(), [{ phone: "+44 20 7946 0958" }])
    }
  }),
  pattern({
    name: "dialogs-prompt-referral-code",
    class: "dialogs",
    pages: {
      "/apply.html": `<!doctype html><title>Referral</title>${recordScript}
<button onclick="const code = prompt('Enter your referral code', 'NONE'); record({ code })">I was referred</button>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      const asked = await agent.ok("browser.act", { instruction: 'click "I was referred"' })
      assert.equal(asked.state.dialog?.type, "prompt")
      assert.equal(asked.state.dialog?.defaultPrompt, "NONE")
      const answered = await agent.ok("browser.dialog", { accept: true, promptText: "REF-2031" })
      assert.ok(events(answered).some((e) => e.event === "dialog_answered" && e.accepted === true))
      await new Promise((resolve) => setTimeout(resolve, 200))
      agent.expectPage(agent.recorded(), [{ code: "REF-2031" }])
    }
  }),
  pattern({
    name: "dialogs-beforeunload-dirty-form",
    class: "dialogs",
    pages: {
      "/profile.html": `<!doctype html><title>Edit profile</title>
<label>Headline <input id="h" oninput="window.dirty = true"></label>
<script>
window.addEventListener("beforeunload", (e) => { if (window.dirty) { e.preventDefault(); e.returnValue = "" } })
</script>`,
      "/jobs.html": `<!doctype html><title>Jobs</title><h1>Open roles</h1>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/profile.html") })
      await agent.ok("browser.act", { instruction: 'fill "Headline" with "Engineer"' })
      // Leaving a page with unsaved changes is what navigate asks for: accepted by default, and the answer says so.
      const left = await agent.ok("browser.navigate", { url: agent.url("/jobs.html") })
      assert.equal(left.state.url, agent.url("/jobs.html"))
      assert.ok(
        events(left).some((e) => e.event === "dialog_answered" && e.dialog.type === "beforeunload"),
        JSON.stringify(left.pageEvents)
      )
    }
  })
]
