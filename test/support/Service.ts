/** The service as users run it, for tests: a real `node src/Main.ts serve` process speaking JSON-RPC on stdio. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { Effect } from "effect"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { processesMatching } from "./Processes.ts"
import { waitFor } from "./Wait.ts"

const main = join(import.meta.dirname, "..", "..", "src", "Main.ts")
/** What bin/switchyard puts in NODE_OPTIONS, so tests and the bench run the service as users do. */
const serviceNodeOptions = "--max-semi-space-size=8"
/** glibc's malloc thresholds bin/switchyard fixes (why: there). */
export const serviceMalloc = { MALLOC_MMAP_THRESHOLD_: "131072", MALLOC_TRIM_THRESHOLD_: "131072" } as const
/** What bin/switchyard sets for the service's process, for a client that spawns the service itself. */
export const serviceProcessEnv = { ...serviceMalloc, NODE_OPTIONS: serviceNodeOptions } as const

/** The environment bin/switchyard runs the service in (its NODE_OPTIONS, malloc thresholds and compile cache), over `env`. */
export const serviceEnv = (env: Record<string, string | undefined>): Record<string, string> => {
  const options = [serviceNodeOptions, env.NODE_OPTIONS].filter(Boolean).join(" ")
  return {
    ...serviceMalloc,
    ...(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>),
    NODE_COMPILE_CACHE: env.NODE_COMPILE_CACHE ?? join(tmpdir(), "node-compile-cache"),
    NODE_OPTIONS: options
  }
}

export interface Service {
  readonly child: ChildProcessWithoutNullStreams
  readonly call: (method: string, params?: unknown) => Promise<Record<string, unknown>>
  readonly send: (line: string, key?: unknown) => Promise<Record<string, unknown>>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly stderr: () => string
  /** Resolves with the first capture group of `pattern` once the service prints it on stderr. */
  readonly stderrLine: (pattern: RegExp) => Promise<string>
  /** Calls still without an answer. */
  readonly unanswered: () => number
  /** Lines on stdout that answered no call: a duplicate or unsolicited answer. */
  readonly extra: () => number
}

const services: Array<Service> = []

/** For `afterEach`: kills services a test left running and reaps the profiles their browsers left. */
export const stopServices = async () => {
  const killed = services.splice(0).filter((s) => s.child.exitCode === null)
  for (const s of killed) s.child.kill("SIGKILL")
  await Promise.all(killed.map((s) => s.exited))
  // A SIGKILLed service leaves its profile for the next start to reap: reap it here.
  if (killed.length > 0) await waitFor(() => processesMatching("--user-data-dir=").length === 0, 5_000)
  await Effect.runPromise(LocalChromium.reapStaleProfiles())
}

/**
 * Starts `node src/Main.ts serve` (or another `entry`, as the bench's bundled one) with its own log root; `call` sends
 * a JSON-RPC request and awaits its answer.
 */
export const startService = (
  env: Record<string, string> = {},
  args?: ReadonlyArray<string>,
  entry: string = main
): Service => {
  const child = spawn(process.execPath, [entry, "serve", ...(args ?? ["--jsonrpc"])], {
    env: serviceEnv({
      ...process.env,
      SWITCHYARD_IDLE_TIMEOUT_MS: "0",
      // No browser started ahead unless a test asks for one: each test service runs only the browsers it uses.
      SWITCHYARD_WARM_BROWSERS: "0",
      SWITCHYARD_LOG_DIR: mkdtempSync(join(tmpdir(), "switchyard-logs-")),
      ...env
    }),
    stdio: ["pipe", "pipe", "pipe"]
  })
  // Answers come back in completion order: match them to calls by id (id-less errors go to the oldest waiter).
  const waiting = new Map<unknown, (line: Record<string, unknown>) => void>()
  let extra = 0
  createInterface({ input: child.stdout }).on("line", (line) => {
    let answer: Record<string, unknown>
    try {
      answer = JSON.parse(line) as Record<string, unknown>
    } catch {
      // stdout is the protocol channel: anything else there breaks every client.
      answer = { error: { code: 0, message: `stdout carried a line that is not JSON-RPC: ${line.slice(0, 200)}` } }
    }
    const key = waiting.has(answer.id) ? answer.id : waiting.keys().next().value
    const resolve = waiting.get(key)
    waiting.delete(key)
    if (resolve) resolve(answer)
    else extra++
  })
  let stderr = ""
  const watchers: Array<{ pattern: RegExp; resolve: (match: string) => void }> = []
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + String(chunk)).slice(-20_000)
    for (const w of [...watchers]) {
      const match = w.pattern.exec(stderr)
      if (match) {
        watchers.splice(watchers.indexOf(w), 1)
        w.resolve(match[1] ?? match[0])
      }
    }
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      // A service that dies answers nothing: fail the calls still waiting, with what it said on stderr.
      for (const resolveCall of waiting.values()) {
        resolveCall({ error: { code: 0, message: `the service exited (${signal ?? code}): ${stderr.slice(-2_000)}` } })
      }
      waiting.clear()
      resolve({ code, signal })
    })
  )
  let id = 0
  const send = (line: string, key: unknown = `raw-${++id}`) =>
    new Promise<Record<string, unknown>>((resolve) => {
      waiting.set(key, resolve)
      child.stdin.write(`${line}\n`)
    })
  const service: Service = {
    child,
    exited,
    send,
    unanswered: () => waiting.size,
    stderr: () => stderr,
    stderrLine: (pattern) =>
      new Promise((resolve, reject) => {
        const match = pattern.exec(stderr)
        if (match) return resolve(match[1] ?? match[0])
        watchers.push({ pattern, resolve })
        void exited.then(() =>
          reject(new Error(`the service exited before printing ${pattern}: ${stderr.slice(-2_000)}`))
        )
      }),
    extra: () => extra,
    call: (method, params = {}) => {
      const callId = ++id
      return send(JSON.stringify({ jsonrpc: "2.0", id: callId, method, params }), callId)
    }
  }
  services.push(service)
  return service
}
