/**
 * Downloads the way sites serve them: an attachment (Content-Disposition) behind a link, a CSV the page builds as a
 * blob, an offer letter whose link opens a new tab that turns into a download, and a stream that never ends.
 */
import assert from "node:assert/strict"
import { readFileSync, rmSync } from "node:fs"
import { type Answer, pattern } from "../Pattern.ts"

const downloadsOf = (answer: Answer) =>
  (answer.pageEvents ?? []).filter((e) => e.event === "download").map((e) => e.download as Record<string, any>)

/** The files a pattern downloaded are its own to remove (the service keeps downloads for the agent). */
const removeAll = (answer: Answer) => {
  for (const d of answer.state.downloads as Array<Record<string, any>>) {
    if (d.path !== undefined) rmSync(d.path, { force: true })
  }
}

const offerLetter = "%PDF-1.4\n% Offer letter for Ada Lovelace\n%%EOF\n"

const attachment =
  (name: string, body: string, type = "application/pdf") =>
  (_req: unknown, res: import("node:http").ServerResponse) => {
    res.writeHead(200, {
      "content-type": type,
      "content-disposition": `attachment; filename="${name}"`,
      "content-length": Buffer.byteLength(body)
    })
    res.end(body)
  }

/** How many times the slow export was asked for: the site's own record of how many clicks reached it. */
let slowExports = 0
const slowCsv = "name,stage\nAda Lovelace,offer\n"

