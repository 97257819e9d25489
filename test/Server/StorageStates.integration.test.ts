/**
 * Named storage states and cookies through the real service (JSON-RPC), with a site that records the cookies each
 * request carries and what its pages found in their storage: a person logs in once, the state is saved (encrypted in
 * the store file), and a later service's session that starts from it is logged in; without a key nothing is saved or
 * loaded; cookies set and cleared reach the site as such.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as RecordingSite from "../fixtures/RecordingSite.ts"
import { type Service, startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const pages: Record<string, string | RecordingSite.Handler> = {
  "/login": (_req, res) =>
    res
      .writeHead(200, { "content-type": "text/html", "set-cookie": "sid=s3cret-session; HttpOnly; Path=/" })
      .end(
        "<title>Signed in</title><script>localStorage.setItem('theme', 'dark'); sessionStorage.setItem('draft', 'cover letter')</script>"
      ),
  "/home": `<!doctype html><title>Home</title><script>
    fetch("/api/storage", { method: "POST", body: JSON.stringify({ theme: localStorage.getItem("theme"), draft: sessionStorage.getItem("draft") }) })
  </script>`,
  "/api/storage": "{}"
}

type Answer = Record<string, unknown>
const call = <A = Record<string, unknown>>(service: Service, method: string, params: Record<string, unknown>) =>
  Effect.promise(() => service.call(method, params)).pipe(
    Effect.map((answer: Answer) => {
      const result = (answer.result as { result: A } | undefined)?.result
      if (result === undefined) throw new Error(`${method} failed: ${JSON.stringify(answer).slice(0, 1_500)}`)
      return result
    })
  )
const failing = (service: Service, method: string, params: Record<string, unknown>) =>
  Effect.promise(() => service.call(method, params)).pipe(
    Effect.map((answer: Answer) => {
      const error = (answer.error as { data?: Record<string, unknown> } | undefined)?.data
      if (error === undefined) throw new Error(`${method} did not fail: ${JSON.stringify(answer).slice(0, 1_500)}`)
      return error as { type: string; message: string }
    })
  )

const storeDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-store-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("storage states", () => {
  it.live(
    "log in once, save, and a later session starts logged in; kept encrypted; refused without a key",
    () =>
      Effect.gen(function* () {
        const site = yield* RecordingSite.start(pages)
        const dir = yield* storeDir
        const store = join(dir, "store.db")
        const keyed = { SWITCHYARD_STORE: store, SWITCHYARD_STORAGE_KEY: "correct horse battery staple" }

        const first = startService(keyed)
        yield* call(first, "browser.navigate", { url: site.url("/login") })
        const saved = yield* call<{ saved: { cookies: number; origins: number } }>(first, "browser.storage", {
          action: "save",
          name: "acme"
        })
        assert.deepInclude(saved.saved, { cookies: 1, origins: 1 })
        const listed = yield* call<{ states: ReadonlyArray<{ name: string }> }>(first, "browser.storage", {
          action: "list"
        })
        assert.deepStrictEqual(
          listed.states.map((s) => s.name),
          ["acme"]
        )
        assert.notInclude(JSON.stringify(listed), "s3cret")
        yield* Effect.promise(() => stopServices())
        // At rest the cookie's value, the storage and even the site are sealed.
        const onDisk = Buffer.concat(
          [store, `${store}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file))
        )
        for (const plain of ["s3cret-session", "cover letter", "dark", "127.0.0.1"]) {
          assert.notInclude(onDisk.toString("latin1"), plain)
        }

        const keyless = startService({ SWITCHYARD_STORE: store })
        const refused = yield* failing(keyless, "browser.storage", { action: "load", name: "acme" })
        assert.strictEqual(refused.type, "rejected_by_policy")
        assert.include(refused.message, "SWITCHYARD_STORAGE_KEY")
        const notSaved = yield* failing(keyless, "browser.storage", { action: "save", name: "other" })
        assert.strictEqual(notSaved.type, "rejected_by_policy")
        const wrongKey = startService({ SWITCHYARD_STORE: store, SWITCHYARD_STORAGE_KEY: "another key" })
        const unreadable = yield* failing(wrongKey, "browser.storage", { action: "load", name: "acme" })
        assert.include(unreadable.message, "another key than")
        yield* Effect.promise(() => stopServices())

        // A later service: the first call names the state, and the site sees a logged-in browser.
        const later = startService(keyed)
        const before = site.to("/home").length
        yield* call(later, "browser.navigate", { url: site.url("/home"), storageState: "acme" })
        const home = site.to("/home").slice(before)
        assert.include(home.at(-1)?.cookie, "sid=s3cret-session")
        assert.deepStrictEqual(JSON.parse(site.to("/api/storage").at(-1)?.body ?? "{}"), {
          theme: "dark",
          draft: "cover letter"
        })
        const swapped = yield* failing(later, "browser.navigate", { url: site.url("/home"), storageState: "other" })
        assert.strictEqual(swapped.type, "invalid_input")
        assert.include(swapped.message, "browser.storage")

        // Cookies by hand: cleared, the site sees none; set, the site sees it.
        yield* call(later, "browser.cookies", { action: "clear", name: "sid" })
        yield* call(later, "browser.navigate", { url: site.url("/home") })
        assert.notInclude(site.to("/home").at(-1)?.cookie, "sid=")
        yield* call(later, "browser.cookies", {
          action: "set",
          cookies: [{ name: "lang", value: "de", url: site.origin, httpOnly: true }]
        })
        yield* call(later, "browser.navigate", { url: site.url("/home") })
        assert.include(site.to("/home").at(-1)?.cookie, "lang=de")
        const got = yield* call<{ cookies: ReadonlyArray<{ name: string; httpOnly: boolean }> }>(
          later,
          "browser.cookies",
          { action: "get", name: "lang" }
        )
        assert.deepInclude(got.cookies[0], { name: "lang", httpOnly: true })
        const deleted = yield* call<{ deleted: boolean }>(later, "browser.storage", { action: "delete", name: "acme" })
        assert.isTrue(deleted.deleted)
      }),
    240_000
  )
})
