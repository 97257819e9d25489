/**
 * Peers side by side: the same sign-up task through the official MCP client (stdio) against Switchyard (`serve`, its
 * default configuration), `@playwright/mcp` and `chrome-devtools-mcp` (pinned devDependencies), all on this machine's
 * Chromium, with the servers interleaved round by round. Each server is driven through its own tools the way an agent
 * would: the peers need a snapshot to hand out element references, so the task takes one (and counts it). Per server:
 * wall time per task, latency per kind of call, calls and result bytes per task (what the agent reads into its
 * context), CPU per task and memory of the server and its browser, and the time from spawn to `initialize` answered.
 * The same task again with each server's batch form fill, and each server's snapshot, console, network, wait, script,
 * PDF and resize tools called once on its page (bytes and time of one call).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import * as LocalChromium from "../src/Sandbox/Provider/LocalChromium.ts"
import { serviceProcessEnv } from "../test/support/Service.ts"
import { waitFor } from "../test/support/Wait.ts"
import * as Entry from "./Entry.ts"
import * as ProcessTree from "./ProcessTree.ts"
import * as Stats from "./Stats.ts"

export const kinds = ["navigate", "snapshot", "fill", "select", "check", "click", "read", "screenshot"] as const
/** The calls of the same task done with each server's batch form fill. */
export const batchKinds = ["navigate", "snapshot", "fill_form", "click", "read", "screenshot"] as const
/** The tools probed once a task has run, each server's own for each. */
export const toolKinds = ["snapshot", "console", "network", "wait_for", "evaluate", "pdf", "resize"] as const
export type Kind = (typeof kinds)[number] | (typeof batchKinds)[number]
export type ToolKind = (typeof toolKinds)[number]

export const servers = ["switchyard", "playwright-mcp", "chrome-devtools-mcp"] as const
export type ServerId = (typeof servers)[number]

export interface ServerResult {
  /** Package and version. */
  readonly label: string
  readonly tasks: number
  readonly failures: number
  readonly firstFailure?: string
  readonly task: Stats.Summary
  readonly perCall: Partial<Record<Kind, Stats.Summary>>
  readonly callsPerTask: number
  /** Medians per task: text content of the tool results, images (decoded) and structuredContent (JSON) apart. */
  readonly textBytesPerTask: number
  readonly imageBytesPerTask: number
  readonly structuredBytesPerTask: number
  /** Median text bytes of one call of each kind. */
  readonly textBytesByKind: Partial<Record<Kind, number>>
  /** utime + stime of the server and every process it started, over one task. */
  readonly cpuMsPerTask: Stats.Summary
  /** After each task, medians over the rounds: the server process alone and the processes it started. */
  readonly memory: {
    readonly serviceRssMiB: number
    readonly servicePssMiB: number
    readonly serviceUssMiB: number
    readonly browserRssMiB: number
    readonly browserPssMiB: number
    readonly browserUssMiB: number
    /** What else the server started: the warm pool's spare browser (Switchyard's only, for the next session). */
    readonly spareUssMiB?: number
    readonly sparePssMiB?: number
    readonly spareRssMiB?: number
    readonly processes: number
  }
  /** Spawn → `initialize` answered (the client's connect), each spawn a fresh process. */
  readonly initialize: Stats.Summary
  /** The same task with the server's batch form fill (every field in one call); absent in results of older runs. */
  readonly batch?: {
    readonly tasks: number
    readonly failures: number
    readonly firstFailure?: string
    readonly task: Stats.Summary
    readonly callsPerTask: number
    readonly textBytesPerTask: number
    readonly perCall: Partial<Record<(typeof batchKinds)[number], Stats.Summary>>
  }
  /** Each tool kind the server has, called on the task's page: its tool, text bytes and time of one call (medians). */
  readonly tools?: Partial<
    Record<
      ToolKind,
      | { readonly tool: string; readonly textBytes: number; readonly ms: number }
      | { readonly tool: string; readonly error: string }
    >
  >
}

export interface PeersResult {
  readonly rounds: number
  /** Running as root, the peers' Chromium runs with --no-sandbox (ours runs as an unprivileged user, sandboxed). */
  readonly peersNoSandbox: boolean
  readonly servers: Record<ServerId, ServerResult>
}

const applicant = { name: "Grace Hopper", email: "grace@example.com", plan: "Pro" }
const welcome = `Welcome, ${applicant.name}`

