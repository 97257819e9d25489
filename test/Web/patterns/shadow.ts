/** Web components with open shadow roots: labels and inputs inside them, nested roots, read and filled. */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

const components = `<script>
customElements.define("x-field", class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({ mode: "open" })
    root.innerHTML = '<label for="i">' + this.getAttribute("label") + '</label><input id="i">'
  }
  get value() { return this.shadowRoot.querySelector("input").value }
})
customElements.define("x-submit", class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({ mode: "open" })
    root.innerHTML = '<x-inner></x-inner>'
  }
})
customElements.define("x-inner", class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({ mode: "open" })
    root.innerHTML = '<button part="b">Send application</button>'
    root.querySelector("button").addEventListener("click", () =>
      record({ email: document.querySelector("x-field[label='Work email']").value }))
  }
})
</script>`

export const patterns = [
  pattern({
    name: "shadow-label-and-input-in-one-root",
    class: "shadow",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}${components}
<x-field label="Work email"></x-field><x-field label="Personal website"></x-field><x-submit></x-submit>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Work email" with "ada@acme.test"' })
      await agent.ok("browser.act", { instruction: 'click "Send application"' })
      agent.expectPage(agent.recorded(), [{ email: "ada@acme.test" }])
    }
  }),
  pattern({
    name: "shadow-controls-extracted-with-references",
    class: "shadow",
    pages: {
      "/apply.html": `<!doctype html><title>Apply</title>${recordScript}${components}
<x-field label="Work email"></x-field><x-submit></x-submit>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/apply.html") })
      await agent.ok("browser.act", { instruction: 'fill "Work email" with "ada@acme.test"' })
      const read = await agent.ok("browser.extract", { instruction: "the form" })
      const field = (read.result.fields as Array<{ label: string; value: string }>).find(
        (f) => f.label === "Work email"
      )
      assert.equal(field?.value, "ada@acme.test")
      const button = (read.result.controls as Array<{ ref: string; name: string }>).find(
        (c) => c.name === "Send application"
      )
      assert.ok(button, JSON.stringify(read.result.controls))
      await agent.ok("browser.act", { ref: button.ref })
      agent.expectPage(agent.recorded(), [{ email: "ada@acme.test" }])
    }
  })
]
