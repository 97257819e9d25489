/** Widgets that watch the pointer and the keyboard the way a person uses them. */
import { pattern, recordScript } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "hover-intent-mega-menu",
    class: "pointer",
    pages: {
      // Like hover-intent menus: a pointer that merely appears over the trigger does not open it; one that moves
      // across it and rests does.
      "/home.html": `<!doctype html><title>Acme</title>${recordScript}
<style>body{margin:0}#nav{position:relative;width:240px}#trigger{display:block;width:220px;height:40px;background:#eee}
#menu{position:absolute;top:40px;left:0;background:#fff;border:1px solid #ccc}#menu a{display:block;padding:8px}</style>
<nav id="nav"><span id="trigger">Careers</span>
<div id="menu" hidden><a href="#" onclick="record({ team: 'Engineering' }); return false">Engineering</a>
<a href="#" onclick="record({ team: 'Design' }); return false">Design</a></div></nav>
<script>
let moves = 0, rest
trigger.addEventListener("mouseenter", () => { moves = 0 })
trigger.addEventListener("mousemove", () => {
  moves++
  clearTimeout(rest)
  rest = setTimeout(() => { if (moves >= 2) menu.hidden = false }, 100)
})
nav.addEventListener("mouseleave", () => { clearTimeout(rest); menu.hidden = true })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/home.html") })
      await agent.ok("browser.act", { instruction: 'hover "Careers"' })
      await agent.ok("browser.act", { instruction: 'click "Engineering"' })
      agent.expectPage(agent.recorded(), [{ team: "Engineering" }])
    }
  }),
  pattern({
    name: "autocomplete-picks-what-was-asked",
    class: "pointer",
    pages: {
      // Like downshift/react-select: suggestions follow keystrokes (keyup), and the pointer highlights an option
      // only once it moves over the list, so a list that opens under a resting pointer keeps the first option.
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<label for="city">City</label>
<input id="city" role="combobox" aria-autocomplete="list" aria-controls="list" aria-expanded="false" autocomplete="off">
<ul id="list" role="listbox" hidden style="list-style:none;padding:0;width:200px"></ul>
<script>
const cities = ["Bergen", "Berlin", "Bern", "Bordeaux"]
let shown = [], active = 0, still = true
city.addEventListener("keyup", () => {
  const typed = city.value.toLowerCase()
  shown = typed === "" ? [] : cities.filter((c) => c.toLowerCase().startsWith(typed))
  active = 0
  still = true
  list.innerHTML = shown.map((c, i) => '<li role="option" style="padding:6px" aria-selected="' + (i === 0) + '">' + c + '</li>').join("")
  list.hidden = shown.length === 0
  city.setAttribute("aria-expanded", String(!list.hidden))
})
list.addEventListener("mousemove", (e) => {
  if (still) { still = false; return }
  const li = e.target.closest("li")
  if (!li) return
  active = [...list.children].indexOf(li)
  for (const o of list.children) o.setAttribute("aria-selected", String(o === li))
})
list.addEventListener("mousedown", (e) => {
  e.preventDefault()
  city.value = shown[active]
  list.hidden = true
  record({ city: city.value })
})
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "City" with "Ber"' })
      await agent.ok("browser.act", { instruction: 'click "Berlin"' })
      agent.expectPage(agent.recorded(), [{ city: "Berlin" }])
    }
  }),
  pattern({
    name: "controlled-input-keeps-typed-value",
    class: "pointer",
    pages: {
      // A controlled input whose state follows key events (as older form libraries bind value on keyup): the
      // value shown is re-rendered from that state on every input event.
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<label>Years of experience <input id="years" inputmode="numeric"></label>
<button onclick="record({ years: state })">Next</button>
<script>
let state = ""
years.addEventListener("keyup", () => { state = years.value.replace(/[^0-9]/g, "") })
years.addEventListener("input", () => { queueMicrotask(() => { if (!/^[0-9]*$/.test(years.value)) years.value = state }) })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Years of experience" with "12"' })
      await agent.ok("browser.act", { instruction: 'click "Next"' })
      agent.expectPage(agent.recorded(), [{ years: "12" }])
    }
  })
]
