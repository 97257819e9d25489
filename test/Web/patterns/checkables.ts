/**
 * Checkboxes, radios and switches as design systems build them: a visually hidden input behind a styled box (Tailwind's
 * sr-only, Bootstrap 4's z-index:-1, MUI's transparent input over an icon), appearance:none, ARIA roles on divs, a
 * React list re-rendered on every change, and a slider handle that is only a focusable div.
 */
import assert from "node:assert/strict"
import { pattern, reportState } from "../Pattern.ts"

/** Tailwind's `sr-only`, the usual way to hide an input that stays focusable and in the form. */
const srOnly = `.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
.box{display:inline-block;width:18px;height:18px;border:2px solid #555;border-radius:4px;vertical-align:middle;margin-right:8px}
input:checked + .box{background:#2557a7;border-color:#2557a7}
label.check{display:block;padding:6px 0;cursor:pointer}`

export const patterns = [
  pattern({
    name: "checkbox-sr-only-input-in-label",
    class: "checkables",
    pages: {
      "/signup.html": `<!doctype html><title>Create your account</title>${reportState}
<style>${srOnly}</style>
<h1>Create your account</h1>
<form id="f" method="post" action="record">
  <label class="check"><input type="checkbox" name="terms" value="yes" class="sr-only"><span class="box"></span>I agree to the terms and conditions</label>
  <label class="check"><input type="checkbox" name="news" value="yes" class="sr-only" checked><span class="box"></span>Send me the monthly newsletter</label>
  <button>Create account</button>
</form>
<script>function state() { return { terms: f.terms.checked, news: f.news.checked } }</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/signup.html") })
      const checked = await agent.ok("browser.act", { instruction: 'check "I agree to the terms and conditions"' })
      await agent.expectState({ terms: true, news: true }, "the terms box after check")
      await agent.ok("browser.act", { instruction: 'uncheck "Send me the monthly newsletter"' })
      await agent.expectState({ terms: true, news: false }, "the newsletter box after uncheck")
      // A click on the label's text toggles the box, as a person's would.
      await agent.ok("browser.act", { instruction: 'click "Send me the monthly newsletter"' })
      await agent.expectState({ terms: true, news: true }, "the newsletter box after a click on its text")
      await agent.ok("browser.act", { instruction: 'click "Create account"' })
      await agent.expectRecorded([{ terms: "yes", news: "yes" }], "the form post")
      // The answer says what the page now shows for its target.
      assert.equal(
        checked.result.target?.checked,
        true,
        `the answer says the box is ticked: ${JSON.stringify(checked.result)}`
      )
    }
  }),
  pattern({
    name: "checkbox-transparent-input-bootstrap-and-mui",
    class: "checkables",
    pages: {
      // Bootstrap 4: the input sits behind its label (z-index:-1, opacity 0) and the label's ::before draws the box.
      // MUI: a transparent input laid over an SVG icon inside the label.
      "/filters.html": `<!doctype html><title>Job search</title>${reportState}
<style>
.custom-control{position:relative;display:block;min-height:1.5rem;padding-left:1.5rem;margin:6px 0}
.custom-control-input{position:absolute;left:0;z-index:-1;width:1rem;height:1.25rem;opacity:0}
.custom-control-label{position:relative;margin-bottom:0;vertical-align:top;cursor:pointer}
.custom-control-label::before{position:absolute;top:.25rem;left:-1.5rem;display:block;width:1rem;height:1rem;content:"";background:#fff;border:1px solid #adb5bd;border-radius:.25rem}
.custom-control-input:checked ~ .custom-control-label::before{background:#007bff;border-color:#007bff}
.mui{display:inline-flex;align-items:center;cursor:pointer;margin:6px 0}
.mui-box{position:relative;display:inline-flex;padding:9px}
.mui-box input{position:absolute;inset:0;width:100%;height:100%;margin:0;padding:0;opacity:0;cursor:inherit;z-index:1}
</style>
<h2>Filters</h2>
<div class="custom-control custom-checkbox"><input type="checkbox" class="custom-control-input" id="remote"><label class="custom-control-label" for="remote">Remote only</label></div>
<div class="custom-control custom-checkbox"><input type="checkbox" class="custom-control-input" id="visa"><label class="custom-control-label" for="visa">Visa sponsorship</label></div>
<label class="mui"><span class="mui-box"><input type="checkbox" id="salary"><svg width="24" height="24" viewBox="0 0 24 24"><path id="icon" d="M19 5v14H5V5h14m0-2H5c-1.1 0-2 .9-2 2v14c0 1.1.9 2 2 2h14c1.1 0 2-.9 2-2V5c0-1.1-.9-2-2-2z"/></svg></span><span>Salary shown</span></label>
<script>
salary.addEventListener("change", () => icon.setAttribute("fill", salary.checked ? "#1976d2" : "#000"))
function state() { return { remote: remote.checked, visa: visa.checked, salary: salary.checked } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/filters.html") })
      await agent.ok("browser.act", { instruction: 'check "Remote only"' })
      await agent.expectState({ remote: true, visa: false, salary: false }, "Bootstrap box after check")
      await agent.ok("browser.act", { instruction: 'click "Visa sponsorship"' })
      await agent.expectState({ remote: true, visa: true, salary: false }, "Bootstrap box after a click on its label")
      await agent.ok("browser.act", { instruction: 'check "Salary shown"' })
      await agent.expectState({ remote: true, visa: true, salary: true }, "MUI box after check")
      await agent.ok("browser.act", { instruction: 'uncheck "Remote only"' })
      await agent.expectState({ remote: false, visa: true, salary: true }, "Bootstrap box after uncheck")
    }
  }),
  pattern({
    name: "switches-appearance-none-and-aria-switch",
    class: "checkables",
    pages: {
      "/settings.html": `<!doctype html><title>Notification settings</title>${reportState}
<style>
input.toggle{appearance:none;-webkit-appearance:none;width:40px;height:22px;border-radius:11px;background:#ccc;position:relative;cursor:pointer;vertical-align:middle}
input.toggle::after{content:"";position:absolute;top:2px;left:2px;width:18px;height:18px;border-radius:50%;background:#fff;transition:left .1s}
input.toggle:checked{background:#2a7}
input.toggle:checked::after{left:20px}
button[role=switch]{width:40px;height:22px;border-radius:11px;border:0;background:#ccc;position:relative}
button[role=switch][aria-checked=true]{background:#2a7}
</style>
<h1>Notifications</h1>
<p><input type="checkbox" id="relocate" class="toggle"> <label for="relocate">Open to relocation</label></p>
<div style="display:flex;gap:8px;align-items:center">
  <span id="digest-label">Weekly digest email</span>
  <button type="button" role="switch" id="digest" aria-checked="false" aria-labelledby="digest-label"><span class="sr"></span></button>
</div>
<script>
digest.addEventListener("click", () => digest.setAttribute("aria-checked", String(digest.getAttribute("aria-checked") !== "true")))
function state() { return { relocate: relocate.checked, digest: digest.getAttribute("aria-checked") === "true" } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/settings.html") })
      await agent.ok("browser.act", { instruction: 'check "Open to relocation"' })
      await agent.expectState({ relocate: true, digest: false }, "the appearance:none toggle after check")
      const on = await agent.ok("browser.act", { instruction: 'check "Weekly digest email"' })
      await agent.expectState({ relocate: true, digest: true }, "the ARIA switch after check")
      // Checking what is already on changes nothing.
      await agent.ok("browser.act", { instruction: 'check "Weekly digest email"' })
      await agent.expectState({ relocate: true, digest: true }, "the ARIA switch after a second check")
      await agent.ok("browser.act", { instruction: 'uncheck "Weekly digest email"' })
      await agent.expectState({ relocate: true, digest: false }, "the ARIA switch after uncheck")
      assert.equal(on.result.target?.checked, true, `the answer says the switch is on: ${JSON.stringify(on.result)}`)
    }
  }),
  pattern({
    name: "checkbox-list-rerendered-on-change",
    class: "checkables",
    pages: {
      // A controlled list: the page keeps the ticks in its own state and re-renders every item on each change, as a
      // React list without stable keys does; the DOM's own tick is put back from state.
      "/skills.html": `<!doctype html><title>Your skills</title>${reportState}
<style>${srOnly}</style>
<h1>Which of these do you use daily?</h1>
<div id="list"></div>
<script>
const skills = ["JavaScript", "TypeScript", "Go", "Rust"]
const picked = new Set(["JavaScript"])
function render() {
  list.innerHTML = skills.map((s) =>
    '<label class="check"><input type="checkbox" class="sr-only" data-skill="' + s + '"' + (picked.has(s) ? " checked" : "") +
    '><span class="box"></span><span>' + s + '</span></label>').join("")
  for (const input of list.querySelectorAll("input")) input.addEventListener("change", (e) => {
    const skill = e.target.dataset.skill
    if (e.target.checked) picked.add(skill); else picked.delete(skill)
    setTimeout(render, 0)
  })
}
render()
function state() { return { picked: skills.filter((s) => picked.has(s)) } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/skills.html") })
      await agent.ok("browser.act", { instruction: 'check "TypeScript"' })
      await agent.expectState({ picked: ["JavaScript", "TypeScript"] }, "the list after checking TypeScript")
      await agent.ok("browser.act", { instruction: 'check "Rust"' })
      await agent.expectState({ picked: ["JavaScript", "TypeScript", "Rust"] }, "the list after checking Rust")
      const unticked = await agent.ok("browser.act", { instruction: 'uncheck "JavaScript"' })
      await agent.expectState({ picked: ["TypeScript", "Rust"] }, "the list after unchecking JavaScript")
      assert.equal(unticked.result.target?.checked, false, JSON.stringify(unticked.result))
    }
  }),
  pattern({
    name: "radio-cards-hidden-inputs",
    class: "checkables",
    pages: {
      "/job-type.html": `<!doctype html><title>Post a job</title>${reportState}
<style>${srOnly}
.cards{display:flex;gap:12px;border:0;padding:0}
.card{display:block;border:2px solid #ccc;border-radius:8px;padding:12px;width:160px;cursor:pointer}
.card:has(input:checked){border-color:#2557a7}
.card .title{display:block;font-weight:bold}.card .desc{display:block;color:#666;font-size:13px}
</style>
<form id="f" method="post" action="record">
<fieldset class="cards"><legend>Employment type</legend>
  <label class="card"><input type="radio" name="type" value="full" class="sr-only"><span class="title">Full-time</span><span class="desc">35–40 hours a week</span></label>
  <label class="card"><input type="radio" name="type" value="part" class="sr-only"><span class="title">Part-time</span><span class="desc">Up to 30 hours a week</span></label>
  <label class="card"><input type="radio" name="type" value="contract" class="sr-only"><span class="title">Contract</span><span class="desc">Fixed term, invoiced</span></label>
</fieldset>
<button>Continue</button>
</form>
<script>function state() { return { type: f.type.value } }</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job-type.html") })
      await agent.ok("browser.act", { instruction: 'check "Part-time"' })
      await agent.expectState({ type: "part" }, "the radio cards after checking Part-time")
      await agent.ok("browser.act", { instruction: 'click "Contract"' })
      await agent.expectState({ type: "contract" }, "the radio cards after clicking Contract")
      await agent.ok("browser.act", { instruction: 'click "Continue"' })
      await agent.expectRecorded([{ type: "contract" }], "the form post")
    }
  }),
  pattern({
    name: "checkbox-that-refuses-the-tick",
    class: "checkables",
    pages: {
      // Terms that must be opened before they can be accepted: until then the page undoes the tick and says why.
      "/terms.html": `<!doctype html><title>Terms</title>${reportState}
<p><label><input type="checkbox" id="accept"> I have read and accept the terms</label></p>
<p id="why" hidden>The terms must be read before they are accepted.</p>
<button type="button" id="read">Open the terms</button>
<script>
let opened = false
read.addEventListener("click", () => { opened = true })
accept.addEventListener("click", (e) => { if (!opened) { e.preventDefault(); why.hidden = false } })
function state() { return { accepted: accept.checked } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/terms.html") })
      const early = await agent.call("browser.act", { instruction: 'check "I have read and accept the terms"' })
      await agent.expectState({ accepted: early.ok }, "the box after a check the page undid")
      assert.equal(early.error?.type, "verification_failed", JSON.stringify(early.error ?? early.result))
      await agent.ok("browser.act", { instruction: 'click "Open the terms"' })
      await agent.ok("browser.act", { instruction: 'check "I have read and accept the terms"' })
      await agent.expectState({ accepted: true }, "the box once the terms were opened")
    }
  }),
  pattern({
    name: "aria-checkbox-rows-and-select-all",
    class: "checkables",
    pages: {
      // A data table's selection column: div checkboxes with aria-checked, and a header box that shows "mixed".
      "/candidates.html": `<!doctype html><title>Candidates</title>${reportState}
<style>[role=checkbox]{display:inline-block;width:16px;height:16px;border:1px solid #555;cursor:pointer}
[role=checkbox][aria-checked=true]{background:#2557a7}[role=checkbox][aria-checked=mixed]{background:#9ab}</style>
<table>
  <thead><tr><th><div role="checkbox" tabindex="0" id="all" aria-checked="false" aria-label="Select all"></div></th><th>Name</th><th>Stage</th></tr></thead>
  <tbody>
    <tr><td><div role="checkbox" tabindex="0" class="row" aria-checked="false" aria-label="Select Ada Lovelace"></div></td><td>Ada Lovelace</td><td>Interview</td></tr>
    <tr><td><div role="checkbox" tabindex="0" class="row" aria-checked="false" aria-label="Select Grace Hopper"></div></td><td>Grace Hopper</td><td>Offer</td></tr>
    <tr><td><div role="checkbox" tabindex="0" class="row" aria-checked="false" aria-label="Select Alan Turing"></div></td><td>Alan Turing</td><td>Screening</td></tr>
  </tbody>
</table>
<script>
const rows = [...document.querySelectorAll(".row")]
const on = (el) => el.getAttribute("aria-checked") === "true"
function sync() {
  const n = rows.filter(on).length
  all.setAttribute("aria-checked", n === 0 ? "false" : n === rows.length ? "true" : "mixed")
}
function toggle(el) { el.setAttribute("aria-checked", String(!on(el))); sync() }
for (const r of rows) {
  r.addEventListener("click", () => toggle(r))
  r.addEventListener("keydown", (e) => { if (e.key === " ") { e.preventDefault(); toggle(r) } })
}
all.addEventListener("click", () => { const v = all.getAttribute("aria-checked") !== "true"; for (const r of rows) r.setAttribute("aria-checked", String(v)); sync() })
function state() { return { all: all.getAttribute("aria-checked"), rows: rows.map(on) } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/candidates.html") })
      await agent.ok("browser.act", { instruction: 'check "Select Grace Hopper"' })
      await agent.expectState({ all: "mixed", rows: [false, true, false] }, "the rows after checking Grace Hopper")
      const all = await agent.ok("browser.act", { instruction: 'check "Select all"' })
      await agent.expectState({ all: "true", rows: [true, true, true] }, "the rows after checking Select all")
      await agent.ok("browser.act", { instruction: 'uncheck "Select Ada Lovelace"' })
      await agent.expectState({ all: "mixed", rows: [false, true, true] }, "the rows after unchecking Ada Lovelace")
      assert.equal(all.result.target?.checked, true, JSON.stringify(all.result))
    }
  }),
  pattern({
    name: "slider-handle-without-role",
    class: "checkables",
    pages: {
      // A home-made slider: a focusable div moved by the arrow keys, with no role and no name of its own.
      "/player.html": `<!doctype html><title>Audio check</title>${reportState}
<style>.track{position:relative;width:220px;height:6px;background:#ccc;margin:20px 0}
.handle{position:absolute;top:-7px;width:20px;height:20px;border-radius:50%;background:#2557a7}
.handle:focus{outline:2px solid orange}</style>
<h1>Before your video interview</h1>
<div>Volume</div>
<div class="track"><div class="handle" id="handle" tabindex="0"></div></div>
<div>Level: <span id="out">2</span> / 10</div>
<button onclick="record({ saved: Number(out.textContent) })">Save</button>
<script>
let volume = 2
function paint() { handle.style.left = (volume * 20) + "px"; out.textContent = String(volume) }
handle.addEventListener("keydown", (e) => {
  if (e.key === "ArrowRight" || e.key === "ArrowUp") volume = Math.min(10, volume + 1)
  else if (e.key === "ArrowLeft" || e.key === "ArrowDown") volume = Math.max(0, volume - 1)
  else if (e.key === "Home") volume = 0
  else if (e.key === "End") volume = 10
  else return
  e.preventDefault(); paint()
})
paint()
function state() { return { volume } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/player.html") })
      const seen = await agent.ok("browser.observe", { instruction: "all controls" })
      const offered = seen.result as ReadonlyArray<{ selector: string; description: string }>
      const handle = offered.find((a) => /Volume/.test(a.description))
      assert.ok(handle, `the focusable handle is offered, named by the text above it: ${JSON.stringify(offered)}`)
      for (let i = 0; i < 3; i++) {
        await agent.ok("browser.act", { action: { ...handle, method: "press", arguments: ["ArrowRight"] } })
      }
      await agent.expectState({ volume: 5 }, "the level after three ArrowRight presses")
      await agent.ok("browser.act", { instruction: 'click "Save"' })
      await agent.expectRecorded([{ saved: 5 }], "what Save posted")
    }
  })
]
