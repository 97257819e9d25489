/**
 * What `switchyard status` shows of the store: the fleet (runners, their capacity and sessions) and seed 001 §10's
 * dashboard questions answered from the step and engine events — switch frequency per run, average switch latency,
 * success rate per platform and engine (every engine attempt, failed ones too) — plus who called (agents over MCP or
 * JSON-RPC, or workflow steps), sessions moved off a dead runner and restored, and the workflow's wall time per step.
 * On PostgreSQL the seed's own queries run as written; on the embedded SQLite store, the same questions in its dialect.
 */
import { existsSync } from "node:fs"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { readRunners } from "./Fleet.ts"
import * as Store from "./Store.ts"

/** Seed 001 §10's queries, as written there (PostgreSQL), then the fleet's own. */
export const seedQueries = {
  switchesPerRun: `SELECT workflow_run_id, COUNT(*) AS switch_count,
      ARRAY_AGG(data->>'reason' ORDER BY created_at) AS reasons
    FROM task_events WHERE event_type = 'engine_switch'
    GROUP BY workflow_run_id ORDER BY switch_count DESC`,
  switchLatency: `SELECT (data->>'from')::text AS from_engine, (data->>'to')::text AS to_engine,
      ROUND(AVG((data->>'durationMs')::numeric)) AS avg_latency_ms, COUNT(*) AS total_switches
    FROM task_events WHERE event_type = 'engine_switch'
    GROUP BY data->>'from', data->>'to'`,
  successByPlatform: `SELECT data->>'platform' AS platform, data->>'engine' AS engine,
      COUNT(*) FILTER (WHERE (data->>'success')::boolean = true) AS successes, COUNT(*) AS total,
      ROUND(COUNT(*) FILTER (WHERE (data->>'success')::boolean = true)::numeric / NULLIF(COUNT(*), 0), 3) AS success_rate
    FROM task_events WHERE event_type = 'engine_operation'
    GROUP BY data->>'platform', data->>'engine' ORDER BY platform, success_rate DESC`,
  callers: `SELECT CASE WHEN workflow_run_id IN (SELECT workflow_run_id FROM task_events WHERE event_type = 'step_started')
        THEN 'workflow steps' ELSE 'agent calls (MCP, JSON-RPC)' END AS caller,
      COUNT(DISTINCT workflow_run_id) AS traces, COUNT(*) AS engine_attempts,
      COUNT(*) FILTER (WHERE (data->>'success')::boolean = true) AS successes
    FROM task_events WHERE event_type = 'engine_operation' GROUP BY 1 ORDER BY 1`,
  moves: `SELECT event_type AS event, COUNT(*) AS total, ROUND(AVG((data->>'durationMs')::numeric)) AS avg_ms
    FROM task_events WHERE event_type IN ('session_failover', 'session_restored') GROUP BY event_type ORDER BY 1`,
  stepTime: `SELECT data->>'step' AS step, COUNT(*) AS runs,
      ROUND(AVG((data->>'durationMs')::numeric)) AS avg_ms
    FROM task_events WHERE event_type = 'step_completed' GROUP BY data->>'step' ORDER BY avg_ms DESC`
} as const

/** The same questions in SQLite's dialect. */
const sqliteQueries: Record<keyof typeof seedQueries, string> = {
  switchesPerRun: `SELECT workflow_run_id, COUNT(*) AS switch_count, group_concat(data->>'reason', ' | ') AS reasons
    FROM task_events WHERE event_type = 'engine_switch'
    GROUP BY workflow_run_id ORDER BY switch_count DESC`,
  switchLatency: `SELECT data->>'from' AS from_engine, data->>'to' AS to_engine,
      ROUND(AVG(data->>'durationMs')) AS avg_latency_ms, COUNT(*) AS total_switches
    FROM task_events WHERE event_type = 'engine_switch'
    GROUP BY data->>'from', data->>'to'`,
  successByPlatform: `SELECT data->>'platform' AS platform, data->>'engine' AS engine,
      SUM(CASE WHEN data->>'success' THEN 1 ELSE 0 END) AS successes, COUNT(*) AS total,
      ROUND(CAST(SUM(CASE WHEN data->>'success' THEN 1 ELSE 0 END) AS REAL) / COUNT(*), 3) AS success_rate
    FROM task_events WHERE event_type = 'engine_operation'
    GROUP BY data->>'platform', data->>'engine' ORDER BY platform, success_rate DESC`,
  callers: `SELECT CASE WHEN workflow_run_id IN (SELECT workflow_run_id FROM task_events WHERE event_type = 'step_started')
        THEN 'workflow steps' ELSE 'agent calls (MCP, JSON-RPC)' END AS caller,
      COUNT(DISTINCT workflow_run_id) AS traces, COUNT(*) AS engine_attempts,
      SUM(CASE WHEN data->>'success' THEN 1 ELSE 0 END) AS successes
    FROM task_events WHERE event_type = 'engine_operation' GROUP BY 1 ORDER BY 1`,
  moves: `SELECT event_type AS event, COUNT(*) AS total, ROUND(AVG(data->>'durationMs')) AS avg_ms
    FROM task_events WHERE event_type IN ('session_failover', 'session_restored') GROUP BY event_type ORDER BY 1`,
  stepTime: `SELECT data->>'step' AS step, COUNT(*) AS runs, ROUND(AVG(data->>'durationMs')) AS avg_ms
    FROM task_events WHERE event_type = 'step_completed' GROUP BY data->>'step' ORDER BY avg_ms DESC`
}

