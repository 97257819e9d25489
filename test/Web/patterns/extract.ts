/** Reading a page the way an agent asks: what was asked for, controls with references, words kept apart. */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

const board = `<!doctype html><title>Acme jobs</title>
<header><a href="/">Acme</a> <a href="#">Sign in</a></header>
<h1>Open positions</h1><p>Join a team of 40 people building trains.</p>
<div class="results">
  <div class="job-card"><h3>Site reliability engineer</h3><span>Remote</span><button>Apply</button></div>
  <div class="job-card"><h3>Machine learning engineer</h3><span>Zurich</span><button>Apply</button></div>
  <div class="job-card"><h3>Technical writer</h3><span>Lisbon</span><button>Apply</button></div>
  <div class="job-card"><h3>Recruiter</h3><span>Remote</span><button>Apply</button></div>
</div>
<footer>© Acme</footer>`

export const patterns = [
  pattern({
    name: "extract-follows-its-instruction",
    class: "extract",
    pages: { "/jobs.html": board },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/jobs.html") })
      const read = await agent.ok("browser.extract", { instruction: "the job titles" })
      assert.deepEqual(read.result.answer, [
        "Site reliability engineer",
        "Machine learning engineer",
        "Technical writer",
        "Recruiter"
      ])
      assert.equal(read.result.text, undefined, "the whole text is not sent when the instruction was answered")
    }
  }),
  pattern({
    name: "extract-keeps-adjacent-buttons-apart",
    class: "extract",
    pages: {
      "/confirm.html": `<!doctype html><title>Confirm</title><p>Submit your application?</p><button>yes</button><button>Ok</button><span>Cancel</span>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/confirm.html") })
      const read = await agent.ok("browser.extract", { instruction: "the buttons" })
      const names = (read.result.answer as Array<{ name: string }>).map((b) => b.name)
      assert.deepEqual(names, ["yes", "Ok"])
      const page = await agent.ok("browser.extract", { instruction: "" })
      assert.doesNotMatch(page.result.text, /yesOk/)
      assert.match(page.result.text, /yes Ok/)
    }
  }),
  pattern({
    name: "extract-lists-controls-with-references",
    class: "extract",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}
<div>Given name</div><input id="g">
<div>Family name</div><input id="f">
<label><input type="checkbox" id="c"> Remote only</label>
<div role="button" tabindex="0" onclick="record({ g: g.value, f: f.value, remote: c.checked })">Continue</div>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      const read = await agent.ok("browser.extract", { instruction: "the form" })
      const controls = read.result.controls as Array<{ ref: string; role: string; name: string }>
      const find = (role: string, name: string) => {
        const found = controls.find((c) => c.role === role && c.name === name)
        assert.ok(found, `no ${role} "${name}" in ${JSON.stringify(controls)}`)
        return found.ref
      }
      await agent.ok("browser.act", { ref: find("textbox", "Given name"), method: "fill", arguments: ["Ada"] })
      await agent.ok("browser.act", { ref: find("textbox", "Family name"), method: "fill", arguments: ["Lovelace"] })
      await agent.ok("browser.act", { ref: find("checkbox", "Remote only"), method: "check" })
      await agent.ok("browser.act", { ref: find("button", "Continue") })
      agent.expectPage(agent.recorded(), [{ g: "Ada", f: "Lovelace", remote: true }])
    }
  })
]
