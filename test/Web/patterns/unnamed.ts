/** Controls without an accessible name, the way hand-written and generated forms leave them. */
import assert from "node:assert/strict"
import { pattern, recordScript } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "unnamed-input-beside-text",
    class: "unnamed",
    pages: {
      "/login.html": `<!doctype html><title>Sign in</title>${recordScript}
<form onsubmit="event.preventDefault(); record({ user: this.elements[0].value }); document.body.append('Welcome')">
  <div>Username</div><input type="text">
  <div>Password</div><input type="password">
  <button>Sign in</button>
</form>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/login.html") })
      await agent.ok("browser.act", { instruction: 'fill "Username" with "ada"' })
      await agent.ok("browser.act", { instruction: 'click "Sign in"' })
      assert.deepEqual(agent.recorded(), [{ user: "ada" }])
    }
  })
]
