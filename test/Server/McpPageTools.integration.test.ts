/**
 * The page tools through the official MCP client on a real service, read back from what the site itself received:
 * the outline's references are the ones extract hands out and act accepts; one batch fill sets every kind of field
 * (multi-select and file too), answers each field's outcome, and a field that fails stops it before the submit; a
 * state saved once is loaded into a running session, and every session of a service started from its name is logged in.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import * as RecordingSite from "../fixtures/RecordingSite.ts"
import { stdioClient } from "../support/McpClient.ts"
import { stopServices } from "../support/Service.ts"

afterEach(stopServices)

// The page posts what its form holds as JSON: every option of the multi-select, the file's name and text.
const apply = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Apply</title></head>
<body><main>
<form id="f" aria-label="Apply">
  <label for="name">Full name</label><input id="name" name="name">
  <label for="plan">Plan</label>
  <select id="plan" name="plan"><option value="">Choose…</option><option value="free">Free</option><option value="pro">Pro</option></select>
  <label for="skills">Skills</label>
  <select id="skills" name="skills" multiple size="4"><option value="ts">TypeScript</option><option value="go">Go</option><option value="sql">SQL</option><option value="rust">Rust</option></select>
  <fieldset><legend>Billing</legend>
    <label><input type="radio" name="billing" value="monthly"> Monthly</label>
    <label><input type="radio" name="billing" value="yearly"> Yearly</label>
  </fieldset>
  <label for="start">Start date</label><input id="start" name="start" type="date">
  <label for="cv">Cover letter</label><input id="cv" name="cv" type="file">
  <label><input type="checkbox" name="terms"> I agree to the terms</label>
  <button>Send application</button>
</form>
<p role="status" id="result"></p>
</main>
<script>
  document.getElementById("f").addEventListener("submit", async (event) => {
    event.preventDefault()
    const data = new FormData(event.target)
    const file = data.get("cv")
    const body = {
      name: data.get("name"), plan: data.get("plan"), skills: data.getAll("skills"), billing: data.get("billing"),
      start: data.get("start"), terms: data.get("terms"),
      cv: file && file.name ? { name: file.name, text: (await file.text()).trim() } : null
    }
    await fetch("/api/apply", { method: "POST", body: JSON.stringify(body) })
    document.getElementById("result").textContent = "Thanks, " + body.name
  })
</script>
</body></html>`

const pages: Record<string, string | RecordingSite.Handler> = {
  "/apply": apply,
  "/api/apply": "{}",
  "/login": (_req, res) =>
    res
      .writeHead(200, { "content-type": "text/html", "set-cookie": "sid=s3cret-session; HttpOnly; Path=/" })
      .end("<title>Signed in</title><script>localStorage.setItem('theme', 'dark')</script>"),
  "/home": `<!doctype html><title>Home</title><script>
    fetch("/api/storage", { method: "POST", body: JSON.stringify({ theme: localStorage.getItem("theme") }) })
  </script>`,
  "/api/storage": "{}",
  // The same message written three times in one go, as a page that warns once per item does.
  "/repeat": `<!doctype html><title>Repeat</title><script>
    for (let i = 0; i < 3; i++) console.warn("retrying")
    console.log("done")
  </script>`
}

const storeDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-store-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

interface Answer {
  readonly isError: boolean
  readonly result: Record<string, unknown>
  readonly error: { readonly type: string; readonly message: string }
}

const callTool = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })).pipe(
    Effect.map((answer): Answer => {
      const text = (answer.content as ReadonlyArray<{ type: string; text?: string }>).find((c) => c.type === "text")
      const parsed = JSON.parse(text?.text ?? "{}") as { result?: Record<string, unknown>; error?: Answer["error"] }
      return {
        isError: answer.isError === true,
        result: (answer.structuredContent as { result?: Record<string, unknown> } | undefined)?.result ?? {},
        error: parsed.error ?? { type: "", message: "" }
      }
    })
  )
const call = <A>(client: Client, name: string, args: Record<string, unknown>) =>
  callTool(client, name, args).pipe(
    Effect.map((answer) => {
      if (answer.isError) throw new Error(`${name} failed: ${JSON.stringify(answer.error).slice(0, 1_500)}`)
      return answer.result as A
    })
  )

/** The reference the outline gives the element on a line matching `role "name"`. */
const refOf = (outline: string, role: string, name: string) => {
  const line = outline.split("\n").find((l) => l.includes(`${role} "${name}"`) && l.includes("[ref="))
  const ref = /\[ref=(\w+)\]/.exec(line ?? "")?.[1]
  if (ref === undefined) throw new Error(`no ${role} "${name}" with a reference in:\n${outline}`)
  return ref
}

