/**
 * MCP resources with the official client: what an MCP session's calls make — a screenshot, a PDF, the whole snapshot
 * the budget cut, a download — is a resource of that session that a client over HTTP reads back byte for byte, linked
 * from the answer; another MCP session does not see it; a download still under way is announced when it finishes;
 * and the agent's script cannot reach the service's own port.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect } from "effect"
import * as RecordingSite from "../fixtures/RecordingSite.ts"
import { startService, stopServices } from "../support/Service.ts"

afterEach(stopServices)

const items = Array.from({ length: 200 }, (_, i) => `<li><a href="/item/${i}">Item number ${i}</a></li>`).join("")
const report = `<!doctype html><title>Report</title><h1>Quarterly report</h1>
<a href="/report.csv">Get the CSV</a> <a href="/slow.csv">Get the full export</a><ul>${items}</ul>`

interface Content {
  readonly type: string
  readonly uri?: string
  readonly text?: string
  readonly mimeType?: string
}

/** A cascade of the model-free level alone, with room for a call that waits out a slow download. */
const policyFile = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-policy-"))
    const file = join(dir, "cascade.json")
    writeFileSync(
      file,
      JSON.stringify({
        default: {
          totalTimeoutMs: 120_000,
          levels: [{ engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 40_000 }]
        }
      })
    )
    return file
  }),
  (file) => Effect.sync(() => rmSync(dirname(file), { recursive: true, force: true }))
)

const connect = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "switchyard-test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const links = (result: object) =>
  ((("content" in result ? result.content : undefined) ?? []) as ReadonlyArray<Content>).filter(
    (c) => c.type === "resource_link"
  )

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })).pipe(
    Effect.tap((result) =>
      result.isError ? Effect.die(new Error(`${name}: ${JSON.stringify(result.content).slice(0, 800)}`)) : Effect.void
    )
  )

describe("MCP resources", () => {
  it.live(
    "screenshots, PDFs, whole snapshots and downloads are the calling session's resources, read back over HTTP",
    () =>
      Effect.gen(function* () {
        const release = yield* Deferred.make<void>()
        const site = yield* RecordingSite.start({
          "/report": report,
          "/report.csv": (_req, res) =>
            res
              .writeHead(200, { "content-type": "text/csv", "content-disposition": "attachment; filename=report.csv" })
              .end("quarter,revenue\nQ1,100\n"),
          // A download that takes longer than a call waits for one: it ends when the test says so.
          "/slow.csv": (_req, res) => {
            res.writeHead(200, {
              "content-type": "text/csv",
              "content-disposition": "attachment; filename=export.csv",
              "content-length": "27"
            })
            res.write("id,total\n")
            Effect.runPromise(Deferred.await(release)).then(() => res.end("1,100\n2,250\n3,999\n"))
          }
        })
        // The click on a download the call waits 15 s for needs an attempt limit above that (the default is 15 s).
        const policy = yield* policyFile
        const service = startService({ SWITCHYARD_EVALUATE: "on", SWITCHYARD_CASCADE: policy }, [
          "--http",
          "--host",
          "127.0.0.1",
          "--port",
          "0"
        ])
        const url = yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (\S+)/))
        const a = yield* connect(url)
        const b = yield* connect(url)
        let listChanged = 0
        a.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
          listChanged++
        })
        const updated = yield* Deferred.make<string>()
        a.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
          Deferred.doneUnsafe(updated, Effect.succeed(n.params.uri))
        })

        yield* call(a, "browser_navigate", { url: site.url("/report") })
        const shot = yield* call(a, "browser_screenshot", {})
        const shotLink = links(shot)[0]
        assert.strictEqual(shotLink?.mimeType, "image/png")
        const image = (shot.content as ReadonlyArray<{ type: string; data?: string }>).find((c) => c.type === "image")

        const pdf = yield* call(a, "browser_pdf", {})
        const pdfLink = links(pdf)[0]
        assert.strictEqual(pdfLink?.mimeType, "application/pdf")
        const pdfResult = (pdf.structuredContent as { result: { data?: string; uri?: string; bytes: number } }).result
        assert.isUndefined(pdfResult.data, "the bytes are the resource's, not the answer's")
        assert.strictEqual(pdfResult.uri, pdfLink?.uri)

        const outline = yield* call(a, "browser_snapshot", { maxBytes: 500 })
        const wholeLink = links(outline)[0]
        assert.strictEqual(wholeLink?.mimeType, "text/plain")

        const downloaded = yield* call(a, "browser_act", { instruction: 'click "Get the CSV"' })
        const csvLink = links(downloaded)[0]
        assert.strictEqual(csvLink?.mimeType, "text/csv")

        const read = (uri: string) =>
          Effect.promise(() => a.readResource({ uri })).pipe(
            Effect.map((r) => r.contents[0] as { text?: string; blob?: string; mimeType: string })
          )
        assert.strictEqual((yield* read(shotLink!.uri!)).blob, image?.data)
        const pdfBytes = Buffer.from((yield* read(pdfLink!.uri!)).blob ?? "", "base64")
        assert.strictEqual(pdfBytes.subarray(0, 5).toString(), "%PDF-")
        assert.strictEqual(pdfBytes.length, pdfResult.bytes)
        const whole = (yield* read(wholeLink!.uri!)).text ?? ""
        for (const i of [0, 100, 199]) assert.include(whole, `link "Item number ${i}"`)
        assert.strictEqual((yield* read(csvLink!.uri!)).text, "quarter,revenue\nQ1,100\n")
        const listed = yield* Effect.promise(() => a.listResources())
        assert.includeMembers(
          listed.resources.map((r) => r.uri),
          [shotLink!.uri!, pdfLink!.uri!, wholeLink!.uri!, csvLink!.uri!]
        )
        assert.isAtLeast(listChanged, 4)

        // Another MCP session has its own: none of these.
        assert.lengthOf((yield* Effect.promise(() => b.listResources())).resources, 0)
        const foreign = yield* Effect.promise(() =>
          b.readResource({ uri: pdfLink!.uri! }).then(
            () => "read",
            (error: Error) => error.message
          )
        )
        assert.include(foreign, "Resource not found")

        // A download the call could not wait out: listed at once, announced to a subscriber when it ends.
        yield* call(a, "browser_act", { instruction: 'click "Get the full export"' })
        const pending = (yield* Effect.promise(() => a.listResources())).resources.find((r) => r.name === "export.csv")
        assert.isDefined(pending, "the download under way is listed")
        yield* Effect.promise(() => a.subscribeResource({ uri: pending!.uri }))
        yield* Deferred.succeed(release, undefined)
        const announced = yield* Deferred.await(updated).pipe(Effect.timeout("20 seconds"))
        assert.strictEqual(announced, pending!.uri)
        assert.strictEqual((yield* read(pending!.uri)).text, "id,total\n1,100\n2,250\n3,999\n")

        // The agent's script runs as the page's do: the service's own port is out of its reach.
        const port = new URL(url).port
        const reach = yield* call(a, "browser_evaluate", {
          expression: `async () => { try { await fetch("http://127.0.0.1:${port}/mcp", { method: "POST", body: "{}" }); return "reached" } catch (e) { return "refused" } }`
        })
        assert.strictEqual((reach.structuredContent as { result: { value: unknown } }).result.value, "refused")
      }),
    240_000
  )
})