/** A sign-up form as sites build it: labelled fields, a plan select, a terms checkbox, a submit posted with fetch. */
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sign up · Acme Cloud</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; color: #1f2328 }
  label { display: block; margin-top: 1rem; font-weight: 600 }
  input[type=text], input[type=email], select { width: 100%; padding: .5rem; margin-top: .25rem }
  .terms { font-weight: 400 } button { margin-top: 1.5rem; padding: .6rem 1.2rem }
</style>
</head>
<body>
<header><nav><a href="/">Acme Cloud</a> · <a href="/pricing">Pricing</a> · <a href="/login">Log in</a></nav></header>
<main>
<h1>Create your account</h1>
<p>Start your 14-day trial. No credit card required.</p>
<form id="signup" novalidate>
  <label for="name">Full name</label>
  <input id="name" name="name" type="text" autocomplete="name" required>
  <label for="email">Work email</label>
  <input id="email" name="email" type="email" autocomplete="email" required>
  <label for="plan">Plan</label>
  <select id="plan" name="plan" required>
    <option value="">Choose a plan…</option>
    <option value="free">Free</option>
    <option value="pro">Pro</option>
    <option value="team">Team</option>
  </select>
  <label class="terms"><input type="checkbox" id="terms" name="terms"> I agree to the terms of service</label>
  <button type="submit">Create account</button>
</form>
<p id="result" role="status" aria-live="polite"></p>
</main>
<footer><small>© Acme Cloud · <a href="/privacy">Privacy</a></small></footer>
<script>
  console.info("sign-up form ready")
  document.getElementById("signup").addEventListener("submit", async (event) => {
    event.preventDefault()
    const form = new FormData(event.target)
    const result = document.getElementById("result")
    if (!form.get("terms")) return void (result.textContent = "Please accept the terms of service.")
    const answer = await fetch("/api/signup", { method: "POST", body: new URLSearchParams(form) })
    const { name, plan } = await answer.json()
    result.textContent = "Welcome, " + name + "! Your " + plan + " trial has started."
  })
</script>
</body>
</html>`

/** The fixture site on 127.0.0.1 for the section's scope. */
const site = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<ReturnType<typeof createServer>>((resolve) => {
        const server = createServer((req, res) => {
          if (req.method === "POST" && req.url === "/api/signup") {
            let body = ""
            req.on("data", (chunk) => (body += chunk))
            req.on("end", () => {
              const form = new URLSearchParams(body)
              res.writeHead(200, { "content-type": "application/json" })
              res.end(JSON.stringify({ name: form.get("name"), plan: form.get("plan") }))
            })
            return
          }
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page)
        })
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
  ),
  (server) =>
    Effect.promise(
      () =>
        new Promise<void>((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
    )
).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/signup`))

interface Call {
  readonly kind: Kind
  readonly ms: number
  readonly text: number
  readonly image: number
  readonly structured: number
}

/** One tool call as an agent makes it: returns the result's text, fails on a tool error. */
type Caller = (kind: Kind, tool: string, args: Record<string, unknown>) => Promise<string>

interface Server {
  readonly id: ServerId
  readonly label: string
  /** The script node runs and its arguments; `dir` is the server's own working/output directory. */
  readonly argv: (dir: string) => ReadonlyArray<string>
  readonly env: (dir: string) => Record<string, string>
  /** What an agent does once per connection before its tasks (e.g. learn the page id). */
  readonly prepare: (call: Caller) => Promise<Record<string, unknown>>
  /** The task; returns the text the agent read the result from. */
  readonly task: (call: Caller, url: string, context: Record<string, unknown>) => Promise<string>
  /** The same task with the server's batch form fill. */
  readonly batch: (call: Caller, url: string, context: Record<string, unknown>) => Promise<string>
  /** The server's tool for each probed kind, with its arguments. */
  readonly tools: Partial<
    Record<
      ToolKind,
      { readonly tool: string; readonly args: (context: Record<string, unknown>) => Record<string, unknown> }
    >
  >
}

