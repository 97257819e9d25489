/** Actions that move the page: client-side routes and form posts with redirects; the answer says where it landed. */
import assert from "node:assert/strict"
import { pattern } from "../Pattern.ts"

/** The applications the slow site received: its own record of how many times the form reached it. */
const slowPosts: Array<string> = []

export const patterns = [
  pattern({
    name: "form-post-slow-server-sent-once",
    class: "navigation",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>
<form method="post" action="submit"><label>Email <input name="email"></label><button>Send application</button></form>`,
      "/submit": async (_req, res, body) => {
        // A site that takes 25 s to answer a post (it files the application first).
        slowPosts.push(new URLSearchParams(body).get("email") ?? "")
        await new Promise((r) => setTimeout(r, 25_000))
        res
          .writeHead(200, { "content-type": "text/html" })
          .end("<!doctype html><title>Application received</title><h1>Thank you</h1>")
      }
    },
    run: async (agent) => {
      const before = slowPosts.length
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Email" with "ada@example.com"' })
      const sent = await agent.call("browser.act", { instruction: 'click "Send application"' })
      assert.deepEqual(slowPosts.slice(before), ["ada@example.com"], "the site received the application once")
      assert.ok(sent.ok, `the click went: ${JSON.stringify(sent.error)}`)
      // The page waiting on the site's answer is left to get it: the confirmation comes on the same page.
      const thanked = await agent.call("browser.wait_for", { text: "Thank you", timeoutMs: 45_000 })
      assert.ok(thanked.ok, JSON.stringify(thanked.error))
      assert.equal(thanked.state.title, "Application received")
      assert.deepEqual(slowPosts.slice(before), ["ada@example.com"], "the site received the application once")
    }
  }),
  pattern({
    name: "spa-route-change",
    class: "navigation",
    pages: {
      "/app.html": `<!doctype html><title>Acme careers</title>
<nav><a href="/spa-route-change/app.html/jobs" id="jobs">Jobs</a></nav><main id="view"><h1>Welcome</h1></main>
<script>
jobs.addEventListener("click", (e) => {
  e.preventDefault()
  history.pushState({}, "", jobs.href)
  view.innerHTML = "<p>Loading…</p>"
  fetch("/spa-route-change/jobs.json").then((r) => r.json()).then((jobs) => {
    document.title = "Jobs – Acme careers"
    view.innerHTML = "<h1>Jobs</h1>" + jobs.map((j) => "<a href='#'>" + j + "</a>").join(" ")
  })
})
</script>`,
      "/jobs.json": async (_req, res) => {
        await new Promise((r) => setTimeout(r, 400))
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(["Welder", "Electrician"]))
      }
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/app.html") })
      const moved = await agent.ok("browser.act", { instruction: 'click "Jobs"' })
      assert.equal(moved.result.navigated?.url, agent.url("/app.html/jobs"), JSON.stringify(moved.result))
      assert.equal(moved.result.navigated?.title, "Jobs – Acme careers")
      assert.equal(moved.state.url, agent.url("/app.html/jobs"))
    }
  }),
  pattern({
    // A route that loads its view's code first and asks for its data a moment after the URL changed.
    name: "spa-route-data-asked-late",
    class: "navigation",
    pages: {
      "/app.html": `<!doctype html><title>Acme careers</title>
<nav><a href="/spa-route-data-asked-late/app.html/jobs" id="jobs">Jobs</a></nav><main id="view"><h1>Welcome</h1></main>
<script>
jobs.addEventListener("click", (e) => {
  e.preventDefault()
  history.pushState({}, "", jobs.href)
  view.innerHTML = "<p>Loading…</p>"
  setTimeout(() => fetch("/spa-route-data-asked-late/jobs.json").then((r) => r.json()).then((jobs) => {
    document.title = "Jobs – Acme careers"
    view.innerHTML = "<h1>Jobs</h1>" + jobs.map((j) => "<a href='#'>" + j + "</a>").join(" ")
  }), 100)
})
</script>`,
      "/jobs.json": async (_req, res) => {
        await new Promise((r) => setTimeout(r, 400))
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(["Welder", "Electrician"]))
      }
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/app.html") })
      const moved = await agent.ok("browser.act", { instruction: 'click "Jobs"' })
      assert.equal(moved.result.navigated?.url, agent.url("/app.html/jobs"), JSON.stringify(moved.result))
      assert.equal(moved.result.navigated?.title, "Jobs – Acme careers")
      assert.equal(moved.state.title, "Jobs – Acme careers")
    }
  }),
  pattern({
    name: "form-post-redirect-reported",
    class: "navigation",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>
<form method="post" action="submit"><label>Email <input name="email"></label><button>Send</button></form>`,
      "/submit": (_req, res, body) => {
        const email = new URLSearchParams(body).get("email") ?? ""
        res.writeHead(303, { location: `thanks.html?for=${encodeURIComponent(email)}` }).end()
      },
      "/thanks.html": async (_req, res) => {
        await new Promise((r) => setTimeout(r, 500))
        res
          .writeHead(200, { "content-type": "text/html" })
          .end("<!doctype html><title>Application received</title><h1>Thank you</h1>")
      }
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Email" with "ada@example.com"' })
      const sent = await agent.ok("browser.act", { instruction: 'click "Send"' })
      assert.equal(
        sent.result.navigated?.url,
        agent.url("/thanks.html?for=ada%40example.com"),
        JSON.stringify(sent.result)
      )
      assert.equal(sent.result.navigated?.title, "Application received")
      assert.equal(sent.state.title, "Application received")
    }
  }),
  pattern({
    name: "link-through-redirect-chain",
    class: "navigation",
    pages: {
      // "Apply on company site": a tracking redirect, then the ATS's own redirect to its canonical job URL.
      "/job.html": `<!doctype html><title>Job</title><a href="out?to=ats">Apply on company site</a>`,
      "/out": (_req, res) => void res.writeHead(302, { location: "ats/start" }).end(),
      "/ats/start": (_req, res) =>
        void res.writeHead(301, { location: "/link-through-redirect-chain/ats/jobs/42.html" }).end(),
      "/ats/jobs/42.html": async (_req, res) => {
        await new Promise((r) => setTimeout(r, 1_500))
        res
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end("<!doctype html><title>Job 42 – Apply</title><h1>Apply</h1>")
      }
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job.html") })
      const moved = await agent.ok("browser.act", { instruction: 'click "Apply on company site"' })
      assert.equal(moved.result.navigated?.url, agent.url("/ats/jobs/42.html"), JSON.stringify(moved.result))
      assert.equal(moved.result.navigated?.title, "Job 42 – Apply")
      assert.equal(moved.state.title, "Job 42 – Apply")
    }
  }),
  pattern({
    name: "script-navigation-on-click",
    class: "navigation",
    pages: {
      "/search.html": `<!doctype html><title>Search jobs</title>
<div role="button" tabindex="0" onclick="location.assign('results.html?q=' + encodeURIComponent(document.querySelector('input').value))">Search</div>
<div>Keywords</div><input>`,
      "/results.html": `<!doctype html><title>Results</title><h1>3 jobs</h1>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/search.html") })
      await agent.ok("browser.act", { instruction: 'fill "Keywords" with "rust"' })
      const moved = await agent.ok("browser.act", { instruction: 'click "Search"' })
      assert.equal(moved.result.navigated?.url, agent.url("/results.html?q=rust"))
      assert.equal(moved.result.navigated?.title, "Results")
    }
  })
]
