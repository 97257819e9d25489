/**
 * browser.snapshot, browser.fill_form and browser.wait_for through the real service (JSON-RPC), on pages that record
 * what happened: the outline's references are the ones act accepts (frames and shadow roots too), its byte budget
 * says what it left out and find opens it, since shows only what changed; a batch fill reaches the site as a person's
 * would and stops before submitting at a field that is not there; waits end when the page shows what was asked.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as RecordingSite from "../fixtures/RecordingSite.ts"
import { type Service, startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const signup = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign up</title></head>
<body>
<header><nav aria-label="Main"><a href="/">Home</a> <a href="/pricing">Pricing</a></nav></header>
<main>
<h1>Create your account</h1>
<form id="f" aria-label="Sign up">
  <label for="name">Full name</label><input id="name" name="name">
  <label for="email">Work email</label><input id="email" name="email" type="email">
  <label for="plan">Plan</label>
  <select id="plan" name="plan"><option value="">Choose…</option><option value="free">Free</option><option value="pro">Pro</option></select>
  <fieldset><legend>Billing</legend>
    <label><input type="radio" name="billing" value="monthly"> Monthly</label>
    <label><input type="radio" name="billing" value="yearly"> Yearly</label>
  </fieldset>
  <label for="start">Start date</label><input id="start" name="start" type="date">
  <label><input type="checkbox" name="terms"> I agree to the terms</label>
  <button>Create account</button>
</form>
<p role="status" id="result"></p>
<section aria-label="Open roles">
  <article aria-label="Data Engineer"><h2>Data Engineer</h2><p>Berlin</p><button>Apply</button></article>
  <article aria-label="Designer"><h2>Designer</h2><p>Lisbon</p><button>Apply</button></article>
</section>
<div id="host"></div>
<iframe title="Payment" srcdoc="<label for=card>Card number</label><input id=card><script>card.oninput = () => fetch('/api/card', { method: 'POST', body: card.value })</script>"></iframe>
</main>
<script>
  document.getElementById("host").attachShadow({ mode: "open" }).innerHTML = "<button>Chat with us</button>"
  document.getElementById("f").addEventListener("submit", async (event) => {
    event.preventDefault()
    const body = new URLSearchParams(new FormData(event.target))
    await fetch("/api/signup", { method: "POST", body })
    document.getElementById("result").textContent = "Welcome, " + body.get("name") + "!"
  })
</script>
</body></html>`

const slow = `<!doctype html><title>Report</title>
<p id="state">Loading report…</p>
<script>
  setTimeout(() => {
    document.getElementById("state").textContent = "Report ready"
    const b = document.createElement("button"); b.textContent = "Download report"; document.body.append(b)
  }, 1500)
</script>`

const pages = { "/signup": signup, "/slow": slow, "/api/signup": "{}", "/api/card": "{}" }

type Answer = Record<string, unknown>
const resultOf = <A = Record<string, unknown>>(answer: Answer) => (answer.result as { result: A } | undefined)?.result
const errorOf = (answer: Answer) => (answer.error as { data?: Record<string, unknown> } | undefined)?.data

const call = <A = Record<string, unknown>>(service: Service, method: string, params: Record<string, unknown>) =>
  Effect.promise(() => service.call(method, params)).pipe(
    Effect.map((answer) => {
      const result = resultOf<A>(answer)
      if (result === undefined) throw new Error(`${method} failed: ${JSON.stringify(answer).slice(0, 1_500)}`)
      return result
    })
  )
const failing = (service: Service, method: string, params: Record<string, unknown>) =>
  Effect.promise(() => service.call(method, params)).pipe(
    Effect.map((answer) => {
      const error = errorOf(answer)
      if (error === undefined) throw new Error(`${method} did not fail: ${JSON.stringify(answer).slice(0, 1_500)}`)
      return error as { type: string; message: string; sideEffect?: string }
    })
  )

/** The reference the outline gives the element on a line matching `role "name"`. */
const refOf = (outline: string, role: string, name: string) => {
  const line = outline.split("\n").find((l) => l.includes(`${role} "${name}"`) && l.includes("[ref="))
  const ref = /\[ref=(\w+)\]/.exec(line ?? "")?.[1]
  if (ref === undefined) throw new Error(`no ${role} "${name}" with a reference in:\n${outline}`)
  return ref
}