const root = join(import.meta.dirname, "..")
const versionOf = (pkg: string) =>
  (JSON.parse(readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The element reference a snapshot gives the element with this role and name (`pattern` finds it on a line). */
const refIn = (snapshot: string, pattern: (role: string, name: string) => RegExp) => (role: string, name: string) => {
  const match = pattern(literal(role), literal(name)).exec(snapshot)
  if (!match?.[1]) throw new Error(`no ${role} "${name}" in the snapshot: ${snapshot.slice(0, 600)}`)
  return match[1]
}

const peersNoSandbox = process.getuid?.() === 0

const definitions = (chromium: string): ReadonlyArray<Server> => [
  {
    id: "switchyard",
    label: `switchyard ${(JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version} (serve, default configuration)`,
    argv: () => [Entry.bundled(), "serve"],
    // What bin/switchyard sets; a log root of its own; evaluate on for its probe (the tasks do not use it).
    env: (dir) => ({
      SWITCHYARD_LOG_DIR: join(dir, "logs"),
      ...serviceProcessEnv,
      SWITCHYARD_EVALUATE: "on"
    }),
    prepare: async () => ({}),
    task: async (call, url) => {
      await call("navigate", "browser_navigate", { url })
      await call("fill", "browser_act", { instruction: `fill "Full name" with "${applicant.name}"` })
      await call("fill", "browser_act", { instruction: `fill "Work email" with "${applicant.email}"` })
      await call("select", "browser_act", { instruction: `select "${applicant.plan}" in "Plan"` })
      await call("check", "browser_act", { instruction: 'check "I agree to the terms of service"' })
      await call("click", "browser_act", { instruction: 'click "Create account"' })
      const read = await call("read", "browser_extract", { instruction: "the result message" })
      await call("screenshot", "browser_screenshot", {})
      return read
    },
    // Fields by their labels: no snapshot needed before; the submit is part of the fill.
    batch: async (call, url) => {
      await call("navigate", "browser_navigate", { url })
      await call("fill_form", "browser_fill_form", {
        fields: [
          { target: "Full name", value: applicant.name },
          { target: "Work email", value: applicant.email },
          { target: "Plan", value: applicant.plan },
          { target: "I agree to the terms of service", value: true }
        ],
        submit: "Create account"
      })
      // The page's status line, from the outline.
      const read = await call("read", "browser_snapshot", { find: "status" })
      await call("screenshot", "browser_screenshot", {})
      return read
    },
    tools: {
      snapshot: { tool: "browser_snapshot", args: () => ({}) },
      console: { tool: "browser_console", args: () => ({}) },
      network: { tool: "browser_network", args: () => ({}) },
      wait_for: { tool: "browser_wait_for", args: () => ({ text: "Welcome" }) },
      evaluate: { tool: "browser_evaluate", args: () => ({ expression: "document.title" }) },
      pdf: { tool: "browser_pdf", args: () => ({}) },
      resize: { tool: "browser_resize", args: () => ({ width: 1280, height: 720 }) }
    }
  },
  {
    id: "playwright-mcp",
    label: `@playwright/mcp ${versionOf("@playwright/mcp")}`,
    argv: (dir) => [
      join(root, "node_modules", "@playwright", "mcp", "cli.js"),
      "--headless",
      "--isolated",
      "--executable-path",
      chromium,
      "--output-dir",
      join(dir, "output"),
      // Its PDF tool is opt-in.
      "--caps=pdf",
      ...(peersNoSandbox ? ["--no-sandbox"] : [])
    ],
    env: () => ({}),
    prepare: async () => ({}),
    task: async (call, url) => {
      await call("navigate", "browser_navigate", { url })
      const ref = refIn(await call("snapshot", "browser_snapshot", {}), (role, name) =>
        RegExp(`${role} "${name}"[^\\n]*\\[ref=(\\w+)\\]`)
      )
      await call("fill", "browser_type", {
        element: "Full name",
        target: ref("textbox", "Full name"),
        text: applicant.name
      })
      await call("fill", "browser_type", {
        element: "Work email",
        target: ref("textbox", "Work email"),
        text: applicant.email
      })
      await call("select", "browser_select_option", {
        element: "Plan",
        target: ref("combobox", "Plan"),
        values: [applicant.plan]
      })
      await call("check", "browser_click", {
        element: "I agree to the terms of service",
        target: ref("checkbox", "I agree to the terms of service")
      })
      await call("click", "browser_click", { element: "Create account", target: ref("button", "Create account") })
      const read = await call("read", "browser_snapshot", {})
      await call("screenshot", "browser_take_screenshot", { scale: "css" })
      return read
    },
    batch: async (call, url) => {
      await call("navigate", "browser_navigate", { url })
      const ref = refIn(await call("snapshot", "browser_snapshot", {}), (role, name) =>
        RegExp(`${role} "${name}"[^\\n]*\\[ref=(\\w+)\\]`)
      )
      await call("fill_form", "browser_fill_form", {
        fields: [
          { name: "Full name", type: "textbox", target: ref("textbox", "Full name"), value: applicant.name },
          { name: "Work email", type: "textbox", target: ref("textbox", "Work email"), value: applicant.email },
          { name: "Plan", type: "combobox", target: ref("combobox", "Plan"), value: applicant.plan },
          {
            name: "I agree to the terms of service",
            type: "checkbox",
            target: ref("checkbox", "I agree to the terms of service"),
            value: "true"
          }
        ]
      })
      await call("click", "browser_click", { element: "Create account", target: ref("button", "Create account") })
      const read = await call("read", "browser_snapshot", {})
      await call("screenshot", "browser_take_screenshot", { scale: "css" })
      return read
    },
    tools: {
      snapshot: { tool: "browser_snapshot", args: () => ({}) },
      console: { tool: "browser_console_messages", args: () => ({ level: "info" }) },
      network: { tool: "browser_network_requests", args: () => ({ static: false }) },
      wait_for: { tool: "browser_wait_for", args: () => ({ text: "Welcome" }) },
      evaluate: { tool: "browser_evaluate", args: () => ({ function: "() => document.title" }) },
      pdf: { tool: "browser_pdf_save", args: () => ({}) },
      resize: { tool: "browser_resize", args: () => ({ width: 1280, height: 720 }) }
    }
  },
  {
    id: "chrome-devtools-mcp",
    label: `chrome-devtools-mcp ${versionOf("chrome-devtools-mcp")}`,
    argv: () => [
      join(root, "node_modules", "chrome-devtools-mcp", "build", "src", "bin", "chrome-devtools-mcp.js"),
      "--headless",
      "--isolated",
      "--executablePath",
      chromium,
      // Nothing leaves the machine: no usage statistics, no CrUX lookups, no update check (env below).
      "--no-usage-statistics",
      "--no-performance-crux",
      ...(peersNoSandbox ? ["--chromeArg=--no-sandbox"] : [])
    ],
    env: () => ({
      CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: "1",
      CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: "1",
      CHROME_DEVTOOLS_MCP_NO_CONFIG_DISCOVERY: "1"
    }),
    // Its page tools take a page id: an agent lists the pages once.
    prepare: async (call) => {
      const pages = await call("snapshot", "list_pages", {})
      return { pageId: Number(/^(\d+):.*\[selected\]/m.exec(pages)?.[1] ?? 1) }
    },
    task: async (call, url, { pageId }) => {
      await call("navigate", "navigate_page", { pageId, type: "url", url })
      const ref = refIn(await call("snapshot", "take_snapshot", { pageId }), (role, name) =>
        RegExp(`uid=(\\S+) ${role} "${name}"`)
      )
      await call("fill", "fill", { pageId, uid: ref("textbox", "Full name"), value: applicant.name })
      await call("fill", "fill", { pageId, uid: ref("textbox", "Work email"), value: applicant.email })
      await call("select", "fill", { pageId, uid: ref("combobox", "Plan"), value: applicant.plan })
      await call("check", "click", { pageId, uid: ref("checkbox", "I agree to the terms of service") })
      await call("click", "click", { pageId, uid: ref("button", "Create account") })
      const read = await call("read", "take_snapshot", { pageId })
      await call("screenshot", "take_screenshot", { pageId })
      return read
    },
    batch: async (call, url, { pageId }) => {
      await call("navigate", "navigate_page", { pageId, type: "url", url })
      const ref = refIn(await call("snapshot", "take_snapshot", { pageId }), (role, name) =>
        RegExp(`uid=(\\S+) ${role} "${name}"`)
      )
      await call("fill_form", "fill_form", {
        pageId,
        elements: [
          { uid: ref("textbox", "Full name"), value: applicant.name },
          { uid: ref("textbox", "Work email"), value: applicant.email },
          { uid: ref("combobox", "Plan"), value: applicant.plan },
          { uid: ref("checkbox", "I agree to the terms of service"), value: "true" }
        ]
      })
      await call("click", "click", { pageId, uid: ref("button", "Create account") })
      const read = await call("read", "take_snapshot", { pageId })
      await call("screenshot", "take_screenshot", { pageId })
      return read
    },
    tools: {
      snapshot: { tool: "take_snapshot", args: ({ pageId }) => ({ pageId }) },
      console: { tool: "list_console_messages", args: ({ pageId }) => ({ pageId }) },
      network: { tool: "list_network_requests", args: ({ pageId }) => ({ pageId }) },
      wait_for: { tool: "wait_for", args: ({ pageId }) => ({ pageId, text: ["Welcome"] }) },
      evaluate: { tool: "evaluate_script", args: ({ pageId }) => ({ pageId, function: "() => document.title" }) },
      resize: { tool: "resize_page", args: ({ pageId }) => ({ pageId, width: 1280, height: 720 }) }
    }
  }
]

interface Connected {
  readonly client: Client
  readonly pid: number
  readonly initializeMs: number
  /** Every process of the server's tree seen so far: what must be gone after it stops. */
  readonly seen: Set<number>
  readonly stderr: () => string
}

/** Spawns the server with the official client over stdio; stopped as its host would (stdin closed), and reaped. */
const connect = (server: Server, dir: string) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<Connected> => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [...server.argv(dir)],
        cwd: dir,
        env: { ...(process.env as Record<string, string>), ...server.env(dir) },
        stderr: "pipe"
      })
      let stderr = ""
      transport.stderr?.on("data", (chunk) => {
        stderr = (stderr + String(chunk)).slice(-4_000)
      })
      const client = new Client({ name: "switchyard-bench", version: "1.0.0" })
      const started = performance.now()
      await client.connect(transport)
      const initializeMs = performance.now() - started
      const pid = transport.pid ?? 0
      return { client, pid, initializeMs, seen: new Set(ProcessTree.tree(pid)), stderr: () => stderr }
    }),
    (c) =>
      Effect.promise(async () => {
        for (const pid of ProcessTree.tree(c.pid)) c.seen.add(pid)
        await c.client.close()
        const pids = [...c.seen]
        await waitFor(() => pids.every((pid) => ProcessTree.tree(pid).length === 0), 5_000)
        const left = ProcessTree.killLeft(pids)
        if (left > 0) process.stderr.write(`peers: ${server.id} left ${left} processes running; killed\n`)
      })
  )

