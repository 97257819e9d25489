/**
 * Every act of the LLM-free engine checked against the page, on pages shaped like the forms of job and SaaS sites:
 * what the answer says is read back from the page itself (a separate raw CDP connection and the page's own record).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type ActResult, Engine } from "../../../src/Engine/Engine.ts"
import { said } from "../../../src/Engine/Instruction.ts"
import * as PlaywrightEngine from "../../../src/Engine/PlaywrightEngine.ts"
import type { SwitchyardError } from "../../../src/Errors.ts"
import * as TestBrowser from "../../support/TestBrowser.ts"
import { recordScript, type WebPattern } from "../../Web/Pattern.ts"
import * as Server from "../../Web/Server.ts"

const page = (name: string, html: string): WebPattern => ({
  name,
  class: "widgets",
  pages: { "/index.html": `<!doctype html>${html.startsWith("<html") ? "" : '<html lang="en">'}${html}` },
  run: async () => undefined
})

const pages = [
  page(
    "focus-trap",
    `<title>Job alerts</title>
<form id="alerts" onsubmit="event.preventDefault()">
  <h2>Job alerts</h2>
  <label for="alert-email">Alert email</label><input id="alert-email" type="email">
  <button>Save alerts</button>
</form>
<div id="modal" role="dialog" aria-modal="true" aria-labelledby="modal-title"
  style="position:fixed;top:120px;left:40px;background:#fff;border:1px solid #999;padding:16px">
  <h2 id="modal-title">Stay in touch</h2>
  <label for="news-email">Newsletter email</label><input id="news-email" type="email">
  <button type="button" onclick="modal.remove()">No thanks</button>
</div>
<script>
// Like focus-trap libraries behind modals: focus that leaves the dialog is brought back to its first field.
document.addEventListener("focusin", (e) => {
  const modal = document.getElementById("modal")
  if (modal && !modal.contains(e.target)) document.getElementById("news-email").focus()
})
</script>`
  ),
  page(
    "inert",
    `<title>Team</title>
<div id="app"><h1>Team</h1><label for="search">Search members</label> <input id="search"></div>
<div role="dialog" aria-modal="true" aria-labelledby="dt" style="position:fixed;top:100px;left:40px;background:#fff">
  <h2 id="dt">Invite a teammate</h2><label for="invite">Email address</label> <input id="invite">
</div>
<script>app.inert = true</script>`
  ),
  page(
    "masked",
    `<title>Contact details</title>
<label for="zip">ZIP code</label>
<input id="zip" inputmode="numeric" oninput="this.value = this.value.replace(/\\D/g, '')">
<label for="phone">Phone</label>
<input id="phone" type="tel" oninput="
  const d = this.value.replace(/\\D/g, '').slice(0, 10)
  this.value = d.length < 4 ? d : d.length < 7 ? '(' + d.slice(0, 3) + ') ' + d.slice(3) : '(' + d.slice(0, 3) + ') ' + d.slice(3, 6) + '-' + d.slice(6)">
<label for="city">City</label><input id="city" value="Oslo">`
  ),
  page(
    "dates-us",
    `<title>Profile</title>
<label for="dob">Date of birth</label><input id="dob" type="date">
<label for="start">Start time</label><input id="start" type="time">
<label for="month">Available from</label><input id="month" type="month">
<label for="week">Preferred week</label><input id="week" type="week">
<label for="interview">Interview slot</label><input id="interview" type="datetime-local">`
  ),
  page(
    "dates-gb",
    `<html lang="en-GB"><title>Profile</title>
<label for="dob">Date of birth</label><input id="dob" type="date">`
  ),
  page(
    "numbers",
    `<title>Order</title>
<label for="adjust">Adjustment</label><input id="adjust" type="number" value="0">
<label for="qty">Quantity</label>
<span class="ui-spinner"><input id="qty" role="spinbutton" aria-valuenow="0" value="0" autocomplete="off"></span>
<label for="salary">Salary</label><input id="salary" type="range" min="0" max="200" step="5" value="100">
<output id="salary-out">100</output>
<div id="level" role="slider" tabindex="0" aria-label="Experience level" aria-valuemin="0" aria-valuemax="100"
  aria-valuenow="50" style="width:200px;height:10px;background:#ddd"></div>
<script>
salary.addEventListener("input", () => { document.getElementById("salary-out").textContent = salary.value })
// A slider handle drawn without an input, moved by arrow keys in steps of 5 (as rc-slider and MUI sliders are).
level.addEventListener("keydown", (e) => {
  const now = Number(level.getAttribute("aria-valuenow"))
  const next = { ArrowRight: now + 5, ArrowUp: now + 5, ArrowLeft: now - 5, ArrowDown: now - 5, Home: 0, End: 100 }[e.key]
  if (next !== undefined) level.setAttribute("aria-valuenow", String(Math.max(0, Math.min(100, next))))
})
</script>`
  ),
  page(
    "rerender",
    `<title>Sign up</title>
<label for="first">First name</label><input id="first">
<label for="country">Country</label><select id="country"><option value="">Choose</option><option>Norway</option><option>Sweden</option></select>
<label for="notes">Notes</label><textarea id="notes">Hello</textarea>
<script>
// Like a keyed re-render on the first keystroke: the field is replaced by a fresh, empty one and loses the focus.
let replaced = false
document.addEventListener("input", (e) => {
  if (replaced || e.target.id !== "first") return
  replaced = true
  const fresh = document.createElement("input")
  fresh.id = "first"
  e.target.replaceWith(fresh)
})
</script>`
  ),
  page(
    "multi",
    `<title>Skills</title>
<label for="skills">Skills</label>
<select id="skills" multiple size="4"><option>Python</option><option>SQL</option><option>Go</option><option>Rust</option></select>
<div id="langs-label">Languages</div>
<ul id="langs" role="listbox" aria-multiselectable="true" aria-labelledby="langs-label" style="list-style:none;padding:0">
  <li role="option" aria-selected="false" style="padding:4px">English</li>
  <li role="option" aria-selected="false" style="padding:4px">German</li>
  <li role="option" aria-selected="false" style="padding:4px">French</li>
</ul>
<script>
langs.addEventListener("click", (e) => {
  const li = e.target.closest("[role=option]")
  if (li) li.setAttribute("aria-selected", String(li.getAttribute("aria-selected") !== "true"))
})
</script>`
  ),
  page(
    "custom-checks",
    `<title>Preferences</title>${recordScript}
<style>
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
.tw{display:flex;align-items:center;gap:8px;margin:8px 0;position:relative}
.box{display:inline-block;width:18px;height:18px;border:2px solid #555;border-radius:4px;position:relative}
input:checked + .box{background:#36f}
.bs{position:relative;margin:8px 0;padding-left:28px}
.bs input{position:absolute;left:0;z-index:-1;opacity:0}
.bs label::before{content:"";position:absolute;left:0;top:0;width:18px;height:18px;border:1px solid #999;border-radius:3px;background:#fff}
.bs input:checked ~ label::before{background:#36f}
</style>
<label class="tw"><input type="checkbox" class="sr-only" id="remember"><span class="box"></span>Remember me</label>
<div class="bs"><input type="checkbox" id="terms"><label for="terms">I accept the terms</label></div>
<fieldset><legend>Work mode</legend>
  <label class="tw"><input type="radio" name="mode" value="remote" class="sr-only" id="remote"><span class="box"></span>Remote</label>
  <label class="tw"><input type="radio" name="mode" value="office" class="sr-only" id="office"><span class="box"></span>Office</label>
</fieldset>
<script>
for (const input of document.querySelectorAll("input")) input.addEventListener("change", () => record({ [input.id]: input.checked }))
</script>`
  ),
  page(
    "disabled",
    `<title>Apply</title>${recordScript}
<form onsubmit="event.preventDefault(); record({ submitted: true })">
  <label for="ref">Referral code</label><input id="ref" disabled>
  <label><input type="checkbox" id="relocate" disabled> Willing to relocate</label>
  <label for="country">Country</label><select id="country" disabled><option>Norway</option><option>Sweden</option></select>
  <fieldset disabled><legend>Locked</legend><label for="locked">Locked note</label><input id="locked"></fieldset>
  <div role="button" tabindex="0" aria-disabled="true" onclick="record({ next: true })">Next step</div>
  <button id="submit" disabled onclick="record({ clicked: true })">Submit application</button>
</form>`
  ),
  page(
    "enabling",
    `<title>Newsletter</title>${recordScript}
<label for="email">Email</label><input id="email" type="email">
<button id="join" disabled onclick="record({ joined: email.value })">Join the list</button>
<script>
// As form libraries do: the address is checked a moment after typing stops, then the button is enabled.
let check
email.addEventListener("input", () => {
  clearTimeout(check)
  check = setTimeout(() => { join.disabled = !/@/.test(email.value) }, 700)
})
</script>`
  ),
  page(
    "partly-covered",
    `<title>Checkout</title>${recordScript}
<style>body{margin:0}#go{position:absolute;top:100px;left:40px;width:240px;height:44px}
#chat{position:fixed;top:90px;left:120px;width:200px;height:80px;background:#333;color:#fff}</style>
<button id="go" onclick="record({ continued: true })">Continue to payment</button>
<div id="chat">Chat with us</div>`
  ),
  page(
    "fading-cover",
    `<title>Book</title>${recordScript}
<style>body{margin:0}#submit{position:absolute;top:100px;left:40px;width:160px;height:40px}
#picker{position:fixed;top:60px;left:20px;width:300px;height:200px;background:#fff;border:1px solid #999;transition:opacity .6s}
#picker.closing{opacity:0}
#loader{position:fixed;top:300px;left:20px;width:300px;height:120px;background:#eee}
#save{position:absolute;top:320px;left:40px;width:160px;height:40px}</style>
<button id="submit" onclick="record({ submitted: true })">Submit</button>
<div id="picker">Pick a date</div>
<button id="save" onclick="record({ saved: true })">Save draft</button>
<div id="loader">Loading…</div>
<script>
// A date picker closing with a fade (a CSS transition), removed when it ends.
requestAnimationFrame(() => requestAnimationFrame(() => {
  picker.classList.add("closing")
  picker.addEventListener("transitionend", () => picker.remove())
}))
// A loader faded out by script, as jQuery's fadeOut does.
let o = 1
const fade = setInterval(() => { o -= 0.1; loader.style.opacity = String(o); if (o <= 0.05) { clearInterval(fade); loader.remove() } }, 60)
</script>`
  ),
  page(
    "choices",
    `<title>Listings</title>
<label for="sort">Sort by</label>
<select id="sort" onchange="location.assign('index.html?sort=' + this.value)">
  <option value="">Relevance</option><option value="price">Price</option></select>
<label for="view">View</label>
<select id="view" onchange="setTimeout(() => history.pushState({}, '', '?view=' + this.value), 0)">
  <option value="">Cards</option><option value="list">List</option></select>
<label for="region">Region</label>
<select id="region" onchange="setTimeout(() => location.assign('index.html?region=' + this.value), 15)">
  <option value="">Anywhere</option><option value="eu">Europe</option></select>
<label for="size">Page size</label>
<select id="size" onchange="const s = this; setTimeout(() => { s.value = '10' }, 10)">
  <option value="10">10</option><option value="50">50</option></select>
<label for="city">City</label>
<select id="city" onchange="fetch('index.html?city=' + this.value).then((r) => r.text()).then(() => { count.textContent = '12 listings' })">
  <option value="">Any</option><option value="oslo">Oslo</option></select>
<p id="count"></p>
<label for="team">Team</label>
<select id="team"><option value="">Any</option><option value="core">Core</option></select>`
  ),
  page(
    "plans",
    `<title>Billing</title>${recordScript}
<label for="plan">Plan</label>
<select id="plan" onchange="record({ plan: this.value })">
  <option value="">Choose a plan</option><option value="free">Free</option><option value="pro">Pro</option>
  <option value="ent" disabled>Enterprise</option></select>
<label for="nick">Nickname</label><input id="nick">
<label for="city">City</label><input id="city">`
  )
]

const evaluate = TestBrowser.evaluate
const inputValue = (id: string) => evaluate<string>(`document.getElementById(${JSON.stringify(id)}).value`)
const checkedOf = (id: string) => evaluate<boolean>(`document.getElementById(${JSON.stringify(id)}).checked`)

const open = (name: string) =>
  Effect.gen(function* () {
    const server = yield* Server.Pages
    const engine = yield* Engine
    yield* engine.navigate(server.url(name, "/index.html"))
  })

const act = (input: Parameters<Engine["Service"]["act"]>[0]) =>
  Effect.gen(function* () {
    const engine = yield* Engine
    return yield* engine.act(input)
  })
const fails = (input: Parameters<Engine["Service"]["act"]>[0]) => Effect.flip(act(input))
const recorded = (name: string) =>
  Effect.gen(function* () {
    const server = yield* Server.Pages
    return server.recorded(name)
  })

type Targeted = ActResult & { readonly target?: Record<string, unknown> }
const targetOf = (result: ActResult) => (result as Targeted).target

const expectType = (error: SwitchyardError, type: string) =>
  assert.strictEqual(error.type, type, `expected ${type}, got ${error.type}: ${error.message}`)

layer(Layer.mergeAll(TestBrowser.layer(), Server.Pages.layer(pages)), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("Acts checked against the page", (it) => {
  it.layer(PlaywrightEngine.layer({ elementWaitMs: 500, actionTimeoutMs: 4_000 }))("playwright", (it) => {
    it.effect(
      "text a focus trap moves into a modal is verification_failed naming where it went; that field is put back",
      () =>
        Effect.gen(function* () {
          yield* open("focus-trap")
          const error = yield* fails(said('fill "Alert email" with "ada@example.com"'))
          expectType(error, "verification_failed")
          if (error._tag !== "VerificationFailed") return
          assert.strictEqual(error.sideEffect, "possible")
          assert.strictEqual(error.landed?.name, "Newsletter email")
          assert.strictEqual(error.landed?.role, "textbox")
          assert.include(error.message, 'textbox "Newsletter email"')
          assert.include(error.message, 'textbox "Alert email"')
          assert.strictEqual(error.expected, "ada@example.com")
          assert.strictEqual(error.actual, "")
          assert.strictEqual(yield* inputValue("alert-email"), "")
          // The field the text should not have reached holds what it held before.
          assert.strictEqual(yield* inputValue("news-email"), "")
        })
    )

    it.effect("a field behind a dialog that made the page inert is refused at once, naming the dialog", () =>
      Effect.gen(function* () {
        yield* open("inert")
        const behind = yield* fails(said('fill "Search members" with "grace"'))
        expectType(behind, "action_failed")
        assert.include(behind.message, 'dialog "Invite a teammate"')
        assert.strictEqual(yield* inputValue("search"), "")
        yield* act(said('fill "Email address" with "grace@example.com"'))
        assert.strictEqual(yield* inputValue("invite"), "grace@example.com")
      })
    )

    it.effect("a field that refuses the value is verification_failed saying what it shows", () =>
      Effect.gen(function* () {
        yield* open("masked")
        const error = yield* fails(said('fill "ZIP code" with "ABCDE"'))
        expectType(error, "verification_failed")
        if (error._tag !== "VerificationFailed") return
        assert.strictEqual(error.actual, "")
        assert.isUndefined(error.landed)
        // A mask that formats what was typed still shows it: the act succeeds and says what the page shows.
        const phone = yield* act(said('fill "Phone" with "5551234567"'))
        assert.deepInclude(targetOf(phone), { role: "textbox", name: "Phone", value: "(555) 123-4567" })
        assert.strictEqual(yield* inputValue("phone"), "(555) 123-4567")
        const city = yield* act(said('fill "City" with "Bergen"'))
        assert.deepInclude(targetOf(city), { value: "Bergen" })
        assert.match(String(targetOf(city)?.ref), /^(f\d+)?e\d+$/)
      })
    )

    it.effect("dates and times as people write them land in the input's own format", () =>
      Effect.gen(function* () {
        yield* open("dates-us")
        const dob = yield* act(said('fill "Date of birth" with "07/04/1990"'))
        assert.strictEqual(yield* inputValue("dob"), "1990-07-04")
        assert.deepInclude(targetOf(dob), { value: "1990-07-04" })
        // Month first, as the page says nothing else: the answer says how it was read.
        assert.include(dob.description, "month first")
        yield* act(said('fill "Date of birth" with "March 15, 2026"'))
        assert.strictEqual(yield* inputValue("dob"), "2026-03-15")
        yield* act(said('fill "Date of birth" with "15.03.2026"'))
        assert.strictEqual(yield* inputValue("dob"), "2026-03-15")
        yield* act(said('fill "Start time" with "2:30 PM"'))
        assert.strictEqual(yield* inputValue("start"), "14:30")
        yield* act(said('fill "Available from" with "March 2026"'))
        assert.strictEqual(yield* inputValue("month"), "2026-03")
        yield* act(said('fill "Preferred week" with "week 11, 2026"'))
        assert.strictEqual(yield* inputValue("week"), "2026-W11")
        yield* act(said('fill "Interview slot" with "03/15/2026 9:05 am"'))
        assert.strictEqual(yield* inputValue("interview"), "2026-03-15T09:05")

        const unreadable = yield* fails(said('fill "Date of birth" with "13/13/2020"'))
        expectType(unreadable, "invalid_input")
        assert.include(unreadable.message, "YYYY-MM-DD")
        assert.strictEqual(yield* inputValue("dob"), "2026-03-15")

        yield* open("dates-gb")
        const gb = yield* act(said('fill "Date of birth" with "07/04/1990"'))
        assert.strictEqual(yield* inputValue("dob"), "1990-04-07")
        assert.include(gb.description, "day first")
      })
    )

    it.effect("negative numbers hold in a number input and in a spinner", () =>
      Effect.gen(function* () {
        yield* open("numbers")
        const adjust = yield* act(said('fill "Adjustment" with "-1"'))
        assert.strictEqual(yield* inputValue("adjust"), "-1")
        assert.deepInclude(targetOf(adjust), { value: "-1" })
        yield* act(said('fill "Quantity" with "-1"'))
        assert.strictEqual(yield* inputValue("qty"), "-1")
        const bad = yield* fails(said('fill "Adjustment" with "a few"'))
        expectType(bad, "invalid_input")
        assert.include(bad.message, "number")
      })
    )

    it.effect("a range input is reachable by name with fill and set, within its bounds and steps", () =>
      Effect.gen(function* () {
        yield* open("numbers")
        const filled = yield* act(said('fill "Salary" with "95"'))
        assert.strictEqual(yield* inputValue("salary"), "95")
        assert.deepInclude(targetOf(filled), { role: "slider", value: "95" })
        assert.strictEqual(yield* evaluate<string>("document.getElementById('salary-out').textContent"), "95")
        yield* act(said('set "Salary" to 120'))
        assert.strictEqual(yield* inputValue("salary"), "120")
        const off = yield* fails(said('set "Salary" to 97'))
        expectType(off, "invalid_input")
        assert.include(off.message, "5")
        const past = yield* fails(said('set "Salary" to 500'))
        expectType(past, "invalid_input")
        assert.include(past.message, "200")
        assert.strictEqual(yield* inputValue("salary"), "120")
      })
    )

    it.effect("a slider drawn without an input is set with the keys a person uses", () =>
      Effect.gen(function* () {
        yield* open("numbers")
        const level = yield* act(said('set "Experience level" to 70'))
        assert.strictEqual(yield* evaluate<string>("level.getAttribute('aria-valuenow')"), "70")
        assert.deepInclude(targetOf(level), { role: "slider", value: "70" })
        yield* act(said('set "Experience level" to 0'))
        assert.strictEqual(yield* evaluate<string>("level.getAttribute('aria-valuenow')"), "0")
        const between = yield* fails(said('set "Experience level" to 72'))
        expectType(between, "verification_failed")
      })
    )

    it.effect(
      "a field re-rendered while typed into is filled again; a select is filled by choosing; typing appends",
      () =>
        Effect.gen(function* () {
          yield* open("rerender")
          const first = yield* act(said('fill "First name" with "Ada"'))
          assert.strictEqual(yield* inputValue("first"), "Ada")
          assert.deepInclude(targetOf(first), { value: "Ada" })
          const country = yield* act(said('fill "Country" with "Sweden"'))
          assert.strictEqual(yield* inputValue("country"), "Sweden")
          assert.deepInclude(targetOf(country), { selected: ["Sweden"] })
          const notes = yield* act(said('type " world" into "Notes"'))
          assert.deepInclude(targetOf(notes), { value: "Hello world" })
        })
    )

    it.effect("a choice that moves the page says where it went, one put back is not taken, one that stays shows", () =>
      Effect.gen(function* () {
        // A change handler that navigates at once, in its own task, or a moment later; one that changes the route.
        yield* open("choices")
        const sorted = yield* act(said('select "Price" in "Sort by"'))
        assert.include(sorted.navigated?.url ?? "", "?sort=price")
        assert.include(yield* evaluate<string>("location.href"), "?sort=price")
        const viewed = yield* act(said('select "List" in "View"'))
        assert.include(viewed.navigated?.url ?? "", "?view=list")
        const region = yield* act(said('select "Europe" in "Region"'))
        assert.include(region.navigated?.url ?? "", "?region=eu")
        assert.include(yield* evaluate<string>("location.href"), "?region=eu")
        // A page that puts its own choice back a moment later does not show the one asked for.
        const reset = yield* fails(said('select "50" in "Page size"'))
        expectType(reset, "verification_failed")
        assert.strictEqual(yield* inputValue("size"), "10")
        // A choice whose handler asks the site for data: the answer comes once the page has it.
        yield* act(said('select "Oslo" in "City"'))
        assert.strictEqual(yield* evaluate<string>("document.getElementById('count').textContent"), "12 listings")
        // A choice nothing follows: no move, and the page shows it.
        const team = yield* act(said('select "Core" in "Team"'))
        assert.isUndefined(team.navigated)
        assert.deepInclude(targetOf(team), { selected: ["Core"] })
        assert.strictEqual(yield* inputValue("team"), "core")
      })
    )

    it.effect("a multi-select takes several options in one call and keeps earlier picks", () =>
      Effect.gen(function* () {
        yield* open("multi")
        const both = yield* act(said('select "Python", "SQL" in "Skills"'))
        assert.deepStrictEqual(
          yield* evaluate<Array<string>>("[...document.getElementById('skills').selectedOptions].map((o) => o.label)"),
          ["Python", "SQL"]
        )
        assert.deepInclude(targetOf(both), { selected: ["Python", "SQL"] })
        yield* act(said('select "Rust" in "Skills"'))
        assert.deepStrictEqual(
          yield* evaluate<Array<string>>("[...document.getElementById('skills').selectedOptions].map((o) => o.label)"),
          ["Python", "SQL", "Rust"]
        )
        // An action's arguments list selects them all.
        const action = both.action!
        yield* open("multi")
        yield* act({ ...action, arguments: ["Go", "Rust"] })
        assert.deepStrictEqual(
          yield* evaluate<Array<string>>("[...document.getElementById('skills').selectedOptions].map((o) => o.label)"),
          ["Go", "Rust"]
        )
        // An ARIA listbox that allows several: each option clicked once, none toggled off.
        const langs = yield* act(said('select "English" and "French" in "Languages"'))
        assert.deepStrictEqual(
          yield* evaluate<Array<string>>(
            "[...document.querySelectorAll('#langs [aria-selected=true]')].map((o) => o.textContent)"
          ),
          ["English", "French"]
        )
        assert.deepInclude(targetOf(langs), { selected: ["English", "French"] })
        yield* act(said('select "French" in "Languages"'))
        assert.deepStrictEqual(
          yield* evaluate<Array<string>>(
            "[...document.querySelectorAll('#langs [aria-selected=true]')].map((o) => o.textContent)"
          ),
          ["English", "French"]
        )
      })
    )

    it.effect("custom checkboxes and radios are ticked through their own label's box", () =>
      Effect.gen(function* () {
        yield* open("custom-checks")
        const remember = yield* act(said('check "Remember me"'))
        assert.isTrue(yield* checkedOf("remember"))
        assert.deepInclude(targetOf(remember), { role: "checkbox", checked: true })
        yield* act(said('uncheck "Remember me"'))
        assert.isFalse(yield* checkedOf("remember"))
        yield* act(said('click "Remember me"'))
        assert.isTrue(yield* checkedOf("remember"))
        yield* act(said('check "I accept the terms"'))
        assert.isTrue(yield* checkedOf("terms"))
        yield* act(said('check "Remote"'))
        assert.isTrue(yield* checkedOf("remote"))
        const office = yield* act(said('check "Office"'))
        assert.deepInclude(targetOf(office), { role: "radio", checked: true })
        assert.isFalse(yield* checkedOf("remote"))
        // Checking what is already checked changes nothing.
        yield* act(said('check "Office"'))
        assert.deepStrictEqual(yield* recorded("custom-checks"), [
          { remember: true },
          { remember: false },
          { remember: true },
          { terms: true },
          { remote: true },
          { office: true }
        ])
      })
    )

    it.effect("an act on a disabled control fails at once saying it is disabled, and does nothing", () =>
      Effect.gen(function* () {
        yield* open("disabled")
        for (const instruction of [
          'click "Submit application"',
          'fill "Referral code" with "X1"',
          'check "Willing to relocate"',
          'select "Sweden" in "Country"',
          'fill "Locked note" with "hi"',
          'click "Next step"'
        ]) {
          const error = yield* fails(said(instruction))
          expectType(error, "action_failed")
          assert.strictEqual("sideEffect" in error ? error.sideEffect : undefined, "none", instruction)
          assert.include(error.message, "disabled", instruction)
        }
        assert.deepStrictEqual(yield* recorded("disabled"), [])
      })
    )

    it.effect(
      "a select refuses untouched an option it lacks, a disabled one and several, and takes one loosely named",
      () =>
        Effect.gen(function* () {
          yield* open("plans")
          const lacking = yield* fails(said('select "Team" in "Plan"'))
          expectType(lacking, "element_not_found")
          assert.include(lacking.message, '"Free", "Pro"')
          expectType(yield* fails(said('select "Enterprise" in "Plan"')), "action_failed")
          expectType(yield* fails(said('select "Free", "Pro" in "Plan"')), "invalid_input")
          assert.strictEqual(yield* inputValue("plan"), "")
          assert.deepStrictEqual(yield* recorded("plans"), [])
          // A label written in other case and spacing names the same option: chosen once, and the answer says so.
          const chosen = yield* act(said('select "  pro " in "Plan"'))
          assert.strictEqual(yield* inputValue("plan"), "pro")
          assert.deepInclude(targetOf(chosen), { selected: ["Pro"] })
          assert.deepStrictEqual(yield* recorded("plans"), [{ plan: "pro" }])
        })
    )

    it.effect(
      "a reference to a replaced field is followed to the new one; one to a removed field fails untouched",
      () =>
        Effect.gen(function* () {
          yield* open("plans")
          const engine = yield* Engine
          const refOf = (name: string) =>
            engine.elements!().pipe(Effect.map((all) => all.find((e) => e.name === name)!.ref))
          const nick = yield* refOf("Nickname")
          const city = yield* refOf("City")
          // Replaced behind the engine's back by a fresh field of the same name, then a field removed outright.
          yield* evaluate(`(() => { const fresh = document.createElement("input"); fresh.id = "nick";
          document.getElementById("nick").replaceWith(fresh) })()`)
          yield* act({ selector: nick, method: "fill", arguments: ["Ada"], description: "" })
          assert.strictEqual(yield* inputValue("nick"), "Ada")
          yield* evaluate(`document.getElementById("city").remove()`)
          expectType(
            yield* fails({ selector: city, method: "fill", arguments: ["Oslo"], description: "" }),
            "element_not_found"
          )
          // The act after it finds its element as any act does.
          yield* act({ selector: yield* refOf("Nickname"), method: "fill", arguments: ["Grace"], description: "" })
          assert.strictEqual(yield* inputValue("nick"), "Grace")
          // Nothing typed "Oslo" anywhere.
          assert.isFalse(
            yield* evaluate<boolean>(`[...document.querySelectorAll("input")].some((i) => i.value === "Oslo")`)
          )
        })
    )

    it.effect("a control the page is enabling after the last act is waited for a moment, then clicked once", () =>
      Effect.gen(function* () {
        yield* open("enabling")
        yield* act(said('fill "Email" with "ada@example.com"'))
        yield* act(said('click "Join the list"'))
        assert.deepStrictEqual(yield* recorded("enabling"), [{ joined: "ada@example.com" }])
        // A value the page does not accept leaves the button disabled: refused, saying so, nothing clicked.
        yield* open("enabling")
        yield* act(said('fill "Email" with "ada"'))
        const error = yield* fails(said('click "Join the list"'))
        expectType(error, "action_failed")
        assert.include(error.message, "disabled")
        assert.deepStrictEqual(yield* recorded("enabling"), [{ joined: "ada@example.com" }])
      })
    )

    it.effect("a partly covered button is clicked where it is visible", () =>
      Effect.gen(function* () {
        yield* open("partly-covered")
        yield* act(said('click "Continue to payment"'))
        assert.deepStrictEqual(yield* recorded("partly-covered"), [{ continued: true }])
      })
    )

    it.effect("a cover fading away is waited out", () =>
      Effect.gen(function* () {
        yield* open("fading-cover")
        yield* act(said('click "Submit"'))
        yield* act(said('click "Save draft"'))
        assert.deepStrictEqual(yield* recorded("fading-cover"), [{ submitted: true }, { saved: true }])
      })
    )
  })
})
