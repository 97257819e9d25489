/** Content that arrives after the page loads: waited for as a person waits, and a miss still ends in bounded time. */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "button-rendered-after-load",
    class: "late",
    pages: {
      "/job.html": `<!doctype html><title>Senior engineer</title>${recordScript}<h1>Senior engineer</h1><div id="app">Loading…</div>
<script>setTimeout(() => { app.innerHTML = '<button onclick="record({ applied: true })">Apply now</button>' }, 1500)</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job.html") })
      await agent.ok("browser.act", { instruction: 'click "Apply now"' })
      agent.expectPage(agent.recorded(), [{ applied: true }])
    }
  }),
  pattern({
    name: "target-that-never-appears-fails-bounded",
    class: "late",
    pages: {
      "/job.html": `<!doctype html><title>Senior engineer</title><h1>Senior engineer</h1><button>Apply now</button><button>Save</button>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job.html") })
      const started = Date.now()
      const answer = await agent.call("browser.act", { instruction: 'click "Withdraw application"' })
      assert.equal(answer.error?.type, "element_not_found", JSON.stringify(answer))
      assert.ok(Date.now() - started < 20_000, "a miss is answered within the attempt budget")
      const names = ((answer.error?.elements ?? []) as Array<{ name: string }>).map((e) => e.name)
      assert.ok(names.includes("Apply now"), JSON.stringify(answer.error))
    }
  }),
  pattern({
    name: "field-shown-after-a-choice",
    class: "late",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<label>Country <select id="c" onchange="setTimeout(() => { extra.innerHTML = '<label>State or province <input id=s></label>' }, 700)">
<option value="">Choose</option><option>Canada</option><option>Japan</option></select></label>
<div id="extra"></div>
<button onclick="record({ c: c.value, s: document.getElementById('s')?.value })">Continue</button>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'select "Canada" in "Country"' })
      await agent.ok("browser.act", { instruction: 'fill "State or province" with "Ontario"' })
      await agent.ok("browser.act", { instruction: 'click "Continue"' })
      agent.expectPage(agent.recorded(), [{ c: "Canada", s: "Ontario" }])
    }
  }),
  pattern({
    name: "slow-streaming-page",
    class: "late",
    pages: {
      "/slow.html": async (_req, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        res.write(`<!doctype html><title>Search results</title>${recordScript}<h1>Results</h1>`)
        await new Promise((r) => setTimeout(r, 1_200))
        res.end(`<a href="#" onclick="record({ opened: 'analyst' }); return false">Data analyst</a>`)
      }
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/slow.html") })
      await agent.ok("browser.act", { instruction: 'click "Data analyst"' })
      agent.expectPage(agent.recorded(), [{ opened: "analyst" }])
    }
  })
]
