/** `switchyard apply` as users run it, for tests: a real process on an embedded store, JSON-RPC on its stdin. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { DatabaseSync } from "node:sqlite"
import { afterEach, assert } from "@effect/vitest"
import { Effect } from "effect"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { outcomeOf } from "./Command.ts"
import { processesMatching } from "./Processes.ts"
import { waitFor } from "./Wait.ts"

const main = join(import.meta.dirname, "..", "..", "src", "Main.ts")

export interface ApplyProcess {
  readonly child: ChildProcessWithoutNullStreams
  readonly call: (method: string, params?: unknown) => Promise<Record<string, unknown>>
  /** The `apply.done` notification, or what the process said when it exited without one. */
  readonly done: Promise<Record<string, unknown>>
  readonly exited: Promise<number | null>
  readonly stderr: () => string
}

export const startApply = (args: ReadonlyArray<string>, env: Record<string, string>): ApplyProcess => {
  const child = spawn(process.execPath, [main, "apply", ...args], {
    env: { ...process.env, SWITCHYARD_IDLE_TIMEOUT_MS: "0", ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + String(chunk)).slice(-20_000)
  })
  const waiting = new Map<unknown, (answer: Record<string, unknown>) => void>()
  let resolveDone: (value: Record<string, unknown>) => void = () => {}
  const done = new Promise<Record<string, unknown>>((resolve) => {
    resolveDone = resolve
  })
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as Record<string, unknown>
    if (message.method === "apply.done") return resolveDone(message.params as Record<string, unknown>)
    waiting.get(message.id)?.(message)
    waiting.delete(message.id)
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      resolveDone({ ok: false, exited: code, stderr: stderr.slice(-3_000) })
      for (const w of waiting.values()) w({ error: { message: `exited: ${stderr.slice(-2_000)}` } })
      resolve(code)
    })
  )
  let id = 0
  return {
    child,
    done,
    exited,
    stderr: () => stderr,
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const callId = ++id
        waiting.set(callId, resolve)
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: callId, method, params })}\n`)
      })
  }
}

/** The events the store holds, read as another process would while the service runs. */
export const eventsIn = (file: string): Array<{ type: string; data: Record<string, unknown> }> => {
  if (!existsSync(file)) return []
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    db.exec("PRAGMA busy_timeout = 5000")
    return (
      db.prepare("SELECT event_type, data FROM task_events ORDER BY id").all() as Array<{
        event_type: string
        data: string
      }>
    ).map((row) => ({ type: row.event_type, data: JSON.parse(row.data) as Record<string, unknown> }))
  } catch {
    return []
  } finally {
    db.close()
  }
}

/** How many times each step started, by step name. */
export const startsPerStep = (events: ReadonlyArray<{ type: string; data: Record<string, unknown> }>) => {
  const starts: Record<string, number> = {}
  for (const e of events)
    if (e.type === "step_started") starts[String(e.data.step)] = (starts[String(e.data.step)] ?? 0) + 1
  return starts
}

/** A `switchyard <command> …` a person types and waits for; resolves with its exit code and what it said. */
export const cli = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  outcomeOf(
    spawn(process.execPath, [main, command, ...args], {
      env: { ...process.env, SWITCHYARD_IDLE_TIMEOUT_MS: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
  )

/** `switchyard resume …` as a person types it. */
export const resumeCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => cli("resume", args, env)

/**
 * The apply processes and folders a test file starts, put in `started` and `dirs`: after each test every process is
 * killed, nothing is left running under a folder, its browsers' profiles are reaped and the folder is removed.
 */
export const cleanedAfterEach = () => {
  const started: Array<ApplyProcess> = []
  const dirs: Array<string> = []
  afterEach(async () => {
    for (const p of started.splice(0))
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL")
    for (const dir of dirs.splice(0)) {
      // Every browser the runs started is gone with them (their profiles live under the run's own TMPDIR).
      assert.isTrue(await waitFor(() => processesMatching(dir).length === 0, 10_000), `processes left under ${dir}`)
      await Effect.runPromise(LocalChromium.reapStaleProfiles(dir))
      rmSync(dir, { recursive: true, force: true })
    }
  })
  return { started, dirs }
}