export const patterns = [
  pattern({
    name: "downloads-content-disposition",
    class: "downloads",
    pages: {
      "/offer.html": `<!doctype html><title>Your offer</title><h1>Congratulations!</h1>
<a href="files/offer?id=8812">Download offer letter</a>`,
      "/files/offer": attachment("Offer letter - Acme.pdf", offerLetter)
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/offer.html") })
      const clicked = await agent.ok("browser.act", { instruction: 'click "Download offer letter"' })
      const [download] = downloadsOf(clicked)
      assert.ok(download, `the click's answer reports the download: ${JSON.stringify(clicked.pageEvents)}`)
      assert.equal(download.state, "completed")
      assert.equal(download.name, "Offer letter - Acme.pdf")
      assert.equal(download.bytes, Buffer.byteLength(offerLetter))
      assert.equal(readFileSync(download.path, "utf8"), offerLetter)
      // The page stays where it was, and the state block lists the download.
      assert.equal(clicked.state.url, agent.url("/offer.html"))
      assert.equal(clicked.state.downloads[0].path, download.path)
      removeAll(clicked)
    }
  }),
  pattern({
    name: "downloads-blob-csv",
    class: "downloads",
    pages: {
      "/applications.html": `<!doctype html><title>My applications</title>
<table><tr><th>Role</th><th>Status</th></tr><tr><td>Backend engineer</td><td>Interview</td></tr></table>
<button onclick="exportCsv()">Export CSV</button>
<script>
function exportCsv() {
  const csv = "role,status\\nBackend engineer,Interview\\n"
  const a = document.createElement("a")
  a.href = URL.createObjectURL(new Blob([csv], { type: "text/csv" }))
  a.download = "applications.csv"
  document.body.appendChild(a)
  a.click()
  a.remove()
}
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/applications.html") })
      const clicked = await agent.ok("browser.act", { instruction: 'click "Export CSV"' })
      const [download] = downloadsOf(clicked)
      assert.ok(download, JSON.stringify(clicked.pageEvents))
      assert.equal(download.name, "applications.csv")
      assert.equal(readFileSync(download.path, "utf8"), "role,status\nBackend engineer,Interview\n")
      // A second export does not overwrite the first.
      const again = await agent.ok("browser.act", { instruction: 'click "Export CSV"' })
      const [second] = downloadsOf(again)
      assert.equal(second?.name, "applications (1).csv")
      assert.equal(again.state.downloads.length, 2)
      removeAll(again)
    }
  }),
  pattern({
    name: "downloads-link-in-new-tab",
    class: "downloads",
    pages: {
      "/documents.html": `<!doctype html><title>Documents</title>
<a href="files/contract" target="_blank">Contract (PDF)</a>`,
      "/files/contract": attachment("contract.pdf", "%PDF-1.4\n% contract\n%%EOF\n")
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/documents.html") })
      const clicked = await agent.ok("browser.act", { instruction: 'click "Contract (PDF)"' })
      const read = await agent.ok("browser.extract", { instruction: "the documents" })
      const [download] = [...downloadsOf(clicked), ...downloadsOf(read)]
      assert.ok(download, JSON.stringify([clicked.pageEvents, read.pageEvents]))
      assert.equal(download.name, "contract.pdf")
      assert.equal(download.state, "completed")
      // The tab the link opened turned into the download and went away: the session is on the documents page.
      assert.equal(read.state.url, agent.url("/documents.html"))
      assert.equal(read.state.tabs.length, 1)
      removeAll(read)
    }
  }),
  pattern({
    name: "downloads-slow-export-clicked-once",
    class: "downloads",
    pages: {
      "/reports.html": `<!doctype html><title>Reports</title><a href="files/pipeline.csv">Export pipeline</a>`,
      "/files/pipeline.csv": (req, res) => {
        // An export the site builds while it streams: its first line at once, the rest 20 s later.
        slowExports++
        res.writeHead(200, {
          "content-type": "text/csv",
          "content-disposition": 'attachment; filename="pipeline.csv"',
          "content-length": Buffer.byteLength(slowCsv)
        })
        const [head, ...rest] = slowCsv.split(/(?<=\n)/)
        res.write(head)
        const later = setTimeout(() => res.end(rest.join("")), 20_000)
        req.on("close", () => clearTimeout(later))
      }
    },
    run: async (agent) => {
      const before = slowExports
      await agent.ok("browser.navigate", { url: agent.url("/reports.html") })
      const clicked = await agent.ok("browser.act", { instruction: 'click "Export pipeline"' })
      assert.equal(slowExports - before, 1, "the site was asked for the export once")
      // The answer says the download is under way; a later answer says it finished.
      const [started] = downloadsOf(clicked)
      assert.ok(started, JSON.stringify(clicked.pageEvents))
      assert.equal(started.name, "pipeline.csv")
      assert.equal(started.state, "in_progress")
      let finished: Record<string, any> | undefined
      while (finished === undefined) {
        const status = await agent.ok("browser.status", {})
        const listed = (status.state.downloads ?? []) as Array<Record<string, any>>
        finished = [...downloadsOf(status), ...listed].find((d) => d.name === "pipeline.csv" && d.state === "completed")
        if (finished === undefined) await new Promise((resolve) => setTimeout(resolve, 500))
      }
      assert.equal(readFileSync(finished.path, "utf8"), slowCsv)
      assert.equal(slowExports - before, 1, "the site was asked for the export once")
      rmSync(finished.path, { force: true })
    }
  }),
  pattern({
    name: "downloads-endless-stream-cancelled",
    class: "downloads",
    pages: {
      "/export.html": `<!doctype html><title>Export</title><a href="files/export.ndjson">Export all candidates</a>`,
      "/files/export.ndjson": (req, res) => {
        // A misbehaving export that streams forever: the size cap must stop it.
        res.writeHead(200, {
          "content-type": "application/x-ndjson",
          "content-disposition": 'attachment; filename="candidates.ndjson"'
        })
        const chunk = Buffer.alloc(1024 * 1024, '{"name":"x"}\n')
        const pump = () => {
          while (res.write(chunk)) {}
        }
        res.on("drain", pump)
        req.on("close", () => res.destroy())
        pump()
      }
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/export.html") })
      const clicked = await agent.ok("browser.act", { instruction: 'click "Export all candidates"' })
      const [download] = downloadsOf(clicked)
      assert.ok(download, JSON.stringify(clicked.pageEvents))
      assert.equal(download.state, "canceled")
      assert.equal(download.error?.type, "download_too_large")
      assert.equal(download.path, undefined)
    }
  })
]
