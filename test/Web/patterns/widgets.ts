/** Custom widgets real application forms use: ARIA dropdowns, rich text, pickers, long lists, overlays. */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "custom-aria-combobox",
    class: "widgets",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<span id="lbl">Country</span>
<div id="box" role="combobox" tabindex="0" aria-labelledby="lbl" aria-expanded="false" aria-controls="opts"
  style="border:1px solid #888;width:200px;padding:4px;cursor:pointer">Select…</div>
<div id="opts" role="listbox" hidden>
  <div role="option" style="padding:4px">Canada</div><div role="option" style="padding:4px">Cameroon</div>
  <div role="option" style="padding:4px">France</div>
</div>
<button onclick="record({ country: box.textContent })">Save</button>
<script>
box.addEventListener("click", () => { opts.hidden = !opts.hidden; box.setAttribute("aria-expanded", String(!opts.hidden)) })
for (const o of opts.children) o.addEventListener("click", () => { box.textContent = o.textContent; opts.hidden = true })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'select "Canada" in "Country"' })
      await agent.ok("browser.act", { instruction: 'click "Save"' })
      agent.expectPage(agent.recorded(), [{ country: "Canada" }])
    }
  }),
  pattern({
    name: "contenteditable-cover-letter",
    class: "widgets",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<h3>Cover letter</h3>
<div id="ed" contenteditable="true" style="min-height:80px;border:1px solid #888"></div>
<button onclick="record({ letter: ed.innerText.trim() })">Submit</button>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Cover letter" with "Dear team, I would love to join."' })
      await agent.ok("browser.act", { instruction: 'click "Submit"' })
      agent.expectPage(agent.recorded(), [{ letter: "Dear team, I would love to join." }])
    }
  }),
  pattern({
    name: "date-and-number-inputs",
    class: "widgets",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<form id="f" onsubmit="event.preventDefault(); record({ start: f.start.value, years: f.years.value })">
  <div>Earliest start date</div><input type="date" name="start">
  <div>Years of experience</div><input type="number" name="years" min="0">
  <button>Continue</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Earliest start date" with "2027-01-04"' })
      await agent.ok("browser.act", { instruction: 'fill "Years of experience" with "7"' })
      await agent.ok("browser.act", { instruction: 'click "Continue"' })
      agent.expectPage(agent.recorded(), [{ start: "2027-01-04", years: "7" }])
    }
  }),
  pattern({
    name: "virtualized-job-list",
    class: "widgets",
    pages: {
      // Only the rows in view exist (react-window style, scrolled with the window).
      "/jobs.html": `<!doctype html><title>All jobs</title>${recordScript}
<div id="spacer" style="position:relative;height:40000px"></div>
<script>
const rowHeight = 40
function render() {
  const first = Math.max(0, Math.floor(window.scrollY / rowHeight) - 5)
  const last = Math.min(999, first + Math.ceil(window.innerHeight / rowHeight) + 10)
  let html = ""
  for (let i = first; i <= last; i++)
    html += '<div style="position:absolute;top:' + i * rowHeight + 'px;height:' + rowHeight + 'px"><a href="#" onclick="record({ job: ' + i + ' }); return false">Job ' + i + '</a></div>'
  spacer.innerHTML = html
}
window.addEventListener("scroll", render)
render()
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/jobs.html") })
      // As an agent does: look, scroll, look again, until the row is there.
      for (let i = 0; i < 20; i++) {
        const seen = await agent.ok("browser.extract", { instruction: "the links" })
        if ((seen.result.answer as Array<{ text: string }>).some((l) => l.text === "Job 60")) break
        await agent.ok("browser.act", { instruction: "scroll down" })
      }
      await agent.ok("browser.act", { instruction: 'click "Job 60"' })
      agent.expectPage(agent.recorded(), [{ job: 60 }])
    }
  }),
  pattern({
    name: "sticky-footer-over-submit",
    class: "widgets",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<style>body{padding-bottom:140px}</style>
<div style="height:1500px">Long application form</div>
<button onclick="record({ submitted: true })">Submit application</button>
<div style="height:600px">Equal opportunity statement</div>
<div style="position:fixed;bottom:0;left:0;right:0;height:120px;background:#333;color:#fff">Questions? Chat with us</div>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      agent.expectPage(agent.recorded(), [{ submitted: true }])
    }
  }),
  pattern({
    name: "cookie-banner-first",
    class: "widgets",
    pages: {
      "/job.html": `<!doctype html><title>Job</title>${recordScript}
<h1>Support engineer</h1><button onclick="record({ applied: true })">Apply</button>
<div id="consent" role="dialog" aria-label="Cookie consent" style="position:fixed;inset:0;background:rgba(0,0,0,.5)">
  <div style="background:#fff;margin:100px auto;width:300px;padding:10px">We use cookies.
  <button onclick="consent.remove()">Accept all</button><button onclick="consent.remove()">Reject</button></div></div>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job.html") })
      // Under the banner the click cannot land: the answer says so at once and names what covers it.
      const started = Date.now()
      const blocked = await agent.call("browser.act", { instruction: 'click "Apply"' })
      assert.equal(blocked.error?.type, "action_failed", JSON.stringify(blocked))
      assert.match(blocked.message ?? blocked.error?.message ?? "", /Cookie consent/)
      assert.ok(Date.now() - started < 5_000, "a covered target is reported without waiting out the action limit")
      await agent.ok("browser.act", { instruction: 'click "Accept all"' })
      await agent.ok("browser.act", { instruction: 'click "Apply"' })
      agent.expectPage(agent.recorded(), [{ applied: true }])
    }
  })
]