interface Control {
  readonly ref: string
  readonly role: string
  readonly name: string
}

describe("page tools over MCP", () => {
  it.live(
    "the outline's references are extract's; one fill sets every kind of field, says each outcome, and stops before the submit on a failure",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const client = yield* stdioClient({ SWITCHYARD_WARM_BROWSERS: "0" })
        yield* call(client, "browser_navigate", { url: site.url("/apply") })

        // One element model: the outline and extract hand out the same reference for each control.
        const outline = (yield* call<{ snapshot: string }>(client, "browser_snapshot", {})).snapshot
        const facts = yield* call<{ controls: ReadonlyArray<Control> }>(client, "browser_extract", {})
        for (const [role, name] of [
          ["textbox", "Full name"],
          ["combobox", "Plan"],
          ["listbox", "Skills"],
          ["checkbox", "I agree to the terms"]
        ] as const) {
          const control = facts.controls.find((c) => c.role === role && c.name === name)
          assert.strictEqual(refOf(outline, role, name), control?.ref, `${role} "${name}"`)
        }

        // A field that fails (an option the dropdown does not have): the field before it is done, nothing after it,
        // nothing sent.
        const refused = yield* callTool(client, "browser_fill_form", {
          fields: [
            { target: "Full name", value: "Grace Hopper" },
            { target: "Plan", value: "Enterprise" },
            { target: "I agree to the terms", value: true }
          ],
          submit: "Send application"
        })
        assert.isTrue(refused.isError)
        assert.include(refused.error.message, 'field 2 of 3 ("Plan")')
        assert.include(refused.error.message, "nothing was submitted")
        assert.lengthOf(site.to("/api/apply"), 0, "the site got nothing")
        const form = (yield* call<{ snapshot: string }>(client, "browser_snapshot", { find: "form" })).snapshot
        assert.match(form, /textbox "Full name" \[ref=\w+\]: Grace Hopper/)
        assert.match(form, /checkbox "I agree to the terms" \[ref=\w+\]\n/, "the terms were not checked")

        // Every kind at once, by label: text, dropdown, multi-select, radio group, date, file, checkbox.
        const filled = yield* call<{
          fields: ReadonlyArray<{ field: string; description: string; target?: Record<string, unknown> }>
          submitted?: { description: string }
        }>(client, "browser_fill_form", {
          fields: [
            { target: "Full name", value: "Ada Lovelace" },
            { target: "Plan", value: "Pro" },
            { target: "Skills", value: ["TypeScript", "SQL"] },
            { target: "Billing", value: "Yearly" },
            { target: "Start date", value: "2026-03-15" },
            { target: "Cover letter", value: "test/fixtures/uploads/cover-letter.txt", type: "file" },
            { target: "I agree to the terms", value: true }
          ],
          submit: "Send application"
        })
        assert.deepStrictEqual(
          filled.fields.map((f) => f.field),
          ["Full name", "Plan", "Skills", "Billing", "Start date", "Cover letter", "I agree to the terms"]
        )
        for (const f of filled.fields) assert.isNotEmpty(f.description, f.field)
        assert.isDefined(filled.submitted)
        const sent = site.to("/api/apply")
        assert.lengthOf(sent, 1)
        const body = JSON.parse(sent[0]!.body) as Record<string, unknown>
        assert.deepInclude(body, {
          name: "Ada Lovelace",
          plan: "pro",
          skills: ["ts", "sql"],
          billing: "yearly",
          start: "2026-03-15",
          terms: "on"
        })
        assert.strictEqual((body.cv as { name: string } | null)?.name, "cover-letter.txt")
        yield* call(client, "browser_wait_for", { text: "Thanks, Ada Lovelace" })
      }),
    180_000
  )

  it.live(
    "a saved state loaded into a running session, and SWITCHYARD_STORAGE_STATE starting every session logged in",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const dir = yield* storeDir
        const keyed = {
          SWITCHYARD_STORE: join(dir, "store.db"),
          SWITCHYARD_STORAGE_KEY: "correct horse battery staple"
        }
        // What /home's page posted the `index`th time (from 0), once the site has that post; none within 5 s fails.
        const storagePost = (index: number) =>
          Effect.gen(function* () {
            for (let i = 0; i < 100 && site.to("/api/storage").length <= index; i++) yield* Effect.sleep("50 millis")
            const post = site.to("/api/storage")[index]
            if (post === undefined) {
              return assert.fail(
                `expected at least ${index + 1} posts to /api/storage within 5 s, got ${site.to("/api/storage").length}`
              )
            }
            return JSON.parse(post.body) as Record<string, unknown>
          })

        const first = yield* stdioClient(keyed)
        yield* call(first, "browser_navigate", { url: site.url("/login") })
        yield* call(first, "browser_storage", { action: "save", name: "acme" })
        yield* call(first, "browser_cookies", { action: "clear" })
        yield* call(first, "browser_navigate", { url: site.url("/home") })
        assert.notInclude(site.to("/home").at(-1)?.cookie, "sid=", "cleared: logged out")

        // Loaded into the running session: the next visit is logged in.
        const loaded = yield* call<{ loaded: { name: string; cookies: number } }>(first, "browser_storage", {
          action: "load",
          name: "acme"
        })
        assert.deepInclude(loaded.loaded, { name: "acme", cookies: 1 })
        assert.notInclude(JSON.stringify(loaded), "s3cret")
        yield* call(first, "browser_navigate", { url: site.url("/home") })
        assert.include(site.to("/home").at(-1)?.cookie, "sid=s3cret-session")
        // /home posted three times here (the visit logged out, the load bringing the page back, the visit after it),
        // all before this service closes, so none of them is taken for the new service's post.
        assert.deepStrictEqual(yield* storagePost(2), { theme: "dark" })
        yield* Effect.promise(() => first.close())

        // The operator names the state: a new service's sessions start from it without being told.
        const later = yield* stdioClient({ ...keyed, SWITCHYARD_STORAGE_STATE: "acme" })
        const before = site.to("/api/storage").length
        yield* call(later, "browser_navigate", { url: site.url("/home") })
        assert.include(site.to("/home").at(-1)?.cookie, "sid=s3cret-session")
        // The new service's page itself read the saved localStorage: its own post, not an earlier one.
        assert.deepStrictEqual(yield* storagePost(before), { theme: "dark" })
      }),
    180_000
  )

  it.live(
    "the console keeps a message the page wrote several times in a row as often as it was written",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const client = yield* stdioClient({ SWITCHYARD_WARM_BROWSERS: "0" })
        yield* call(client, "browser_navigate", { url: site.url("/repeat") })
        yield* call(client, "browser_wait_for", { timeMs: 200 })
        const logged = yield* call<{ messages: ReadonlyArray<{ kind: string; text: string }> }>(
          client,
          "browser_console",
          {}
        )
        assert.deepStrictEqual(
          logged.messages.filter((m) => m.kind === "console").map((m) => m.text),
          ["retrying", "retrying", "retrying", "done"]
        )
      }),
    120_000
  )
})