interface Outline {
  readonly snapshot: string
  readonly truncated?: { totalBytes: number; collapsed: number; how: string }
  readonly changes?: unknown
  readonly found?: number
}

describe("browser.snapshot", () => {
  it.live(
    "an outline of every frame and shadow root whose references act on the page, within its budget, and its changes",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const service = startService()
        yield* call(service, "browser.navigate", { url: site.url("/signup") })
        const whole = yield* call<Outline>(service, "browser.snapshot", {})
        assert.isUndefined(whole.truncated, whole.snapshot)
        // Landmarks, forms, groups and cards hold what is in them; the frame's and the shadow root's controls are there.
        for (const line of ['navigation "Main"', 'form "Sign up"', 'group "Billing"', 'article "Data Engineer"']) {
          assert.include(whole.snapshot, line)
        }
        const card = refOf(whole.snapshot, "textbox", "Card number")
        assert.match(card, /^f\d+e\d+$/)
        refOf(whole.snapshot, "button", "Chat with us")
        const [, inCard] = whole.snapshot.split('article "Data Engineer"')
        assert.include(inCard?.split("article")[0], 'button "Apply"', "the card's own Apply is inside it")

        // The frame's reference types into the frame: the frame's own script reports what it received.
        yield* call(service, "browser.act", { ref: card, method: "fill", arguments: ["4242"] })
        const changes = yield* call<Outline>(service, "browser.snapshot", { since: "last" })
        assert.match(changes.snapshot, /~ - textbox "Card number" \[ref=f\d+e\d+\]: 4242/)
        assert.notInclude(changes.snapshot, "Create your account", "only what changed")
        assert.deepStrictEqual(changes.changes, { added: 0, removed: 0, changed: 1 })
        assert.strictEqual(site.to("/api/card").at(-1)?.body, "4242")

        // A small budget: the top of the page, the rest collapsed into lines that say what they hold.
        const small = yield* call<Outline>(service, "browser.snapshot", { maxBytes: 400 })
        assert.isAtMost(Buffer.byteLength(small.snapshot), 400)
        assert.isDefined(small.truncated)
        assert.include(small.truncated?.how, "find")
        const collapsed = /^\s*- (\w+)[^\n]*\[ref=(\w+)\] \[\+(\d+) lines/m.exec(small.snapshot)
        assert.isNotNull(collapsed, small.snapshot)
        const opened = yield* call<Outline>(service, "browser.snapshot", { find: collapsed![2]! })
        assert.strictEqual(opened.found, 1)
        assert.isAbove(opened.snapshot.split("\n").length, Number(collapsed![3]))

        // find by words: the card that names the job, with its own button.
        const job = yield* call<Outline>(service, "browser.snapshot", { find: "Designer" })
        assert.include(job.snapshot, 'article "Designer"')
        assert.include(job.snapshot, "Lisbon")
        assert.notInclude(job.snapshot, "Berlin")
        const apply = refOf(job.snapshot, "button", "Apply")
        assert.strictEqual(apply, refOf(whole.snapshot.split('article "Designer"')[1]!, "button", "Apply"))
      }),
    180_000
  )
})

