/** Pages that answer with an error status, the way real servers do: the agent is told, and can go on. */
import assert from "node:assert/strict"
import { pattern } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "http-404-page",
    class: "errors",
    pages: {
      "/jobs.html": `<!doctype html><title>Jobs</title><a href="gone.html">Senior engineer</a>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/jobs.html") })
      const gone = await agent.call("browser.navigate", { url: agent.url("/gone.html") })
      assert.equal(gone.ok, true, JSON.stringify(gone.error))
      assert.equal(gone.result.status, 404)
      assert.equal(gone.state.url, agent.url("/gone.html"))
      await agent.ok("browser.act", { instruction: "go back" })
      const read = await agent.ok("browser.extract", { instruction: "the job titles" })
      assert.match(JSON.stringify(read.result), /Senior engineer/)
    }
  }),
  pattern({
    name: "http-500-page",
    class: "errors",
    pages: {
      "/apply.html": (_req, res) => {
        res.writeHead(503, { "content-type": "text/html", "retry-after": "1" })
        res.end("<!doctype html><title>Service unavailable</title><h1>We'll be back soon</h1>")
      }
    },
    run: async (agent) => {
      const answer = await agent.call("browser.navigate", { url: agent.url("/apply.html") })
      assert.equal(answer.ok, true, JSON.stringify(answer.error))
      assert.equal(answer.result.status, 503)
      assert.equal(answer.state.title, "Service unavailable")
    }
  }),
  pattern({
    name: "missing-button-explained",
    class: "errors",
    pages: {
      "/listing.html": `<!doctype html><title>Listing</title><h1>Backend engineer</h1><button>Save job</button>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/listing.html") })
      const miss = await agent.call("browser.act", { instruction: 'click "Withdraw application"' })
      assert.equal(miss.ok, false)
      assert.equal(miss.error?.type, "element_not_found")
      // The error says what is missing; what to do next comes beside it, not in its place.
      assert.match(miss.error?.message ?? "", /Withdraw application/)
      assert.notEqual(miss.message, miss.error?.message)
      assert.equal(miss.state.title, "Listing")
    }
  })
]
