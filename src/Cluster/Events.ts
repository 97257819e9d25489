/**
 * Step and engine events in the store, one row each (seed 001 §10's `task_events`: run, event type, JSON data), so
 * the dashboard's questions — switches per run, switch latency, success per platform and engine — are one query.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

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
    readonly list: (workflowRunId: string) => Effect.Effect<ReadonlyArray<TaskEvent>>
  }
>()("switchyard/TaskEvents") {
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
