/**
 * Values as people write them into typed inputs: dates in US, European and month-name spellings, 12-hour times,
 * months, weeks, negative and decimal numbers, range and ARIA sliders, and several options of one multi-select.
 */
import assert from "node:assert/strict"
import { pattern, reportState } from "../Pattern.ts"

/** `state()` for a page whose fields have ids: every input's and select's value by id (a multi-select's as a list). */
const fieldsState = `<script>
function state() {
  const out = {}
  for (const el of document.querySelectorAll("input[id], select[id]"))
    out[el.id] = el.multiple ? [...el.selectedOptions].map((o) => o.text) : el.value
  return out
}
</script>`

export const patterns = [
  pattern({
    name: "date-inputs-human-spellings",
    class: "values",
    pages: {
      "/details.html": `<!doctype html><title>Personal details</title>${reportState}${fieldsState}
<h1>Personal details</h1>
<p><label for="birth">Date of birth</label> <input type="date" id="birth"></p>
<p><label for="start">Earliest start date</label> <input type="date" id="start" min="2025-01-01"></p>
<p><label for="notice">Notice period ends</label> <input type="date" id="notice"></p>
<p><label for="visa">Work permit valid until</label> <input type="date" id="visa"></p>
<p><label for="last">Last day at current employer</label> <input type="date" id="last"></p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/details.html") })
      const empty = { birth: "", start: "", notice: "", visa: "", last: "" }
      const asked: Array<[string, string, string, string]> = [
        ["Date of birth", "birth", "07/04/1990", "1990-07-04"],
        ["Earliest start date", "start", "March 15, 2026", "2026-03-15"],
        ["Notice period ends", "notice", "31.01.2026", "2026-01-31"],
        ["Work permit valid until", "visa", "2027-06-30", "2027-06-30"],
        ["Last day at current employer", "last", "15 March 2026", "2026-03-15"]
      ]
      const now: Record<string, string> = { ...empty }
      const answers = []
      for (const [label, id, written, iso] of asked) {
        answers.push(await agent.ok("browser.act", { instruction: `fill "${label}" with "${written}"` }))
        now[id] = iso
        await agent.expectState(now, `the date fields after "${written}" into "${label}"`)
      }
      assert.deepEqual(
        answers.map((a) => a.result.target?.value),
        asked.map(([, , , iso]) => iso),
        "each answer says the date the field now holds, in the input's own format"
      )
    }
  }),
  pattern({
    name: "date-unreadable-is-refused",
    class: "values",
    pages: {
      "/details.html": `<!doctype html><title>Availability</title>${reportState}${fieldsState}
<p><label for="start">Available from</label> <input type="date" id="start"></p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/details.html") })
      for (const written of ["13/13/2020", "next tuesday-ish", "2026-02-30"]) {
        const answer = await agent.call("browser.act", { instruction: `fill "Available from" with "${written}"` })
        // Success would mean the field holds a date; a refusal leaves it empty.
        const state = (await agent.pageState()) ?? {}
        agent.expectPage(
          /^\d{4}-\d\d-\d\d$/.test(String(state.start)),
          answer.ok,
          `a date in the field after "${written}"`
        )
        assert.equal(answer.error?.type, "invalid_input", `"${written}": ${JSON.stringify(answer.error)}`)
        assert.match(answer.error?.message ?? "", /YYYY-MM-DD/, "the refusal names the format it reads")
        assert.equal(state.start, "", "nothing is left in the field")
      }
    }
  }),
  pattern({
    name: "time-month-week-datetime-spellings",
    class: "values",
    pages: {
      "/interview.html": `<!doctype html><title>Book your interview</title>${reportState}${fieldsState}
<h1>Book your interview</h1>
<p><label for="time">Preferred time</label> <input type="time" id="time"></p>
<p><label for="latest">Latest time we may call</label> <input type="time" id="latest"></p>
<p><label for="grad">Graduation month</label> <input type="month" id="grad"></p>
<p><label for="from">Available from (month)</label> <input type="month" id="from"></p>
<p><label for="week">Week you could start</label> <input type="week" id="week"></p>
<p><label for="onsite">Week of the on-site visit</label> <input type="week" id="onsite"></p>
<p><label for="slot">Interview slot</label> <input type="datetime-local" id="slot"></p>
<p><label for="alt">Alternative slot</label> <input type="datetime-local" id="alt"></p>
<p><label for="backup">Backup slot</label> <input type="datetime-local" id="backup"></p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/interview.html") })
      const asked: Array<[string, string, string, string]> = [
        ["Preferred time", "time", "2:30 PM", "14:30"],
        ["Latest time we may call", "latest", "17:45", "17:45"],
        ["Graduation month", "grad", "June 2024", "2024-06"],
        ["Available from (month)", "from", "09/2026", "2026-09"],
        ["Week you could start", "week", "2026-W11", "2026-W11"],
        // A date names the week it falls in: Monday 16 March 2026 is in ISO week 12.
        ["Week of the on-site visit", "onsite", "March 16, 2026", "2026-W12"],
        ["Interview slot", "slot", "03/16/2026 9:00 AM", "2026-03-16T09:00"],
        ["Alternative slot", "alt", "March 17, 2026 4:15 PM", "2026-03-17T16:15"],
        ["Backup slot", "backup", "18.03.2026 14:00", "2026-03-18T14:00"]
      ]
      const now: Record<string, string> = Object.fromEntries(asked.map(([, id]) => [id, ""]))
      for (const [label, id, written, value] of asked) {
        await agent.ok("browser.act", { instruction: `fill "${label}" with "${written}"` })
        now[id] = value
        await agent.expectState(now, `the fields after "${written}" into "${label}"`)
      }
    }
  }),
  pattern({
    name: "number-inputs-negative-and-decimal",
    class: "values",
    pages: {
      // Native number inputs, and a NumberField as React Aria builds it: a text input with role spinbutton whose
      // value the page parses when it loses focus.
      "/preferences.html": `<!doctype html><title>Preferences</title>${reportState}${fieldsState}
<form method="post" action="record" id="f">
<p><label for="offset">Hours from UTC</label> <input type="number" id="offset" name="offset" min="-12" max="14"></p>
<p><label for="temp">Office temperature change (°C)</label> <input type="number" id="temp" name="temp" step="0.5"></p>
<p><label for="rating">Rating</label> <input type="number" id="rating" name="rating" min="0" max="5" step="0.5"></p>
<p><span id="team-l">Team size</span>
  <button type="button" aria-label="Decrease" onclick="bump(-1)">−</button>
  <input type="text" id="team" name="team" role="spinbutton" inputmode="numeric" aria-labelledby="team-l" aria-valuemin="1" aria-valuemax="500" aria-valuenow="1" value="1">
  <button type="button" aria-label="Increase" onclick="bump(1)">+</button></p>
<button>Save preferences</button>
</form>
<script>
function commit() {
  const n = Math.min(500, Math.max(1, parseInt(team.value, 10) || 1))
  team.value = String(n); team.setAttribute("aria-valuenow", String(n))
}
function bump(d) { commit(); team.value = String(Number(team.value) + d); commit() }
team.addEventListener("blur", commit)
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/preferences.html") })
      const asked: Array<[string, string, string]> = [
        ["Hours from UTC", "offset", "-5"],
        ["Office temperature change", "temp", "-1"],
        ["Rating", "rating", "4.5"]
      ]
      const now: Record<string, string> = { offset: "", temp: "", rating: "", team: "1" }
      for (const [label, id, value] of asked) {
        await agent.ok("browser.act", { instruction: `fill "${label}" with "${value}"` })
        now[id] = value
        await agent.expectState(now, `the fields after "${value}" into "${label}"`)
      }
      await agent.ok("browser.act", { instruction: 'fill "Team size" with "12"' })
      await agent.ok("browser.act", { instruction: 'click "Save preferences"' })
      await agent.expectRecorded([{ offset: "-5", temp: "-1", rating: "4.5", team: "12" }], "the form post")
    }
  }),
  pattern({
    name: "range-and-aria-sliders-by-name",
    class: "values",
    pages: {
      // The page keeps its own copy of each value from the events a slider fires (as React's onChange does), and a
      // Radix-style slider: a span with role slider moved by keys.
      "/expectations.html": `<!doctype html><title>Expectations</title>${reportState}
<style>.radix{position:relative;width:200px;height:6px;background:#ddd;margin:16px 0}
.radix [role=slider]{position:absolute;top:-7px;width:20px;height:20px;border-radius:50%;background:#333;display:block}</style>
<h1>Your expectations</h1>
<p><label for="salary">Expected salary (k€)</label> <input type="range" id="salary" min="30" max="200" step="5" value="60"> <output id="salary-out">60</output></p>
<p><label for="remote">Remote days per week</label> <input type="range" id="remote" min="0" max="5" value="0"> <output id="remote-out">0</output></p>
<p id="rating-l">Minimum company rating</p>
<div class="radix"><span role="slider" id="rating" tabindex="0" aria-labelledby="rating-l" aria-valuemin="1" aria-valuemax="5" aria-valuenow="1" aria-orientation="horizontal"></span></div>
<script>
const app = { salary: 60, remote: 0, rating: 1 }
for (const id of ["salary", "remote"]) {
  const el = document.getElementById(id)
  el.addEventListener("input", () => { app[id] = Number(el.value); document.getElementById(id + "-out").textContent = el.value })
}
function paint() { rating.setAttribute("aria-valuenow", String(app.rating)); rating.style.left = ((app.rating - 1) * 45) + "px" }
rating.addEventListener("keydown", (e) => {
  const step = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }[e.key]
  if (e.key === "Home") app.rating = 1
  else if (e.key === "End") app.rating = 5
  else if (step !== undefined) app.rating = Math.min(5, Math.max(1, app.rating + step))
  else return
  e.preventDefault(); paint()
})
paint()
function state() { return { ...app } }
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/expectations.html") })
      const set = await agent.ok("browser.act", { instruction: 'set "Expected salary" to 95' })
      await agent.expectState({ salary: 95, remote: 0, rating: 1 }, "the sliders after setting the salary to 95")
      await agent.ok("browser.act", { instruction: 'fill "Remote days per week" with "3"' })
      await agent.expectState({ salary: 95, remote: 3, rating: 1 }, "the sliders after filling 3 remote days")
      await agent.ok("browser.act", { instruction: 'set "Minimum company rating" to 4' })
      await agent.expectState({ salary: 95, remote: 3, rating: 4 }, "the sliders after setting the rating to 4")
      assert.equal(set.result.target?.value, "95", `the answer says the slider's value: ${JSON.stringify(set.result)}`)
    }
  }),
  pattern({
    name: "select-multiple-native",
    class: "values",
    pages: {
      "/skills.html": `<!doctype html><title>Skills</title>${reportState}${fieldsState}
<form method="post" action="record">
<p><label for="skills">Skills</label><br><select multiple id="skills" name="skills" size="6">
  <option>Python</option><option>SQL</option><option>Go</option><option>Rust</option><option>Java</option><option>Kotlin</option>
</select></p>
<p><label for="langs">Languages spoken</label><br><select multiple id="langs" name="langs" size="4">
  <option>English</option><option>French</option><option>German</option><option>Spanish</option>
</select></p>
<p><label for="industries">Industries</label><br><select multiple id="industries" name="industries" size="4">
  <option>Fintech</option><option>Health</option><option>Logistics</option><option>Retail</option>
</select></p>
<button>Save</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/skills.html") })
      const two = await agent.ok("browser.act", { instruction: 'select "Python", "SQL" in "Skills"' })
      await agent.expectState(
        { skills: ["Python", "SQL"], langs: [], industries: [] },
        "the skills after selecting two"
      )
      // A reference from extract, with several options as the action's arguments.
      const read = await agent.ok("browser.extract", { instruction: "the form fields" })
      const langs = (read.result.controls as Array<{ ref: string; name: string }>).find(
        (c) => c.name === "Languages spoken"
      )
      assert.ok(langs, JSON.stringify(read.result.controls))
      await agent.ok("browser.act", { ref: langs.ref, method: "selectOption", arguments: ["French", "German"] })
      const both = { skills: ["Python", "SQL"], langs: ["French", "German"] }
      await agent.expectState({ ...both, industries: [] }, "the languages by reference")
      await agent.ok("browser.act", { instruction: 'select "Health" and "Logistics" in "Industries"' })
      await agent.expectState({ ...both, industries: ["Health", "Logistics"] }, "the industries, options joined by and")
      await agent.ok("browser.act", { instruction: 'click "Save"' })
      await agent.expectRecorded([{ ...both, industries: ["Health", "Logistics"] }], "the form post")
      assert.deepEqual(two.result.target?.selected, ["Python", "SQL"], JSON.stringify(two.result))
    }
  }),
  pattern({
    name: "aria-multiselect-listbox-and-chips",
    class: "values",
    pages: {
      // An ARIA listbox with aria-multiselectable, and a react-select style combobox that turns each pick into a chip.
      "/profile.html": `<!doctype html><title>Profile</title>${reportState}
<style>[role=option]{padding:4px 8px;cursor:pointer}[role=option][aria-selected=true]{background:#cde}
.chips{display:flex;gap:4px;flex-wrap:wrap;border:1px solid #888;padding:4px;width:320px}
.chip{background:#eee;border-radius:10px;padding:0 8px}#menu{border:1px solid #888;width:320px}</style>
<p id="wa">Work arrangement</p>
<ul role="listbox" id="arrangement" aria-labelledby="wa" aria-multiselectable="true" tabindex="0" style="list-style:none;padding:0;width:200px;border:1px solid #888">
  <li role="option" aria-selected="false">On-site</li><li role="option" aria-selected="false">Hybrid</li><li role="option" aria-selected="false">Remote</li>
</ul>
<p><label id="tools-l" for="tools-input">Tools</label></p>
<div class="chips" id="chips"><input id="tools-input" role="combobox" aria-expanded="false" aria-controls="menu" aria-autocomplete="list" style="border:0;outline:0;flex:1"></div>
<div role="listbox" id="menu" aria-labelledby="tools-l" hidden></div>
<script>
for (const o of arrangement.children) o.addEventListener("click", () => o.setAttribute("aria-selected", String(o.getAttribute("aria-selected") !== "true")))
const all = ["Docker", "Kubernetes", "PostgreSQL", "Terraform", "TypeScript"]
const tools = []
const input = document.getElementById("tools-input")
function menuFor(q) {
  const items = all.filter((t) => !tools.includes(t) && t.toLowerCase().includes(q.toLowerCase()))
  menu.innerHTML = items.map((t) => '<div role="option" aria-selected="false">' + t + '</div>').join("")
  menu.hidden = items.length === 0; input.setAttribute("aria-expanded", String(!menu.hidden))
  for (const o of menu.children) o.addEventListener("mousedown", (e) => { e.preventDefault(); pick(o.textContent) })
}
function pick(t) {
  tools.push(t); input.value = ""; menu.hidden = true; input.setAttribute("aria-expanded", "false")
  const chip = document.createElement("span"); chip.className = "chip"; chip.textContent = t
  chips.insertBefore(chip, input)
}
input.addEventListener("focus", () => menuFor(input.value))
input.addEventListener("input", () => menuFor(input.value))
input.addEventListener("blur", () => { menu.hidden = true })
function state() {
  return { arrangement: [...arrangement.children].filter((o) => o.getAttribute("aria-selected") === "true").map((o) => o.textContent), tools: [...tools] }
}
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/profile.html") })
      await agent.ok("browser.act", { instruction: 'select "Hybrid", "Remote" in "Work arrangement"' })
      await agent.expectState({ arrangement: ["Hybrid", "Remote"], tools: [] }, "the listbox after selecting two")
      await agent.ok("browser.act", { instruction: 'select "PostgreSQL", "TypeScript" in "Tools"' })
      await agent.expectState(
        { arrangement: ["Hybrid", "Remote"], tools: ["PostgreSQL", "TypeScript"] },
        "the chips after selecting two tools"
      )
    }
  })
]
