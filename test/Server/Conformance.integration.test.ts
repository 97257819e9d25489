/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned) against the service over Streamable
 * HTTP on loopback: every scenario that applies to this server passes; docs/development.md says why the others do not apply.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const conformance = join(
  import.meta.dirname,
  "..",
  "..",
  "node_modules",
  "@modelcontextprotocol",
  "conformance",
  "dist",
  "index.js"
)

/**
 * Scenarios about what this server offers (lifecycle, ping, tools/list, concurrent POST streams, refusing a foreign
 * Host/Origin): all must pass.
 */
const applicable = [
  "server-initialize",
  "ping",
  "tools-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
  "resources-list",
  "resources-subscribe",
  "resources-unsubscribe"
]

/**
 * Scenarios that do not apply (docs/development.md, "MCP conformance"): they call the suite's own fixture tools (`test_*`) or read
 * its fixture resources (`test://static-text`, …), or features this server does not offer (prompts, resource
 * templates, completion, logging, sampling, elicitation, resumable SSE streams).
 */
const notApplicable = [
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-logging",
  "tools-call-error",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "json-schema-2020-12",
  "elicitation-sep1034-defaults",
  "elicitation-sep1330-enums",
  "server-sse-polling",
  "logging-set-level",
  "completion-complete",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-embedded-resource",
  "prompts-get-with-image"
]

interface Check {
  readonly id: string
  readonly status: string
  readonly errorMessage?: string
}

/** Runs the whole suite against `url`; each scenario's checks, read from the results directory it writes. */
const runSuite = (url: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "switchyard-conformance-"))),
    (dir) =>
      Effect.promise(
        () =>
          new Promise<Map<string, ReadonlyArray<Check>>>((resolve, reject) => {
            // It exits 1 when any scenario fails: the results directory says which.
            execFile(
              process.execPath,
              [conformance, "server", "--url", url, "--suite", "all", "--output-dir", dir],
              { timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
              (error, stdout) => {
                const results = new Map<string, ReadonlyArray<Check>>()
                for (const entry of readdirSync(dir)) {
                  const scenario = entry.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "")
                  const checks = JSON.parse(readFileSync(join(dir, entry, "checks.json"), "utf8")) as Array<Check>
                  results.set(scenario, checks)
                }
                if (results.size === 0) reject(new Error(`the suite wrote no results: ${error?.message}\n${stdout}`))
                else resolve(results)
              }
            )
          })
      ),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const failures = (checks: ReadonlyArray<Check>) =>
  checks.filter((c) => c.status === "FAILURE").map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`)

describe("MCP conformance suite", () => {
  it.live(
    "every scenario that applies passes over Streamable HTTP; every scenario is classified",
    () =>
      Effect.gen(function* () {
        const service = startService({}, ["--http", "--host", "127.0.0.1", "--port", "0"])
        const url = yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/))
        const results = yield* runSuite(url)
        const known = new Set([...applicable, ...notApplicable])
        const unclassified = [...results.keys()].filter((s) => !known.has(s))
        assert.deepStrictEqual(
          unclassified,
          [],
          "scenarios new to the suite: classify them here and in docs/development.md"
        )
        for (const scenario of applicable) {
          const checks = results.get(scenario)
          assert.isDefined(checks, `the suite did not run ${scenario}`)
          assert.deepStrictEqual(failures(checks ?? []), [], scenario)
        }
      }),
    300_000
  )
})
