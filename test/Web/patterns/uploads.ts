/**
 * File uploads as application forms build them: a labelled file input, a hidden input behind a styled "Upload your
 * CV" button, a drop zone taking several files, and the same through the grammar and a replayed action; paths outside
 * the upload folders are refused.
 */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

/** Files under the service's working directory (the default upload root). */
const resume = "test/fixtures/uploads/resume.pdf"
const letter = "test/fixtures/uploads/cover-letter.txt"

/** Reports what a file input holds, as a site's upload widget shows it. */
const reportFiles = `<script>
function reportFiles(input) {
  const files = [...input.files].map((f) => ({ name: f.name, size: f.size }))
  document.getElementById("chosen").textContent = files.map((f) => f.name).join(", ")
  return record({ input: input.id, files })
}
</script>`

export const patterns = [
  pattern({
    name: "uploads-labelled-file-input",
    class: "uploads",
    pages: {
      "/apply.html": `<!doctype html><title>Apply — Resume</title>${recordScript}${reportFiles}
<form>
  <label for="resume">Resume</label>
  <input type="file" id="resume" accept=".pdf,.doc,.docx" onchange="reportFiles(this)">
  <p>Selected: <span id="chosen">none</span></p>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      const seen = await agent.ok("browser.observe", { instruction: "Resume" })
      // Observe offers the file input as an upload, not as a button to click.
      const offered = seen.result as ReadonlyArray<Record<string, string>>
      assert.ok(
        offered.some((a) => a.method === "setInputFiles" && /^file upload "Resume"/.test(a.description ?? "")),
        JSON.stringify(offered)
      )
      assert.ok(!offered.some((a) => a.method === "click" && /^button "Resume/.test(a.description ?? "")))
      const uploaded = await agent.ok("browser.upload", { files: [resume], target: "Resume" })
      assert.match(uploaded.result.description, /resume\.pdf/)
      await new Promise((resolve) => setTimeout(resolve, 200))
      agent.expectPage(agent.recorded(), [{ input: "resume", files: [{ name: "resume.pdf", size: 102 }] }])
    }
  }),
  pattern({
    name: "uploads-hidden-input-styled-button",
    class: "uploads",
    pages: {
      "/apply.html": `<!doctype html><title>Apply — upload your CV</title>${recordScript}${reportFiles}
<style>.sr-only { display: none } .btn { padding: 8px 16px; background: #2557a7; color: white; border-radius: 6px }</style>
<input type="file" id="cv" class="sr-only" onchange="reportFiles(this)">
<button type="button" class="btn" onclick="document.getElementById('cv').click()">Upload your CV</button>
<p id="chosen"></p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      const uploaded = await agent.ok("browser.upload", { files: [resume], target: "Upload your CV" })
      assert.match(uploaded.result.description, /resume\.pdf/)
      await new Promise((resolve) => setTimeout(resolve, 200))
      agent.expectPage(agent.recorded(), [{ input: "cv", files: [{ name: "resume.pdf", size: 102 }] }])
    }
  }),
  pattern({
    name: "uploads-dropzone-multiple-files",
    class: "uploads",
    pages: {
      "/documents.html": `<!doctype html><title>Supporting documents</title>${recordScript}${reportFiles}
<style>#zone { border: 2px dashed #999; padding: 40px; text-align: center; cursor: pointer }</style>
<div id="zone" role="button" tabindex="0" onclick="document.getElementById('docs').click()">
  Drag files here or <u>browse</u>
</div>
<input type="file" id="docs" multiple hidden onchange="reportFiles(this)">
<p id="chosen"></p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/documents.html") })
      await agent.ok("browser.upload", { files: [resume, letter], target: "Drag files here or browse" })
      await new Promise((resolve) => setTimeout(resolve, 200))
      agent.expectPage(agent.recorded(), [
        {
          input: "docs",
          files: [
            { name: "resume.pdf", size: 102 },
            { name: "cover-letter.txt", size: 45 }
          ]
        }
      ])
    }
  }),
  pattern({
    name: "uploads-grammar-and-action",
    class: "uploads",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}${reportFiles}
<label>Cover letter <input type="file" id="letter" onchange="reportFiles(this)"></label>
<label>Portfolio <input type="file" id="portfolio" onchange="reportFiles(this)"></label>
<p id="chosen"></p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: `upload "${letter}" to "Cover letter"` })
      await agent.ok("browser.act", {
        action: {
          selector: "css=#portfolio",
          method: "setInputFiles",
          arguments: [resume],
          description: "the portfolio file input"
        }
      })
      await new Promise((resolve) => setTimeout(resolve, 200))
      agent.expectPage(agent.recorded(), [
        { input: "letter", files: [{ name: "cover-letter.txt", size: 45 }] },
        { input: "portfolio", files: [{ name: "resume.pdf", size: 102 }] }
      ])
    }
  }),
  pattern({
    name: "uploads-outside-roots-refused",
    class: "uploads",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}${reportFiles}
<label>Resume <input type="file" id="resume" onchange="reportFiles(this)"></label><p id="chosen"></p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      for (const path of ["/etc/passwd", "../../../../etc/passwd", `test/../../${resume}`]) {
        const refused = await agent.call("browser.upload", { files: [path], target: "Resume" })
        assert.equal(refused.error?.type, "rejected_by_policy", `${path}: ${JSON.stringify(refused.error)}`)
      }
      const viaGrammar = await agent.call("browser.act", { instruction: 'upload "/etc/hostname" to "Resume"' })
      assert.equal(viaGrammar.error?.type, "rejected_by_policy")
      const missing = await agent.call("browser.upload", {
        files: ["test/fixtures/uploads/nope.pdf"],
        target: "Resume"
      })
      assert.equal(missing.error?.type, "invalid_input")
      agent.expectPage(agent.recorded(), [])
    }
  }),
  pattern({
    name: "uploads-button-without-chooser",
    class: "uploads",
    pages: {
      "/apply.html": `<!doctype html><title>Apply by email</title>
<button onclick="document.getElementById('how').hidden = false">Upload your CV</button>
<p id="how" hidden>Please email your CV to jobs@example.com</p>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      // The button shows instructions instead of a file chooser: the agent is told no file was chosen.
      const tried = await agent.call("browser.upload", { files: [resume], target: "Upload your CV" })
      assert.equal(tried.ok, false)
      assert.equal(tried.error?.type, "action_failed")
      assert.match(tried.error?.message ?? "", /no file chooser/)
    }
  })
]
