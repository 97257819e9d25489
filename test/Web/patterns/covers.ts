/**
 * Targets with something over them that a person clicks past: a badge over part of a button, a date picker fading out
 * over the Submit button, a modal backdrop on its way out.
 */
import { pattern, recordScript } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "button-partly-covered",
    class: "covers",
    pages: {
      // A "New" ribbon over the middle of a wide button, and a chat launcher over the right half of a link.
      "/pricing.html": `<!doctype html><title>Pricing</title>${recordScript}
<h1>Pricing</h1>
<div style="position:relative;width:420px;height:60px">
  <button style="position:absolute;left:0;top:0;width:400px;height:48px" onclick="record({ clicked: 'trial' })">Start free trial</button>
  <div style="position:absolute;left:150px;top:-6px;width:110px;height:60px;background:#e33;color:#fff;text-align:center;line-height:60px;transform:rotate(-4deg)">NEW</div>
</div>
<div style="position:relative;width:300px;height:40px;margin-top:30px">
  <a href="#" style="display:inline-block;width:200px;height:40px;line-height:40px;background:#eef" onclick="record({ clicked: 'sales' }); return false">Talk to sales</a>
  <div style="position:absolute;left:90px;top:0;width:120px;height:40px;border-radius:20px;background:#333;color:#fff;line-height:40px;text-align:center">Chat</div>
</div>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/pricing.html") })
      await agent.ok("browser.act", { instruction: 'click "Start free trial"' })
      await agent.expectRecorded([{ clicked: "trial" }], "the click on the covered button")
      await agent.ok("browser.act", { instruction: 'click "Talk to sales"' })
      await agent.expectRecorded([{ clicked: "trial" }, { clicked: "sales" }], "the click on the covered link")
    }
  }),
  pattern({
    name: "picker-fading-out-over-submit",
    class: "covers",
    pages: {
      // A date picker opened under its field, over the form's button; choosing a day fades it out for 600 ms before
      // it is removed, and it takes clicks while it fades.
      "/book.html": `<!doctype html><title>Book a call</title>${recordScript}
<style>#picker{position:absolute;top:70px;left:8px;width:260px;background:#fff;border:1px solid #888;box-shadow:0 4px 12px rgba(0,0,0,.3);padding:8px;transition:opacity .6s}
#picker button{width:32px;margin:2px}</style>
<p><label for="day">Day</label> <input id="day" readonly> <button type="button" id="chooser">Choose date</button></p>
<p><button type="button" id="send" style="margin-top:20px">Submit</button></p>
<div id="picker" hidden><div>March 2026</div><div id="days"></div></div>
<script>
for (let d = 1; d <= 31; d++) { const b = document.createElement("button"); b.type = "button"; b.textContent = String(d); days.appendChild(b) }
let fading = false
chooser.addEventListener("click", () => { picker.hidden = false; picker.style.opacity = "1"; fading = false })
// While it fades, the picker still takes clicks (and swallows them, as such pickers do).
picker.addEventListener("click", (e) => { if (fading) { e.stopPropagation(); record({ clickSwallowedByPicker: true }) } }, true)
days.addEventListener("click", (e) => {
  if (e.target.tagName !== "BUTTON") return
  day.value = "2026-03-" + e.target.textContent.padStart(2, "0")
  picker.style.opacity = "0"; fading = true
  picker.addEventListener("transitionend", () => { picker.hidden = true; fading = false }, { once: true })
})
send.addEventListener("click", () => record({ submitted: day.value }))
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/book.html") })
      await agent.ok("browser.act", { instruction: 'click "Choose date"' })
      await agent.ok("browser.act", { instruction: 'click "15"' })
      await agent.ok("browser.act", { instruction: 'click "Submit"' })
      await agent.expectRecorded([{ submitted: "2026-03-15" }], "the form after the picker faded out")
    }
  }),
  pattern({
    name: "modal-backdrop-fading-out",
    class: "covers",
    pages: {
      // Bootstrap's fade: after "Accept", the dialog and its backdrop take 300 ms to go, then are removed.
      "/job.html": `<!doctype html><title>Job</title>${recordScript}
<style>.fade{transition:opacity .3s linear}.backdrop{position:fixed;inset:0;background:#000;opacity:.5}
.dialog{position:fixed;top:30%;left:50%;transform:translateX(-50%);background:#fff;padding:16px;width:300px}</style>
<h1>Support engineer</h1>
<button onclick="record({ applied: true })">Apply now</button>
<div id="consent"><div class="backdrop fade" id="bd"></div>
  <div class="dialog fade" role="dialog" aria-label="Privacy choices" id="dlg"><p>We use cookies to improve the site.</p><button id="accept">Accept</button></div></div>
<script>
accept.addEventListener("click", () => {
  bd.style.opacity = "0"; dlg.style.opacity = "0"
  bd.addEventListener("transitionend", () => consent.remove(), { once: true })
})
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job.html") })
      await agent.ok("browser.act", { instruction: 'click "Accept"' })
      await agent.ok("browser.act", { instruction: 'click "Apply now"' })
      await agent.expectRecorded([{ applied: true }], "the click after the backdrop faded")
    }
  })
]
