/** Several elements answer to one name: exact case, nesting and references decide, as a person would. */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "exact-case-quote-wins",
    class: "ambiguity",
    pages: {
      "/confirm.html": `<!doctype html><title>Confirm</title>${recordScript}
<div role="button" tabindex="0" onclick="record({ pressed: 'Ok' })">Ok</div>
<button onclick="record({ pressed: 'ok' })">ok</button>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/confirm.html") })
      await agent.ok("browser.act", { instruction: 'click "ok"' })
      await agent.ok("browser.act", { instruction: 'click "Ok"' })
      agent.expectPage(agent.recorded(), [{ pressed: "ok" }, { pressed: "Ok" }])
    }
  }),
  pattern({
    name: "tab-whose-label-is-a-link",
    class: "ambiguity",
    pages: {
      "/job.html": `<!doctype html><title>Senior engineer</title>${recordScript}
<div role="tablist">
  <div role="tab" aria-selected="true" id="t1"><a href="#overview">Overview</a></div>
  <div role="tab" aria-selected="false" id="t2"><a href="#benefits">Benefits</a></div>
</div>
<div id="panel">Overview text</div>
<script>
for (const tab of document.querySelectorAll("[role=tab]")) tab.addEventListener("click", (e) => {
  e.preventDefault()
  for (const t of document.querySelectorAll("[role=tab]")) t.setAttribute("aria-selected", String(t === tab))
  panel.textContent = tab.textContent.trim() + " text"
  record({ tab: tab.textContent.trim() })
})
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job.html") })
      await agent.ok("browser.act", { instruction: 'click "Benefits"' })
      agent.expectPage(agent.recorded(), [{ tab: "Benefits" }])
    }
  }),
  pattern({
    name: "ambiguous-target-lists-references",
    class: "ambiguity",
    pages: {
      "/board.html": `<!doctype html><title>Jobs</title>${recordScript}
<ul>
  <li><h3>Backend engineer</h3><button onclick="record({ job: 'backend' })">Apply</button></li>
  <li><h3>Frontend engineer</h3><button onclick="record({ job: 'frontend' })">Apply</button></li>
</ul>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/board.html") })
      const answer = await agent.call("browser.act", { instruction: 'click "Apply"' })
      assert.equal(answer.ok, false)
      assert.equal(answer.error?.type, "ambiguous_target")
      const elements = answer.error?.elements as Array<{ ref: string; role: string; name: string }>
      assert.equal(elements?.length, 2, JSON.stringify(answer.error))
      assert.deepEqual(
        elements.map((e) => [e.role, e.name]),
        [
          ["button", "Apply"],
          ["button", "Apply"]
        ]
      )
      agent.expectPage(agent.recorded(), [], "nothing is clicked on an ambiguous target")
      await agent.ok("browser.act", { ref: elements[1]!.ref })
      agent.expectPage(agent.recorded(), [{ job: "frontend" }])
    }
  })
]
