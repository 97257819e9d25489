/**
 * Cold start: spawning the real service until its first `browser.navigate` is answered (Node start, modules,
 * layers, Chromium launch, engine connect, the page load), against a fresh Node process doing a bare playwright-core
 * launch of the same Chromium and a goto; and spawning `switchyard serve` (MCP on stdio) until the official SDK
 * client's `initialize` is answered. The service starts from the bundled entry bin/switchyard runs, and again from
 * source (`node src/Main.ts`, what ran before the bundle) for the difference. Interleaved, alternating which goes
 * first. One unmeasured start of each first fills Node's compile cache (the bench's temp dir is new each run), as any
 * earlier start on the machine would have.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import * as LocalChromium from "../src/Sandbox/Provider/LocalChromium.ts"
import * as SiteServer from "../test/fixtures/SiteServer.ts"
import { serviceEnv } from "../test/support/Service.ts"
import * as Entry from "./Entry.ts"
import * as Service from "./Service.ts"
import * as Stats from "./Stats.ts"

export interface ColdStartResult {
  readonly runs: number
  /** From the bundled entry bin/switchyard runs. */
  readonly service: Stats.Summary
  /** From the service's spawn to its stderr saying it is ready, before any browser. */
  readonly serviceReady: Stats.Summary
  /** The same start from source (`node src/Main.ts`). */
  readonly fromSource?: Stats.Summary
  readonly bare: Stats.Summary
  /** From spawning `switchyard serve` (MCP on stdio) to the official client's `initialize` answered. */
  readonly mcpInitialize?: Stats.Summary
}

/** Spawn → `initialize` answered, through the official SDK client over stdio (connect() is the handshake). */
const mcpInitialize = () =>
  Effect.promise(async () => {
    const logs = mkdtempSync(join(tmpdir(), "switchyard-bench-mcp-"))
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [Entry.bundled(), "serve"],
      env: serviceEnv({ ...process.env, SWITCHYARD_LOG_DIR: logs }),
      stderr: "ignore"
    })
    const client = new Client({ name: "switchyard-bench", version: "1.0.0" })
    const started = performance.now()
    await client.connect(transport)
    const ms = performance.now() - started
    await client.close()
    rmSync(logs, { recursive: true, force: true })
    return ms
  })

const bare = (executable: string, url: string) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [join(import.meta.dirname, "BareLaunch.ts"), executable, url], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let ms: number | undefined
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line === "ready") ms = performance.now() - started
    })
    child.once("exit", (code) => (ms === undefined ? reject(new Error(`bare launch exited ${code}`)) : resolve(ms)))
  })

const service = (url: string, entry: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const started = performance.now()
      const s = yield* Service.start({}, entry)
      const ready = yield* Effect.promise(() => s.stderrLine(/switchyard: ready/))
      const readyMs = ready === undefined ? Number.NaN : performance.now() - started
      yield* Effect.promise(() => Service.call(s, "browser.navigate", { url }))
      return { total: performance.now() - started, ready: readyMs }
    })
  )

export const run = (options: { readonly runs: number }) =>
  Effect.gen(function* () {
    const site = yield* SiteServer.start
    const url = site.url("/forms.html")
    const executable = yield* LocalChromium.findExecutable()
    const samples = {
      service: [] as Array<number>,
      ready: [] as Array<number>,
      fromSource: [] as Array<number>,
      bare: [] as Array<number>,
      initialize: [] as Array<number>
    }
    const bundled = Entry.bundled()
    yield* service(url, bundled)
    yield* service(url, Entry.source)
    for (let i = 0; i < options.runs; i++) {
      const order = ["service", "bare", "source", "initialize"] as const
      for (const which of i % 2 === 0 ? order : [...order].reverse()) {
        if (which === "bare") samples.bare.push(yield* Effect.promise(() => bare(executable, url)))
        else if (which === "initialize") samples.initialize.push(yield* mcpInitialize())
        else if (which === "source") samples.fromSource.push((yield* service(url, Entry.source)).total)
        else {
          const { total, ready } = yield* service(url, bundled)
          samples.service.push(total)
          samples.ready.push(ready)
        }
      }
    }
    return {
      runs: options.runs,
      service: Stats.summarize(samples.service),
      serviceReady: Stats.summarize(samples.ready),
      fromSource: Stats.summarize(samples.fromSource),
      bare: Stats.summarize(samples.bare),
      mcpInitialize: Stats.summarize(samples.initialize)
    } satisfies ColdStartResult
  }).pipe(Effect.scoped)