describe("browser.fill_form", () => {
  it.live(
    "fills every kind of field in one call and submits; a missing field stops it before anything is sent",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const service = startService()
        yield* call(service, "browser.navigate", { url: site.url("/signup") })
        const filled = yield* call<{
          fields: ReadonlyArray<{ field: string; description: string }>
          submitted?: unknown
        }>(service, "browser.fill_form", {
          fields: [
            { target: "Full name", value: "Grace Hopper" },
            { target: "Work email", value: "grace@example.com" },
            { target: "Plan", value: "Pro" },
            { target: "Billing", value: "Yearly" },
            { target: "Start date", value: "2026-03-15" },
            { target: "I agree to the terms", value: true }
          ],
          submit: "Create account"
        })
        assert.strictEqual(filled.fields.length, 6)
        assert.isDefined(filled.submitted)
        const sent = new URLSearchParams(site.to("/api/signup").at(-1)?.body ?? "")
        assert.deepStrictEqual(Object.fromEntries(sent), {
          name: "Grace Hopper",
          email: "grace@example.com",
          plan: "pro",
          billing: "yearly",
          start: "2026-03-15",
          terms: "on"
        })

        // A field the form does not have: the one before it is filled, nothing after it, nothing submitted.
        yield* call(service, "browser.navigate", { url: site.url("/signup") })
        const posts = site.to("/api/signup").length
        const error = yield* failing(service, "browser.fill_form", {
          fields: [
            { target: "Full name", value: "Ada Lovelace" },
            { target: "Middle name", value: "Augusta" },
            { target: "I agree to the terms", value: true }
          ],
          submit: "Create account"
        })
        assert.strictEqual(error.type, "element_not_found")
        assert.include(error.message, 'field 2 of 3 ("Middle name")')
        assert.include(error.message, "Ada Lovelace")
        assert.include(error.message, "nothing was submitted")
        assert.strictEqual(error.sideEffect, "possible")
        assert.strictEqual(site.to("/api/signup").length, posts)
        const form = yield* call<Outline>(service, "browser.snapshot", { find: "form" })
        assert.include(form.snapshot, 'textbox "Full name"')
        assert.match(form.snapshot, /checkbox "I agree to the terms" \[ref=\w+\]\n/, "the terms were not checked")

        // By reference, as the outline hands them out.
        const refs = (yield* call<Outline>(service, "browser.snapshot", {})).snapshot
        yield* call(service, "browser.fill_form", {
          fields: [
            { ref: refOf(refs, "textbox", "Full name"), value: "Ada Lovelace" },
            { ref: refOf(refs, "combobox", "Plan"), value: "Free" },
            { ref: refOf(refs, "checkbox", "I agree to the terms"), value: true }
          ],
          submit: true
        })
        const second = new URLSearchParams(site.to("/api/signup").at(-1)?.body ?? "")
        assert.strictEqual(second.get("name"), "Ada Lovelace")
        assert.strictEqual(second.get("plan"), "free")
        assert.strictEqual(second.get("terms"), "on")
      }),
    180_000
  )
})

describe("browser.wait_for", () => {
  it.live(
    "ends when the text appears, when it is gone, when the element is there, after a time; else says what never came",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const service = startService()
        yield* call(service, "browser.navigate", { url: site.url("/slow") })
        const ready = yield* call<{ waitedMs: number; description: string }>(service, "browser.wait_for", {
          text: "Report ready"
        })
        assert.isAbove(ready.waitedMs, 300, "the text came late, and the wait saw it come")
        const gone = yield* call<{ description: string }>(service, "browser.wait_for", { textGone: "Loading report" })
        assert.include(gone.description, "gone")
        const button = yield* call<{ description: string }>(service, "browser.wait_for", { target: "Download report" })
        assert.include(button.description, 'button "Download report"')
        const time = yield* call<{ waitedMs: number }>(service, "browser.wait_for", { timeMs: 300 })
        assert.isAtLeast(time.waitedMs, 300)
        const never = yield* failing(service, "browser.wait_for", { text: "Report failed", timeoutMs: 600 })
        assert.strictEqual(never.type, "element_not_found")
        assert.include(never.message, '"Report failed" did not appear')
      }),
    120_000
  )
})
