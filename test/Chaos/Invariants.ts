/**
 * What must hold after a chaos run, read from the outside: the answers the client got, the attempt logs on disk and
 * every file under the log root. Each check returns its findings; the test decides what fails the run.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Option } from "effect"
import * as EngineId from "../../src/EngineId.ts"
import * as Events from "../../src/Logging/Events.ts"

/** The error types the service promises (docs/errors.md): anything else is an untyped failure. */
export const errorTypes: ReadonlySet<string> = new Set([
  "element_not_found",
  "ambiguous_target",
  "invalid_input",
  "unsupported",
  "not_configured",
  "action_failed",
  "verification_failed",
  "navigation_failed",
  "timeout",
  "cdp_closed",
  "browser_unavailable",
  "browser_launch_failed",
  "invalid_endpoint",
  "endpoint_unreachable",
  "provider_error",
  "lease_timeout",
  "switch_failed",
  "not_initialized",
  "llm_error",
  "llm_bad_response",
  "human_timeout",
  "human_in_control",
  "shutting_down",
  "busy",
  "rejected_by_policy",
  "session_closed",
  "engine_cooling_down"
])

export interface Call {
  readonly id: string
  readonly session: string
  readonly method: string
  readonly traceId?: string
  readonly sentAt: number
  answeredAt?: number
  answer?: Record<string, unknown>
}

/** `ok`, the error's type, or why the answer is not one (`unanswered`, `untyped: …`, `wrong id`). */
export const outcomeOf = (call: Call): string => {
  const answer = call.answer
  if (answer === undefined) return "unanswered"
  if (answer.id !== call.id) return `wrong id (${JSON.stringify(answer.id)})`
  if (answer.result !== undefined) return "ok"
  const error = answer.error as { code?: number; message?: string; data?: { type?: unknown } } | undefined
  const type = error?.data?.type
  if ((error?.code === -32000 || error?.code === -32602) && typeof type === "string" && errorTypes.has(type)) {
    return type
  }
  return `untyped: ${JSON.stringify(error).slice(0, 300)}`
}

export const isProblem = (outcome: string) =>
  outcome === "unanswered" || outcome.startsWith("wrong id") || outcome.startsWith("untyped")

// ---------------------------------------------------------------------------------------------------------------
// attempt.jsonl

export interface AttemptEvents {
  readonly traceId: string
  readonly attemptId: string
  /** `stagehand:dom`, `playwright`, …: attempt ids are not unique across engines today (see `duplicateIds`). */
  readonly engine: string
  starts: number
  terminals: number
}

const files = (dir: string): Array<string> => {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((p) => join(dir, p))
    .filter((p) => {
      try {
        return statSync(p).isFile()
      } catch {
        return false
      }
    })
}

/**
 * Every engine attempt in the attempt logs under `root`, with how many `start` and terminal events it has; lines
 * that are not whole JSON, or not an event of the shared union, are bad lines.
 */
export const readAttempts = (root: string) => {
  const attempts = new Map<string, AttemptEvents>()
  const badLines: Array<string> = []
  for (const file of files(join(root, "browser-automation")).filter((f) => f.endsWith("attempt.jsonl"))) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line.trim() === "") continue
      let decoded: Option.Option<Events.Stamped>
      try {
        decoded = Events.decode(JSON.parse(line))
      } catch {
        badLines.push(`${file}: ${line.slice(0, 120)}`)
        continue
      }
      if (Option.isNone(decoded)) {
        badLines.push(`${file}: not an event: ${line.slice(0, 120)}`)
        continue
      }
      const event = decoded.value
      if (event.event !== "start" && event.event !== "success" && event.event !== "failure") continue
      const engine = EngineId.label({ kind: event.engine, mode: event.mode })
      const key = `${event.traceId}\u0000${event.attemptId}\u0000${engine}`
      const entry = attempts.get(key) ?? {
        traceId: String(event.traceId),
        attemptId: event.attemptId,
        engine,
        starts: 0,
        terminals: 0
      }
      if (event.event === "start") entry.starts++
      else entry.terminals++
      attempts.set(key, entry)
    }
  }
  return { attempts: [...attempts.values()], badLines }
}

/** Attempts that do not have exactly one `start` and exactly one `success` or `failure`. */
export const incomplete = (attempts: ReadonlyArray<AttemptEvents>) =>
  attempts.filter((a) => a.starts !== 1 || a.terminals !== 1)

/** Attempt ids that name attempts on more than one engine (one call, two cascade runs numbered from 1 each). */
export const duplicateIds = (attempts: ReadonlyArray<AttemptEvents>) => {
  const engines = new Map<string, Set<string>>()
  for (const a of attempts) {
    const key = `${a.traceId}\u0000${a.attemptId}`
    engines.set(key, (engines.get(key) ?? new Set()).add(a.engine))
  }
  return [...engines.entries()]
    .filter(([, set]) => set.size > 1)
    .map(([key, set]) => `${key.split("\u0000")[1]} (${[...set].join(", ")})`)
}

// ---------------------------------------------------------------------------------------------------------------
// secrets

/** Files under `root` (screenshots aside: their text inputs are masked in the page) that contain a canary. */
export const canaryLeaks = (root: string, canaries: ReadonlyArray<string>) => {
  const leaks: Array<{ file: string; canary: string }> = []
  for (const file of files(root).filter((f) => !f.endsWith(".png"))) {
    let text: string
    try {
      text = readFileSync(file, "utf8")
    } catch {
      continue
    }
    for (const canary of canaries) if (text.includes(canary)) leaks.push({ file, canary })
  }
  return { files: files(root).length, leaks }
}
