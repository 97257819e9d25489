/**
 * Tabs the way sites open them: a job board's "Apply on company site" link (`target=_blank`), an apply button that
 * asks the server for the ATS URL and then calls `window.open`, an OAuth-style sign-in popup that closes itself, and
 * an agent that goes back to an earlier tab and closes the ones it is done with.
 */
import assert from "node:assert/strict"
import { type Answer, pattern, recordScript } from "../Pattern.ts"

const applyForm = `<!doctype html><title>Acme Careers — Apply</title>${recordScript}
<h1>Apply: Backend engineer</h1>
<form onsubmit="event.preventDefault(); record({ name: document.getElementById('n').value }).then(() => { document.body.innerHTML = '<h1>Application received</h1>' })">
  <label for="n">Full name</label> <input id="n" name="name">
  <button type="submit">Submit application</button>
</form>`

const events = (answer: Answer) => answer.pageEvents ?? []
const active = (answer: Answer) => (answer.state.tabs as Array<Record<string, any>>).find((t) => t.active)

export const patterns = [
  pattern({
    name: "tabs-apply-on-company-site",
    class: "tabs",
    pages: {
      "/job.html": `<!doctype html><title>Backend engineer at Acme — JobBoard</title>
<main><h1>Backend engineer</h1><p>Acme · Remote</p>
<a class="btn btn-primary" href="apply.html" target="_blank" rel="noopener">Apply on company site</a></main>`,
      "/apply.html": applyForm
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job.html") })
      const clicked = await agent.ok("browser.act", { instruction: 'click "Apply on company site"' })
      const opened = events(clicked).find((e) => e.event === "tab_opened")
      assert.ok(opened, `the answer says a tab opened: ${JSON.stringify(clicked)}`)
      assert.equal(clicked.state.url, agent.url("/apply.html"))
      assert.equal(clicked.state.tabs.length, 2)
      assert.equal(active(clicked)?.index, 1)
      await agent.ok("browser.act", { instruction: 'fill "Full name" with "Ada Lovelace"' })
      const sent = await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      assert.equal(sent.state.url, agent.url("/apply.html"))
      agent.expectPage(agent.recorded(), [{ name: "Ada Lovelace" }])
      // Back to the listing: the job board's tab is still there.
      const back = await agent.ok("browser.tabs", { action: "switch", tab: 0 })
      assert.equal(back.state.url, agent.url("/job.html"))
      const read = await agent.ok("browser.extract", { instruction: "the job title" })
      assert.match(JSON.stringify(read.result), /Backend engineer/)
    }
  }),
  pattern({
    name: "tabs-window-open-after-fetch",
    class: "tabs",
    pages: {
      "/listing.html": `<!doctype html><title>Jobs — Listing</title>
<h1>Data analyst</h1>
<button id="apply" onclick="apply()">Apply now</button>
<script>
async function apply() {
  // Like an aggregator asking for the tracking redirect before opening the ATS.
  const res = await fetch("ats-url.json")
  const { url } = await res.json()
  window.open(url, "_blank")
}
</script>`,
      "/ats-url.json": (_req, res) => {
        setTimeout(() => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ url: "apply.html?source=board" }))
        }, 300)
      },
      "/apply.html": applyForm
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/listing.html") })
      const clicked = await agent.ok("browser.act", { instruction: 'click "Apply now"' })
      // The tab opens after the fetch, while the agent reads the click's answer (a model takes a second or more);
      // the next answer says so and works on it.
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      const next = await agent.ok("browser.observe", { instruction: "Full name" })
      const opened = [...events(clicked), ...events(next)].find((e) => e.event === "tab_opened")
      assert.ok(opened, "an answer says the tab opened")
      assert.equal(next.state.url, agent.url("/apply.html?source=board"))
      assert.equal(active(next)?.title, "Acme Careers — Apply")
      await agent.ok("browser.act", { instruction: 'fill "Full name" with "Grace Hopper"' })
      await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      agent.expectPage(agent.recorded(), [{ name: "Grace Hopper" }])
    }
  }),
  pattern({
    name: "tabs-oauth-popup",
    class: "tabs",
    pages: {
      "/login.html": `<!doctype html><title>Sign in — Acme ATS</title>${recordScript}
<h1>Sign in to apply</h1>
<button onclick="window.open('authorize.html', 'oauth', 'width=480,height=640')">Continue with IdentityHub</button>
<p id="who">Not signed in</p>
<script>
window.addEventListener("message", (e) => {
  if (e.data && e.data.user) {
    document.getElementById("who").textContent = "Signed in as " + e.data.user
    record({ user: e.data.user })
  }
})
</script>`,
      "/authorize.html": `<!doctype html><title>IdentityHub — Authorize Acme ATS</title>
<h1>Acme ATS wants to know your name and email</h1>
<button onclick="window.opener.postMessage({ user: 'ada@example.com' }, '*'); window.close()">Authorize</button>
<button onclick="window.close()">Cancel</button>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/login.html") })
      const popup = await agent.ok("browser.act", { instruction: 'click "Continue with IdentityHub"' })
      assert.equal(popup.state.url, agent.url("/authorize.html"))
      assert.equal(popup.state.tabs.length, 2)
      const authorized = await agent.call("browser.act", { instruction: 'click "Authorize"' })
      // The popup closed itself: the session is back on the page that opened it.
      const after = authorized.ok ? authorized : await agent.ok("browser.extract", { instruction: "who is signed in" })
      assert.equal(after.state.url, agent.url("/login.html"), JSON.stringify(authorized))
      assert.equal(after.state.tabs.length, 1)
      const read = await agent.ok("browser.extract", { instruction: "who is signed in" })
      assert.match(JSON.stringify(read.result), /Signed in as ada@example\.com/)
      agent.expectPage(agent.recorded(), [{ user: "ada@example.com" }])
    }
  }),
  pattern({
    name: "tabs-list-switch-close",
    class: "tabs",
    pages: {
      "/results.html": `<!doctype html><title>Search results — 3 jobs</title>
<ul>
  <li><a href="job-a.html" target="_blank">Platform engineer</a></li>
  <li><a href="job-b.html" target="_blank">Site reliability engineer</a></li>
</ul>`,
      "/job-a.html": `<!doctype html><title>Platform engineer</title><h1>Platform engineer</h1><p>Salary: 120k</p>`,
      "/job-b.html": `<!doctype html><title>Site reliability engineer</title><h1>SRE</h1><p>Salary: 130k</p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/results.html") })
      await agent.ok("browser.act", { instruction: 'click "Platform engineer"' })
      await agent.ok("browser.tabs", { action: "switch", tab: 0 })
      const second = await agent.ok("browser.act", { instruction: 'click "Site reliability engineer"' })
      assert.equal(second.state.url, agent.url("/job-b.html"))
      const listed = await agent.ok("browser.tabs", { action: "list" })
      assert.deepEqual(
        listed.result.tabs.map((t: Record<string, unknown>) => [t.index, t.title, t.active]),
        [
          [0, "Search results — 3 jobs", false],
          [1, "Platform engineer", false],
          [2, "Site reliability engineer", true]
        ]
      )
      // Switching by id, then closing the active tab: the previous active tab (job B) is active again.
      const platform = listed.result.tabs[1].id as string
      const onA = await agent.ok("browser.tabs", { action: "switch", tab: platform })
      assert.equal(onA.state.url, agent.url("/job-a.html"))
      const closed = await agent.ok("browser.tabs", { action: "close" })
      assert.equal(closed.state.url, agent.url("/job-b.html"))
      assert.equal(closed.result.tabs.length, 2)
      const read = await agent.ok("browser.extract", { instruction: "the salary" })
      assert.match(JSON.stringify(read.result), /130k/)
      const unknown = await agent.call("browser.tabs", { action: "switch", tab: 7 })
      assert.equal(unknown.error?.type, "invalid_input")
    }
  })
]
