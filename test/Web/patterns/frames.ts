/** Forms and listings inside iframes, the way job boards embed them: same-origin and another site's frame. */
import assert from "node:assert/strict"
import type { IncomingMessage, ServerResponse } from "node:http"
import { pattern, recordScript } from "../Pattern.ts"

/** The same server under another site name (`localhost` vs `127.0.0.1`): Chromium puts its frame in another process. */
const otherSite = (req: IncomingMessage, path: string) =>
  `http://localhost:${(req.headers.host ?? "").split(":")[1]}${path}`

const html = (res: ServerResponse, body: string) =>
  void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body)

const applicationForm = `<!doctype html><title>Application</title>${recordScript}
<h2>Apply for Staff engineer</h2>
<form onsubmit="event.preventDefault(); record({ name: this.name.value, email: this.email.value }); document.body.innerHTML = '<p>Thanks, application received</p>'">
  <label>First and last name <input name="name"></label>
  <div>Email</div><input name="email">
  <button>Submit application</button>
</form>`

export const patterns = [
  pattern({
    name: "same-origin-iframe-form",
    class: "frames",
    pages: {
      "/careers.html": `<!doctype html><title>Careers at Acme</title><h1>Careers</h1>
<iframe src="embed.html" title="Job application" width="600" height="300"></iframe>`,
      "/embed.html": applicationForm
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/careers.html") })
      await agent.ok("browser.act", { instruction: 'fill "First and last name" with "Ada Lovelace"' })
      await agent.ok("browser.act", { instruction: 'fill "Email" with "ada@example.com"' })
      await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      agent.expectPage(agent.recorded(), [{ name: "Ada Lovelace", email: "ada@example.com" }])
    }
  }),
  pattern({
    name: "cross-origin-iframe-form",
    class: "frames",
    pages: {
      "/careers.html": (req, res) =>
        html(
          res,
          `<!doctype html><title>Careers at Acme</title><h1>Careers</h1>
<iframe src="${otherSite(req, "/cross-origin-iframe-form/embed.html")}" title="Job application" width="600" height="300"></iframe>`
        ),
      "/embed.html": applicationForm
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/careers.html") })
      const seen = await agent.ok("browser.observe", { instruction: "all controls" })
      const email = (seen.result as Array<{ selector: string; description: string }>).find((a) =>
        a.description.startsWith('textbox "Email"')
      )
      assert.ok(email, `observe saw no Email textbox in the frame: ${JSON.stringify(seen.result)}`)
      assert.match(email.description, /in iframe "Job application"/)
      await agent.ok("browser.act", { action: { ...email, method: "fill", arguments: ["ada@example.com"] } })
      await agent.ok("browser.act", { instruction: 'fill "First and last name" with "Ada Lovelace"' })
      await agent.ok("browser.act", { instruction: 'click "Submit application"' })
      agent.expectPage(agent.recorded(), [{ name: "Ada Lovelace", email: "ada@example.com" }])
      const read = await agent.ok("browser.extract", { instruction: "the page" })
      assert.match(read.result.text, /application received/)
    }
  }),
  pattern({
    name: "iframe-job-listing-extract",
    class: "frames",
    pages: {
      "/jobs.html": (req, res) =>
        html(
          res,
          `<!doctype html><title>Open roles</title><h1>Open roles</h1>
<iframe src="${otherSite(req, "/iframe-job-listing-extract/board.html")}" title="Job board" width="600" height="400"></iframe>`
        ),
      "/board.html": `<!doctype html><title>Board</title><ul class="jobs">
<li class="job"><a href="#1">Platform engineer</a><span>Remote</span></li>
<li class="job"><a href="#2">Security analyst</a><span>Berlin</span></li>
<li class="job"><a href="#3">Product designer</a><span>Paris</span></li></ul>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/jobs.html") })
      const read = await agent.ok("browser.extract", { instruction: "the job titles" })
      assert.deepEqual(read.result.answer, ["Platform engineer", "Security analyst", "Product designer"])
      const links = (read.result.controls as Array<{ role: string; name: string; frame?: string }>).filter(
        (c) => c.role === "link"
      )
      assert.equal(links.length, 3)
      assert.ok(links.every((l) => l.frame !== undefined))
    }
  })
]
