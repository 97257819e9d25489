/**
 * `switchyard cache list|clear [--site]` and the replay line of `switchyard status`, run as users run them (real
 * processes on an embedded store the test filled as the replay level fills it).
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Resolutions from "../../src/Store/Resolutions.ts"

const main = join(import.meta.dirname, "..", "..", "src", "Main.ts")

const switchyard = (file: string, ...args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    promisify(execFile)(process.execPath, [main, ...args, "--store", file], {
      env: { ...process.env, SWITCHYARD_REPLAY: "on", DATABASE_URL: "", SWITCHYARD_DATABASE_URL: "" },
      timeout: 120_000
    })
  ).pipe(Effect.map((out) => out.stdout))

const resolution = (name: string): Resolutions.Resolution => ({
  steps: [
    {
      target: { role: "textbox", name, around: [{ kind: "form", name: "Apply" }] },
      method: "fill",
      arguments: ["{{value:1}}"]
    }
  ],
  destructive: false
})

describe("switchyard cache", () => {
  it.live(
    "lists what is kept per site, shows the hit rate and time saved in status, and clears one site",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-cache-"))),
          (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
        )
        const file = join(dir, "store.db")
        yield* Effect.gen(function* () {
          const store = yield* Resolutions.make({ location: { kind: "embedded", file } })
          const key = (site: string, field: string): Resolutions.Key => ({
            site,
            route: "/jobs/:id/apply",
            tool: "act",
            instruction: `fill "${field}" with "{{value:1}}"`
          })
          yield* store.record(key("https://jobs.a.example", "Email"), resolution("Email"), {
            resolvedBy: "stagehand dom",
            costMs: 4_000
          })
          yield* store.record(key("https://jobs.a.example", "Phone"), resolution("Phone"), {
            resolvedBy: "stagehand dom",
            costMs: 3_000
          })
          yield* store.record(key("https://b.example", "Email"), resolution("Email address"), {
            resolvedBy: "playwright",
            costMs: 500
          })
          yield* store.hit(key("https://jobs.a.example", "Email"), { replayMs: 1_000 })
          yield* store.miss(key("https://jobs.a.example", "Phone"), "failed")
          yield* store.miss(key("https://b.example", "Name"), "absent")
          yield* store.miss(key("https://b.example", "Name"), "absent")
        }).pipe(Effect.scoped)

        const all = yield* switchyard(file, "cache", "list")
        assert.include(all, 'https://jobs.a.example/jobs/:id/apply  act "fill \\"Email\\" with \\"{{value:1}}\\""')
        assert.include(all, "by stagehand dom in 4.0 s; 1 replays, 0 misses")
        assert.include(all, "https://b.example/jobs/:id/apply")
        const one = yield* switchyard(file, "cache", "list", "--site", "b.example")
        assert.notInclude(one, "jobs.a.example")
        assert.include(one, 'textbox "Email address"')

        const status = yield* switchyard(file, "status")
        // One replayed of two tried, two calls with nothing kept: 1 of 4 calls, 3 s saved on the hit.
        assert.include(
          status,
          "replay       on: 3 kept on 2 sites; 1 replayed of 2 tried, 2 with nothing kept: hit rate 25%; time saved 3.0 s"
        )

        assert.include(yield* switchyard(file, "cache", "clear", "--site", "https://jobs.a.example"), "cleared 2")
        const left = yield* switchyard(file, "cache", "list")
        assert.notInclude(left, "jobs.a.example")
        assert.include(left, "https://b.example")
        assert.include(yield* switchyard(file, "cache", "clear"), "cleared 1")
        assert.include(yield* switchyard(file, "cache", "list"), "no kept resolutions")
      }),
    240_000
  )
})
