/**
 * The bundled entry bin/switchyard runs (scripts/bundle.ts, built through the same bootstrap function): a service
 * started from it serves a whole task on a real page from a few dozen files of its own (about 750 modules from source),
 * with no effect module from node_modules and none of the SDKs of levels it does not use (Stagehand, magnitude-core,
 * the MCP SDK, PostgreSQL).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as RecordingSite from "../fixtures/RecordingSite.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const root = join(import.meta.dirname, "..", "..")

const form = `<!doctype html><title>Join</title>
<form method="post" action="/joined"><label for="n">Name</label><input id="n" name="name">
<button type="submit">Join</button></form>`

describe("the bundled entry", () => {
  it.live(
    "serves a task from a few files of its own, loading no SDK of a level it does not use",
    () =>
      Effect.gen(function* () {
        const entry = execFileSync("bash", ["-c", 'source "$1/scripts/bootstrap.sh" && ensure_bundle', "bash", root], {
          encoding: "utf8"
        }).trim()
        assert.match(entry, /\/\.bundle\/[^/]+\/Main\.js$/)
        const site = yield* RecordingSite.start({
          "/": form,
          "/joined": "<!doctype html><title>Joined</title><p>Welcome</p>"
        })
        const log = join(mkdtempSync(join(tmpdir(), "switchyard-modules-")), "modules.txt")
        const service = startService(
          {
            SWITCHYARD_MODULE_LOG: log,
            NODE_OPTIONS: `--import=${join(root, "test", "fixtures", "ModuleLog.ts")}`,
            OPENAI_API_KEY: "",
            ANTHROPIC_API_KEY: ""
          },
          undefined,
          entry
        )
        const call = (method: string, params: Record<string, unknown>) =>
          Effect.promise(() => service.call(method, params)).pipe(
            Effect.map((answer) => assert.isDefined(answer.result, JSON.stringify(answer.error)))
          )
        yield* call("browser.navigate", { url: site.url("/") })
        yield* call("browser.act", { instruction: 'fill "Name" with "Grace Hopper"' })
        yield* call("browser.act", { instruction: 'click "Join"' })
        // The site's own record of what the page sent.
        assert.deepStrictEqual(
          site.to("/joined").map((r) => r.body),
          ["name=Grace+Hopper"]
        )

        const loaded = readFileSync(log, "utf8").split("\n").filter(Boolean)
        const own = loaded.filter((url) => url.startsWith(`file://${root}/`) && !url.includes("/node_modules/"))
        const bundled = own.filter((url) => url.includes("/.bundle/"))
        assert.deepStrictEqual(
          own.filter((url) => !bundled.includes(url) && !url.includes("/test/fixtures/")),
          [],
          "nothing from source"
        )
        assert.isAbove(bundled.length, 0)
        assert.isBelow(bundled.length, 100, `bundled files loaded: ${bundled.length}`)
        const packages = new Set(
          loaded.flatMap((url) => {
            const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
            return match?.[1] ? [match[1]] : []
          })
        )
        assert.isTrue(packages.has("playwright-core"), [...packages].join(", "))
        for (const unused of [
          "effect",
          "@effect/platform-node",
          "@browserbasehq/stagehand",
          "magnitude-core",
          "@modelcontextprotocol/sdk",
          "pg",
          "postgres"
        ])
          assert.isFalse(packages.has(unused), `${unused} was loaded`)
      }),
    180_000
  )
})