const titles: Record<keyof typeof seedQueries, string> = {
  switchesPerRun: "engine switches per run",
  switchLatency: "average switch latency",
  successByPlatform: "success rate per platform and engine (every engine attempt)",
  callers: "engine attempts by caller",
  moves: "sessions moved off a dead runner, and restored",
  stepTime: "workflow wall time per step"
}

const table = (rows: ReadonlyArray<Record<string, unknown>>) => {
  if (rows.length === 0) return ["  (none yet)"]
  const keys = Object.keys(rows[0]!)
  const cell = (v: unknown) => (Array.isArray(v) ? v.join(" | ") : v === null ? "-" : String(v))
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => cell(r[k]).length)))
  const line = (values: ReadonlyArray<string>) => `  ${values.map((v, i) => v.padEnd(widths[i]!)).join("  ")}`.trimEnd()
  return [line(keys), ...rows.slice(0, 20).map((r) => line(keys.map((k) => cell(r[k]))))]
}

/** Each dashboard question's rows, from the store in context. */
export const answers = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const queries = sql.onDialectOrElse({ pg: () => seedQueries, orElse: () => sqliteQueries })
  const out: Partial<Record<keyof typeof seedQueries, ReadonlyArray<Record<string, unknown>>>> = {}
  for (const key of Object.keys(queries) as Array<keyof typeof seedQueries>) {
    out[key] = yield* sql.unsafe<Record<string, unknown>>(queries[key])
  }
  return out as Record<keyof typeof seedQueries, ReadonlyArray<Record<string, unknown>>>
})

/** The store's part of `switchyard status`; nothing when no store is configured or created yet. */
export const report = (store: Store.StoreOptions, failoverAfterMs = 3_000) =>
  Effect.gen(function* () {
    if (store.kind === "embedded" && !existsSync(store.file)) return ""
    const lines = ["", `store        ${Store.describe(store)}`]
    const sql = yield* SqlClient.SqlClient
    if (store.kind === "postgres") {
      const runners = yield* readRunners(failoverAfterMs)
      const sessions = yield* sql<{ session: string; runner: string }>`SELECT session, runner FROM fleet_sessions`
      lines.push(`fleet        ${runners.filter((r) => r.live).length} live runners of ${runners.length}`)
      for (const r of runners) {
        const held = sessions.filter((s) => s.runner === r.name).map((s) => s.session)
        lines.push(
          `  ${r.name.padEnd(4)} ${r.live ? "live" : "gone"}  ${r.address.padEnd(21)} ${r.assigned}/${r.capacity} sessions${held.length > 0 ? `: ${held.slice(0, 10).join(", ")}` : ""}${r.live ? "" : ` (silent ${Math.round(r.heartbeatAgoMs / 1000)} s)`}`
        )
      }
    }
    const results = yield* answers
    for (const key of Object.keys(results) as Array<keyof typeof seedQueries>) {
      lines.push(`${titles[key]}:`, ...table(results[key]))
    }
    return lines.join("\n")
  }).pipe(
    Effect.provide(Store.layer(store)),
    Effect.catch((error) => Effect.succeed(`\nstore        ${Store.describe(store)}: not readable (${error.message})`))
  )