const median = (xs: ReadonlyArray<number>) => Stats.summarize(xs, 0).median

export const run = (options: { readonly rounds: number; readonly spawns: number }) =>
  Effect.gen(function* () {
    const url = yield* site
    const chromium = yield* LocalChromium.findExecutable().pipe(Effect.orDie)
    const all = definitions(chromium)
    const base = mkdtempSync(join(tmpdir(), "switchyard-bench-peers-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(base, { recursive: true, force: true })))

    // Spawn → initialize answered, on fresh processes (interleaved), before the long-lived servers start.
    const initialize = new Map<ServerId, Array<number>>(all.map((s) => [s.id, []]))
    for (let i = 0; i < options.spawns; i++) {
      for (const server of all) {
        const dir = mkdtempSync(join(base, `${server.id}-init-`))
        const ms = yield* Effect.scoped(Effect.map(connect(server, dir), (c) => c.initializeMs))
        initialize.get(server.id)!.push(ms)
      }
    }

    const samples = new Map(
      all.map((s) => [
        s.id,
        {
          tasks: [] as Array<Array<Call>>,
          wall: [] as Array<number>,
          cpu: [] as Array<number>,
          memory: [] as Array<{
            service: ReturnType<typeof ProcessTree.memoryMiB>
            browser: ReturnType<typeof ProcessTree.memoryMiB>
            spare: ReturnType<typeof ProcessTree.memoryMiB>
          }>,
          failures: 0,
          firstFailure: undefined as string | undefined,
          batch: {
            tasks: [] as Array<Array<Call>>,
            wall: [] as Array<number>,
            failures: 0,
            firstFailure: undefined as string | undefined
          },
          tools: new Map<ToolKind, { tool: string; ms: Array<number>; bytes: Array<number>; error?: string }>()
        }
      ])
    )
    const live = new Map<
      ServerId,
      { connected: Connected; context: Record<string, unknown>; caller: (into: Array<Call>) => Caller }
    >()
    for (const server of all) {
      const connected = yield* connect(server, mkdtempSync(join(base, `${server.id}-`)))
      initialize.get(server.id)!.push(connected.initializeMs)
      yield* Effect.promise(() => connected.client.listTools())
      const caller =
        (into: Array<Call>): Caller =>
        async (kind, tool, args) => {
          const started = performance.now()
          const result = await connected.client.callTool({ name: tool, arguments: args }, undefined, {
            timeout: 60_000
          })
          const ms = performance.now() - started
          const content = (result.content ?? []) as Array<{ type: string; text?: string; data?: string }>
          const text = content.flatMap((c) => (c.type === "text" && c.text !== undefined ? [c.text] : [])).join("\n")
          into.push({
            kind,
            ms,
            text: content.reduce((n, c) => n + (c.type === "text" ? Buffer.byteLength(c.text ?? "") : 0), 0),
            image: content.reduce(
              (n, c) => n + (c.type === "image" ? Buffer.byteLength(c.data ?? "", "base64") : 0),
              0
            ),
            structured:
              result.structuredContent === undefined ? 0 : Buffer.byteLength(JSON.stringify(result.structuredContent))
          })
          if (result.isError) throw new Error(`${tool} answered an error: ${text.slice(0, 400)}`)
          return text
        }
      const context = yield* Effect.promise(() => server.prepare(caller([])))
      live.set(server.id, { connected, context, caller })
    }

    const once = (server: Server, record: boolean) =>
      Effect.promise(async () => {
        const { connected, context, caller } = live.get(server.id)!
        const entry = samples.get(server.id)!
        const calls: Array<Call> = []
        const before = new Map(ProcessTree.tree(connected.pid).map((pid) => [pid, ProcessTree.cpuMs([pid])]))
        const started = performance.now()
        let failure: string | undefined
        try {
          const read = await server.task(caller(calls), url, context)
          if (!read.includes(welcome)) failure = `the result read had no "${welcome}": ${read.slice(0, 300)}`
        } catch (error) {
          failure = `${(error as Error).message} (stderr: ${connected.stderr().slice(-500)})`
        }
        const wall = performance.now() - started
        const after = ProcessTree.tree(connected.pid)
        for (const pid of after) connected.seen.add(pid)
        const cpu = after.reduce((n, pid) => n + ProcessTree.cpuMs([pid]) - (before.get(pid) ?? 0), 0)
        if (!record) return
        if (failure !== undefined) {
          entry.failures++
          entry.firstFailure ??= failure
          return
        }
        entry.tasks.push(calls)
        entry.wall.push(wall)
        entry.cpu.push(cpu)
        // The oldest process the server started is the session's browser; later ones are spares for other sessions.
        const [browser = [], ...spares] = ProcessTree.children(connected.pid)
        entry.memory.push({
          service: ProcessTree.memoryMiB([connected.pid]),
          browser: ProcessTree.memoryMiB(browser),
          spare: ProcessTree.memoryMiB(spares.flat())
        })
      })

    /** The task with the batch fill; then, on its page, each tool the server has for the probed kinds. */
    const batched = (server: Server, record: boolean, probe: boolean) =>
      Effect.promise(async () => {
        const { connected, context, caller } = live.get(server.id)!
        const entry = samples.get(server.id)!.batch
        const calls: Array<Call> = []
        const started = performance.now()
        let failure: string | undefined
        try {
          const read = await server.batch(caller(calls), url, context)
          if (!read.includes(welcome)) failure = `the result read had no "${welcome}": ${read.slice(0, 300)}`
        } catch (error) {
          failure = `${(error as Error).message} (stderr: ${connected.stderr().slice(-500)})`
        }
        const wall = performance.now() - started
        if (record && failure !== undefined) {
          entry.failures++
          entry.firstFailure ??= failure
        } else if (record) {
          entry.tasks.push(calls)
          entry.wall.push(wall)
        }
        if (!probe) return
        const tools = samples.get(server.id)!.tools
        for (const kind of toolKinds) {
          const probed = server.tools[kind]
          if (probed === undefined) continue
          const seen = tools.get(kind) ?? { tool: probed.tool, ms: [], bytes: [] }
          tools.set(kind, seen)
          const into: Array<Call> = []
          try {
            await caller(into)("read", probed.tool, probed.args(context))
            seen.ms.push(into[0]!.ms)
            seen.bytes.push(into[0]!.text)
          } catch (error) {
            seen.error ??= (error as Error).message.slice(0, 200)
          }
        }
      })

    // A first task each, not recorded: browsers start on the first call.
    for (const server of all) yield* once(server, false)
    for (const server of all) yield* batched(server, false, false)
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < all.length; k++) {
        const server = all[(round + k) % all.length]!
        yield* once(server, true)
        yield* batched(server, true, round < Math.min(options.rounds, 5))
      }
    }

    const result = (server: Server): ServerResult => {
      const entry = samples.get(server.id)!
      const calls = entry.tasks.flat()
      const perTask = (f: (c: Call) => number) => median(entry.tasks.map((task) => task.reduce((n, c) => n + f(c), 0)))
      return {
        label: server.label,
        tasks: entry.tasks.length,
        failures: entry.failures,
        ...(entry.firstFailure === undefined ? {} : { firstFailure: entry.firstFailure }),
        task: Stats.summarize(entry.wall),
        perCall: Object.fromEntries(
          kinds.flatMap((kind) => {
            const ms = calls.filter((c) => c.kind === kind).map((c) => c.ms)
            return ms.length === 0 ? [] : [[kind, Stats.summarize(ms)]]
          })
        ),
        callsPerTask: median(entry.tasks.map((t) => t.length)),
        textBytesPerTask: perTask((c) => c.text),
        imageBytesPerTask: perTask((c) => c.image),
        structuredBytesPerTask: perTask((c) => c.structured),
        textBytesByKind: Object.fromEntries(
          kinds.flatMap((kind) => {
            const bytes = calls.filter((c) => c.kind === kind).map((c) => c.text)
            return bytes.length === 0 ? [] : [[kind, median(bytes)]]
          })
        ),
        cpuMsPerTask: Stats.summarize(entry.cpu),
        memory: {
          serviceRssMiB: Stats.summarize(entry.memory.map((m) => m.service.rss)).median,
          servicePssMiB: Stats.summarize(entry.memory.map((m) => m.service.pss)).median,
          serviceUssMiB: Stats.summarize(entry.memory.map((m) => m.service.uss)).median,
          browserRssMiB: Stats.summarize(entry.memory.map((m) => m.browser.rss)).median,
          browserPssMiB: Stats.summarize(entry.memory.map((m) => m.browser.pss)).median,
          browserUssMiB: Stats.summarize(entry.memory.map((m) => m.browser.uss)).median,
          ...(entry.memory.some((m) => m.spare.processes > 0)
            ? {
                spareUssMiB: Stats.summarize(entry.memory.map((m) => m.spare.uss)).median,
                sparePssMiB: Stats.summarize(entry.memory.map((m) => m.spare.pss)).median,
                spareRssMiB: Stats.summarize(entry.memory.map((m) => m.spare.rss)).median
              }
            : {}),
          processes: median(entry.memory.map((m) => m.service.processes + m.browser.processes + m.spare.processes))
        },
        initialize: Stats.summarize(initialize.get(server.id)!),
        batch: {
          tasks: entry.batch.tasks.length,
          failures: entry.batch.failures,
          ...(entry.batch.firstFailure === undefined ? {} : { firstFailure: entry.batch.firstFailure }),
          task: Stats.summarize(entry.batch.wall),
          callsPerTask: median(entry.batch.tasks.map((t) => t.length)),
          textBytesPerTask: median(entry.batch.tasks.map((task) => task.reduce((n, c) => n + c.text, 0))),
          perCall: Object.fromEntries(
            batchKinds.flatMap((kind) => {
              const ms = entry.batch.tasks
                .flat()
                .filter((c) => c.kind === kind)
                .map((c) => c.ms)
              return ms.length === 0 ? [] : [[kind, Stats.summarize(ms)]]
            })
          )
        },
        tools: Object.fromEntries(
          [...entry.tools].map(([kind, seen]) => [
            kind,
            seen.ms.length === 0
              ? { tool: seen.tool, error: seen.error ?? "not called" }
              : { tool: seen.tool, textBytes: median(seen.bytes), ms: median(seen.ms) }
          ])
        )
      }
    }
    return {
      rounds: options.rounds,
      peersNoSandbox,
      servers: Object.fromEntries(all.map((s) => [s.id, result(s)])) as Record<ServerId, ServerResult>
    } satisfies PeersResult
  }).pipe(Effect.scoped)
