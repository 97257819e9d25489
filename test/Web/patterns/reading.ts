/**
 * Reading a page whole: a table among other content (HTML, and an ARIA grid of divs as data grids render), a label
 * whose value sits on the next line, a long page whose line near the end is asked for, pagination links side by side.
 * Each page reports what it shows (values drawn when it loads), and the answer is held against that.
 */
import assert from "node:assert/strict"
import { type Agent, pattern, recordScript } from "../Pattern.ts"

type Table = {
  readonly name?: string
  readonly headers: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

/** What the page reported about itself when it loaded. */
const reported = async (agent: Agent, key: string) => {
  await agent.settle()
  const found = agent.recorded().find((r) => key in r)
  assert.ok(found, `the page reported its ${key}`)
  return found[key]
}

/** A table's header cells and rows as the page's own DOM has them (cells in text order). */
const readTable = `<script>
function tableOf(el, rowSel, cellSel) {
  const rows = [...el.querySelectorAll(rowSel)].map((r) => [...r.querySelectorAll(cellSel)].map((c) => c.textContent.trim()))
  return { headers: rows[0], rows: rows.slice(1) }
}
</script>`

const people = ["Priya Raman", "Tomás Ortega", "Mei Chen", "Jonas Berg", "Amara Okafor", "Lena Vogel"]

export const patterns = [
  pattern({
    name: "extract-interview-schedule-table",
    class: "reading",
    pages: {
      // Four interview rounds with times drawn at load, between prose and a second, smaller table.
      "/schedule.html": `<!doctype html><title>Your interview day</title>${recordScript}${readTable}
<h1>Your interview day</h1>
<p>Welcome! Please arrive 15 minutes early and bring an ID. Rooms are on the 3rd floor.</p>
<h2>Interview schedule</h2>
<table id="schedule"><thead><tr><th>Time</th><th>Interviewer</th><th>Topic</th><th>Room</th></tr></thead><tbody id="rounds"></tbody></table>
<h2>Contacts</h2>
<table><tr><th>Role</th><th>Name</th></tr><tr><td>Recruiter</td><td>Sam Patel</td></tr><tr><td>Reception</td><td>+1 555 0100</td></tr></table>
<p>Lunch is at 12:30 in the cafeteria.</p>
<script>
const people = ${JSON.stringify(people)}
const topics = ["Coding", "System design", "Behavioural", "Team fit"]
let minute = 9 * 60 + 15 * Math.floor(Math.random() * 4)
rounds.innerHTML = topics.map((t, i) => {
  const at = String(Math.floor(minute / 60)).padStart(2, "0") + ":" + String(minute % 60).padStart(2, "0"); minute += 60
  return "<tr><td>" + at + "</td><td>" + people[(i * 2 + Math.floor(Math.random() * 2)) % people.length] + "</td><td>" + t + "</td><td>3." + (10 + i) + "</td></tr>"
}).join("")
record({ table: tableOf(schedule, "tr", "th, td") })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/schedule.html") })
      const shown = (await reported(agent, "table")) as Table
      const read = await agent.ok("browser.extract", { instruction: "the interview schedule table" })
      const tables = (read.result.tables ?? []) as ReadonlyArray<Table>
      const table = tables.find((t) => t.headers.includes("Interviewer"))
      agent.expectPage(
        { headers: shown.headers, rows: shown.rows },
        { headers: table?.headers, rows: table?.rows },
        "the schedule table as read"
      )
    }
  }),
  pattern({
    name: "extract-aria-grid-of-divs",
    class: "reading",
    pages: {
      // A data grid as grid libraries render it: divs with table roles; the page is mostly this grid.
      "/invoices.html": `<!doctype html><title>Invoices</title>${recordScript}${readTable}
<style>[role=row]{display:flex}[role=columnheader],[role=cell]{width:140px;padding:4px}</style>
<h1>Invoices</h1>
<div role="table" id="grid" aria-label="Invoices">
  <div role="rowgroup"><div role="row"><div role="columnheader">Invoice</div><div role="columnheader">Customer</div><div role="columnheader">Amount</div><div role="columnheader">Status</div></div></div>
  <div role="rowgroup" id="rows"></div>
</div>
<script>
const people = ${JSON.stringify(people)}
rows.innerHTML = people.map((p, i) =>
  '<div role="row"><div role="cell">INV-' + (1000 + Math.floor(Math.random() * 9000)) + '</div><div role="cell">' + p +
  '</div><div role="cell">€' + (100 + i * 37) + '.00</div><div role="cell">' + (i % 3 === 0 ? "Overdue" : "Paid") + '</div></div>').join("")
record({ table: tableOf(grid, "[role=row]", "[role=columnheader], [role=cell]") })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/invoices.html") })
      const shown = (await reported(agent, "table")) as Table
      const read = await agent.ok("browser.extract", { instruction: "the invoices" })
      const table = ((read.result.tables ?? []) as ReadonlyArray<Table>)[0]
      agent.expectPage(
        { headers: shown.headers, rows: shown.rows },
        { headers: table?.headers, rows: table?.rows },
        "the invoices grid as read"
      )
    }
  }),
  pattern({
    name: "extract-label-and-value-on-next-line",
    class: "reading",
    pages: {
      "/run.html": `<!doctype html><title>Training run 42</title>${recordScript}
<style>.stat{display:inline-block;margin:8px 16px;vertical-align:top}.stat .v{font-size:28px}</style>
<h1>Training run 42</h1>
<div class="stat"><div>Episodes</div><div class="v" id="episodes"></div></div>
<div class="stat"><div>Last reward:</div><div class="v" id="last"></div></div>
<div class="stat"><div>Best reward:</div><div class="v" id="best"></div></div>
<dl><dt>Started</dt><dd id="started"></dd><dt>Owner</dt><dd>ml-platform</dd></dl>
<script>
const r = () => (Math.random() * 2).toFixed(2)
episodes.textContent = String(1000 + Math.floor(Math.random() * 900)); last.textContent = r(); best.textContent = (2 + Math.random()).toFixed(2)
started.textContent = "March " + (1 + Math.floor(Math.random() * 28)) + ", 2026"
record({ shown: { last: last.textContent, best: best.textContent, started: started.textContent } })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/run.html") })
      const shown = (await reported(agent, "shown")) as Record<string, string>
      const lines = async (instruction: string) =>
        JSON.stringify((await agent.ok("browser.extract", { instruction })).result.answer ?? "")
      const reward = await lines("the last reward")
      agent.expectPage(reward.includes(`Last reward: ${shown.last}`), true, `"Last reward: ${shown.last}" in ${reward}`)
      const started = await lines("when the run started")
      agent.expectPage(
        new RegExp(`Started:? ${shown.started}`).test(started),
        true,
        `"Started: ${shown.started}" in ${started}`
      )
    }
  }),
  pattern({
    name: "extract-long-page-line-near-end",
    class: "reading",
    pages: {
      // About 280 KB of text: an audit log, and near its end the line the agent needs, drawn at load.
      "/log.html": `<!doctype html><title>Audit log</title>${recordScript}
<h1>Audit log</h1>
<div id="log">${Array.from(
        { length: 2400 },
        (_, i) =>
          `<p>2026-03-${String((i % 28) + 1).padStart(2, "0")} 10:${String(i % 60).padStart(2, "0")} user${i % 97}@example.com viewed report ${i} of the quarterly compliance archive</p>`
      ).join("\n")}</div>
<p id="near-end"></p>
${Array.from({ length: 12 }, (_, i) => `<p>Footer note ${i}: retained for seven years.</p>`).join("\n")}
<script>
const code = "ZX-" + Math.floor(1000 + Math.random() * 9000) + "-Q"
document.getElementById("near-end").textContent = "Export confirmation number: " + code
record({ code })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/log.html") })
      const code = (await reported(agent, "code")) as string
      const line = `Export confirmation number: ${code}`
      // Asked for, the line is found wherever it is on the page.
      const asked = await agent.ok("browser.extract", { instruction: "the export confirmation number" })
      agent.expectPage(JSON.stringify(asked.result.answer ?? "").includes(line), true, `"${line}" in the answer`)
      // Read whole, the text says it was cut, and the rest can be read from where it stopped.
      let read = await agent.ok("browser.extract", { instruction: "" })
      const total = read.result.truncated?.total as number | undefined
      assert.ok(read.result.truncated, `a cut text says so: ${JSON.stringify({ ...read.result, text: undefined })}`)
      let text = read.result.text as string
      for (let i = 0; i < 30 && read.result.truncated?.nextOffset !== undefined; i++) {
        read = await agent.ok("browser.extract", { instruction: "", offset: read.result.truncated.nextOffset })
        text += read.result.text
      }
      agent.expectPage(text.includes(line), true, `"${line}" in the text read piece by piece`)
      assert.equal(text.length, total, "the pieces add up to the whole text")
    }
  }),
  pattern({
    name: "extract-pagination-links-apart",
    class: "reading",
    pages: {
      // Pagination as components render it: no whitespace between the links, spaced by flex gap or list items.
      "/results.html": `<!doctype html><title>Search results</title>
<style>.pager{display:flex;gap:8px}.pages{list-style:none;padding:0}.pages li{display:inline-block;margin:0 4px}</style>
<h1>312 jobs</h1>
<nav aria-label="Pagination" class="pager"><a href="?p=1" aria-current="page">1</a><a href="?p=2">2</a><a href="?p=3">3</a><a href="?p=2" aria-label="Next page">&gt;</a></nav>
<nav aria-label="Pages"><ul class="pages"><li><a href="?p=1">«</a></li><li><a href="?p=4">4</a></li><li><a href="?p=5">5</a></li><li><a href="?p=6">6</a></li><li><a href="?p=7">»</a></li></ul></nav>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/results.html") })
      const read = await agent.ok("browser.extract", { instruction: "" })
      const text = read.result.text as string
      assert.doesNotMatch(text, /123|456/, `links run together: ${JSON.stringify(text)}`)
      assert.match(text, /1\s+2\s+3\s+>/, JSON.stringify(text))
      assert.match(text, /«\s+4\s+5\s+6\s+»/, JSON.stringify(text))
    }
  })
]
