/**
 * Step and engine events in the store, one row each (seed 001 §10's `task_events`: run, event type, JSON data), so
 * the dashboard's questions — switches per run, switch latency, success per platform and engine — are one query.
 * A call's run is its trace id: a job application's calls carry the run's id, an agent's calls their own.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Events from "../Logging/Events.ts"

/** The engine events seed 001 §10 tracks, stored beside the steps: every call's, whichever surface it came from (MCP,
 * JSON-RPC, a workflow's step). `engine_operation` is one engine attempt, a failed one too, so the success rate per
 * engine counts what each engine did, not only the level that answered in the end. */
const stored = new Set([
  "engine_connected",
  "engine_disconnected",
  "engine_switch",
  "engine_operation",
  "engine_failure",
  "cascade_escalation",
  "human_takeover"
])

/** An event's row data: the event's own fields and the call's, an attempt's outcome as seed 001's `success`. */
const rowOf = (event: Events.Stamped): Record<string, unknown> => {
  const {
    event: _type,
    traceId: _trace,
    toolArgs: _args,
    ...data
  } = event as Events.Stamped & {
    readonly toolArgs?: unknown
  }
  if (event.event !== "engine_operation") return data
  const { mode, outcome, action, stepId, ...rest } = data as Record<string, unknown>
  return {
    ...rest,
    engine: typeof mode === "string" ? `${event.engine}:${mode}` : event.engine,
    operation: action ?? null,
    step: stepId ?? null,
    platform: event.platform ?? "unknown",
    success: outcome === "success"
  }
}

export interface TaskEvent {
  readonly workflowRunId: string
  readonly eventType: string
  readonly data: Record<string, unknown>
  readonly createdAt: string
}

export class TaskEvents extends Context.Service<
  TaskEvents,
  {
    readonly record: (workflowRunId: string, eventType: string, data: Record<string, unknown>) => Effect.Effect<void>
    /** Writes an event that must be durable before what follows it (a mark before a click): fails when it is not. */
    readonly append: (
      workflowRunId: string,
      eventType: string,
      data: Record<string, unknown>
    ) => Effect.Effect<void, SqlError>
    readonly list: (workflowRunId: string) => Effect.Effect<ReadonlyArray<TaskEvent>>
  }
>()("switchyard/TaskEvents") {
  /**
   * The engine events also written to the store, under the call's trace id as the run (a job application's calls
   * carry its run id as their trace id), so the dashboard's queries see switches beside the steps.
   */
  static readonly layerEngineEvents = Layer.effect(
    Events.Events,
    Effect.gen(function* () {
      const inner = yield* Events.Events
      const tasks = yield* TaskEvents
      return {
        emit: (event: Events.Stamped) =>
          !stored.has(event.event) || event.traceId === undefined
            ? inner.emit(event)
            : inner.emit(event).pipe(Effect.andThen(tasks.record(event.traceId, event.event, rowOf(event))))
      }
    })
  )

  static readonly layer = Layer.effect(
    TaskEvents,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const insert = (run: string, type: string, json: string) =>
        sql.onDialectOrElse({
          pg: () =>
            sql`INSERT INTO task_events (workflow_run_id, event_type, data) VALUES (${run}, ${type}, ${json}::jsonb)`,
          orElse: () =>
            sql`INSERT INTO task_events (workflow_run_id, event_type, data) VALUES (${run}, ${type}, ${json})`
        })
      return TaskEvents.of({
        append: (run, type, data) => insert(run, type, JSON.stringify(data)).pipe(Effect.asVoid),
        // An event that cannot be written is logged, never fails the step it describes.
        record: (run, type, data) =>
          insert(run, type, JSON.stringify(data)).pipe(
            Effect.asVoid,
            Effect.catch((error) => Effect.logWarning(`event ${type} of ${run} not stored: ${error.message}`))
          ),
        list: (run) =>
          sql<{ workflow_run_id: string; event_type: string; data: unknown; created_at: unknown }>`
            SELECT workflow_run_id, event_type, data, created_at FROM task_events
            WHERE workflow_run_id = ${run} ORDER BY id`.pipe(
            Effect.map((rows) =>
              rows.map((row) => ({
                workflowRunId: row.workflow_run_id,
                eventType: row.event_type,
                data: (typeof row.data === "string" ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
                createdAt: String(row.created_at)
              }))
            ),
            Effect.orDie
          )
      })
    })
  )
}
