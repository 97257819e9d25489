/**
 * Where typed text goes: a modal's focus trap (Bootstrap's focusin guard, Headless UI's inert background) pulls it
 * away from the field asked for; pages that format what is typed (a phone mask), copy it into a neighbour (a
 * username from the email), or swap the input for a new one on the first key are doing what they are built to do.
 */
import assert from "node:assert/strict"
import { pattern, reportState } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "modal-focus-trap-over-form",
    class: "focus",
    pages: {
      // Bootstrap 5's modal: a full-screen .modal over a backdrop, and a focus trap that sends focus back into the
      // dialog whenever it lands outside.
      "/settings.html": `<!doctype html><title>Monitoring settings</title>${reportState}
<style>.modal-backdrop{position:fixed;inset:0;background:#000;opacity:.5;z-index:1050}
.modal{position:fixed;inset:0;z-index:1055;overflow:auto}.modal-dialog{background:#fff;width:360px;margin:80px auto;padding:16px;border-radius:6px}</style>
<h1>Monitoring</h1>
<form id="f" method="post" action="record">
  <p><label for="alert">Alert email</label> <input id="alert" name="alert"></p>
  <p><label for="threshold">Error threshold (%)</label> <input id="threshold" name="threshold"></p>
  <button>Save settings</button>
</form>
<div id="backdrop" class="modal-backdrop"></div>
<div id="modal" class="modal" role="dialog" aria-modal="true" aria-labelledby="mt" tabindex="-1">
  <div class="modal-dialog">
    <h2 id="mt">What's new</h2><p>Get product updates by email.</p>
    <p><label for="news">Your email</label> <input id="news"></p>
    <button type="button" id="dismiss">Close</button>
  </div>
</div>
<script>
let modalOpen = true
document.addEventListener("focusin", (e) => { if (modalOpen && !modal.contains(e.target)) news.focus() })
dismiss.addEventListener("click", () => { modalOpen = false; modal.remove(); backdrop.remove() })
news.focus()
function state() { return { alert: f.alert.value, threshold: f.threshold.value, news: document.getElementById("news")?.value ?? "(closed)" } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/settings.html") })
      const behind = await agent.call("browser.act", { instruction: 'fill "Alert email" with "ops@example.com"' })
      // Success would mean the field behind the dialog holds the text and the dialog's field is untouched; a failure
      // leaves both as they were.
      await agent.expectState(
        behind.ok ? { alert: "ops@example.com", threshold: "", news: "" } : { alert: "", threshold: "", news: "" },
        "where the text went with the dialog open"
      )
      assert.ok(!behind.ok, "a field under an open dialog cannot take text")
      // Refused before typing, naming the dialog over it; or typed, found elsewhere, and said where.
      if (behind.error?.type === "verification_failed") {
        assert.equal(behind.error.landed?.name, "Your email", JSON.stringify(behind.error))
        assert.equal(behind.error.sideEffect, "possible")
      } else {
        assert.equal(behind.error?.type, "action_failed", JSON.stringify(behind.error))
        assert.match(behind.error?.message ?? "", /What's new/, "the refusal names the dialog")
      }
      await agent.ok("browser.act", { instruction: 'click "Close"' })
      await agent.ok("browser.act", { instruction: 'fill "Alert email" with "ops@example.com"' })
      await agent.ok("browser.act", { instruction: 'fill "Error threshold" with "5"' })
      await agent.expectState(
        { alert: "ops@example.com", threshold: "5", news: "(closed)" },
        "the form after closing the dialog"
      )
      await agent.ok("browser.act", { instruction: 'click "Save settings"' })
      await agent.expectRecorded([{ alert: "ops@example.com", threshold: "5" }], "the form post")
    }
  }),
  pattern({
    name: "dialog-with-inert-background",
    class: "focus",
    pages: {
      // Headless UI / the native way: the page behind the dialog is made inert; the dialog's first field has focus.
      "/team.html": `<!doctype html><title>Team</title>${reportState}
<div id="app">
  <h1>Team</h1>
  <p><label for="search">Search members</label> <input id="search"></p>
</div>
<div id="portal">
  <div style="position:fixed;inset:0;background:rgba(0,0,0,.3)"></div>
  <div role="dialog" aria-modal="true" aria-labelledby="dt" style="position:fixed;top:100px;left:50%;transform:translateX(-50%);background:#fff;padding:16px;width:340px">
    <h2 id="dt">Invite a teammate</h2>
    <p><label for="invite">Email address</label> <input id="invite" autofocus></p>
    <button type="button" onclick="record({ invited: invite.value })">Send invite</button>
  </div>
</div>
<script>
app.inert = true
function state() { return { search: search.value, invite: invite.value } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/team.html") })
      const behind = await agent.call("browser.act", { instruction: 'fill "Search members" with "grace"' })
      await agent.expectState(
        behind.ok ? { search: "grace", invite: "" } : { search: "", invite: "" },
        "where the text went with the background inert"
      )
      // Refused at once, saying why, like any field under a modal (not after the action limit).
      assert.equal(behind.error?.type, "action_failed", JSON.stringify(behind.error ?? behind.result))
      assert.match(behind.error?.message ?? "", /inert|covered|dialog|Invite a teammate/i)
      await agent.ok("browser.act", { instruction: 'fill "Email address" with "grace@example.com"' })
      await agent.expectState({ search: "", invite: "grace@example.com" }, "the dialog's field")
      await agent.ok("browser.act", { instruction: 'click "Send invite"' })
      await agent.expectRecorded([{ invited: "grace@example.com" }], "the invitation sent")
    }
  }),
  pattern({
    name: "masked-inputs-format-what-is-typed",
    class: "focus",
    pages: {
      "/payment.html": `<!doctype html><title>Payment details</title>${reportState}
<form id="f" method="post" action="record">
  <p><label for="phone">Phone number</label> <input id="phone" name="phone" type="tel" placeholder="(555) 555-5555"></p>
  <p><label for="card">Card number</label> <input id="card" name="card" inputmode="numeric" autocomplete="cc-number"></p>
  <p><label for="exp">Expiry (MM / YY)</label> <input id="exp" name="exp" inputmode="numeric"></p>
  <button>Pay</button>
</form>
<script>
const digits = (s) => s.replace(/\\D/g, "")
phone.addEventListener("input", () => {
  const d = digits(phone.value).slice(0, 10)
  phone.value = d.length > 6 ? "(" + d.slice(0, 3) + ") " + d.slice(3, 6) + "-" + d.slice(6) : d.length > 3 ? "(" + d.slice(0, 3) + ") " + d.slice(3) : d
})
card.addEventListener("input", () => { card.value = digits(card.value).slice(0, 16).replace(/(\\d{4})(?=\\d)/g, "$1 ") })
exp.addEventListener("input", () => { const d = digits(exp.value).slice(0, 4); exp.value = d.length > 2 ? d.slice(0, 2) + " / " + d.slice(2) : d })
function state() { return { phone: phone.value, card: card.value, exp: exp.value } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/payment.html") })
      await agent.ok("browser.act", { instruction: 'fill "Phone number" with "5551234567"' })
      await agent.ok("browser.act", { instruction: 'fill "Card number" with "4242424242424242"' })
      await agent.ok("browser.act", { instruction: 'fill "Expiry" with "0728"' })
      await agent.expectState(
        { phone: "(555) 123-4567", card: "4242 4242 4242 4242", exp: "07 / 28" },
        "the fields as the page formats them"
      )
      await agent.ok("browser.act", { instruction: 'click "Pay"' })
      await agent.expectRecorded(
        [{ phone: "(555) 123-4567", card: "4242 4242 4242 4242", exp: "07 / 28" }],
        "the form post"
      )
    }
  }),
  pattern({
    name: "typing-fills-a-neighbour-field",
    class: "focus",
    pages: {
      // Sign-up forms that suggest a username from the email, and a display name from the first name, until the
      // person types one of their own.
      "/signup.html": `<!doctype html><title>Sign up</title>${reportState}
<form id="f" method="post" action="record">
  <p><label for="email">Email</label> <input id="email" name="email" type="email"></p>
  <p><label for="username">Username</label> <input id="username" name="username"></p>
  <button>Sign up</button>
</form>
<script>
let ownUsername = false
username.addEventListener("input", () => { ownUsername = true })
email.addEventListener("input", () => { if (!ownUsername) username.value = email.value.split("@")[0].replace(/[^a-z0-9]/gi, "") })
function state() { return { email: email.value, username: username.value } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/signup.html") })
      await agent.ok("browser.act", { instruction: 'fill "Email" with "ada.lovelace@example.com"' })
      await agent.expectState(
        { email: "ada.lovelace@example.com", username: "adalovelace" },
        "the page's suggested username"
      )
      await agent.ok("browser.act", { instruction: 'fill "Username" with "countess"' })
      await agent.expectState({ email: "ada.lovelace@example.com", username: "countess" }, "the username typed over it")
      await agent.ok("browser.act", { instruction: 'click "Sign up"' })
      await agent.expectRecorded([{ email: "ada.lovelace@example.com", username: "countess" }], "the form post")
    }
  }),
  pattern({
    name: "maxlength-cuts-what-is-typed",
    class: "focus",
    pages: {
      // Fields that keep only part of what is typed: a postcode limited to 4 characters, a numeric-only field.
      "/address.html": `<!doctype html><title>Address</title>${reportState}
<p><label for="zip">Postcode</label> <input id="zip" maxlength="4"></p>
<p><label for="years">Years at this address</label> <input id="years" inputmode="numeric"></p>
<script>
years.addEventListener("input", () => { years.value = years.value.replace(/\\D/g, "") })
function state() { return { zip: zip.value, years: years.value } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/address.html") })
      for (const [label, key, value] of [
        ["Postcode", "zip", "SW1Y 4JH"],
        ["Years at this address", "years", "five"]
      ] as const) {
        const answer = await agent.call("browser.act", { instruction: `fill "${label}" with "${value}"` })
        const shown = String((await agent.pageState())?.[key])
        // Success would mean the field holds what was asked.
        agent.expectPage(shown, answer.ok ? value : shown, `${label} after filling "${value}"`)
        assert.equal(answer.error?.type, "verification_failed", JSON.stringify(answer.error ?? answer.result))
        assert.equal(answer.error?.expected, value)
        assert.equal(answer.error?.actual, shown, "the answer says what the field holds")
        assert.equal(answer.error?.sideEffect, "possible", "something was typed")
      }
    }
  }),
  pattern({
    name: "search-box-replaced-on-first-key",
    class: "focus",
    pages: {
      // A collapsed search box that, on the first key, is replaced by an expanded one (a new element with the same
      // label) that takes over focus and the text typed so far, as a component swapped on state does.
      "/jobs.html": `<!doctype html><title>Jobs</title>${reportState}
<h1>Find a job</h1>
<div id="slot"><label for="q">Search jobs</label> <input id="q" class="collapsed" style="width:120px"></div>
<ul id="results"></ul>
<script>
let query = ""
function expanded(value) {
  slot.innerHTML = '<label for="q">Search jobs</label> <input id="q" class="expanded" style="width:360px">'
  const input = document.getElementById("q")
  input.value = value; input.focus()
  input.addEventListener("input", () => { query = input.value })
  query = value
}
document.getElementById("q").addEventListener("input", (e) => expanded(e.target.value), { once: true })
function state() { return { query, shown: document.getElementById("q").value } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/jobs.html") })
      await agent.ok("browser.act", { instruction: 'fill "Search jobs" with "data engineer"' })
      await agent.expectState({ query: "data engineer", shown: "data engineer" }, "the search box after typing")
    }
  })
]
