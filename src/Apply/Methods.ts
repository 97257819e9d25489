/**
 * The job application on a runner's JSON-RPC: `apply.start {job, profile}` starts one (or joins the one under way
 * for that job and applicant) wherever the fleet runs it and answers its run id at once; `apply.status {run}` answers
 * its step and engine events and, once it ended, its result.
 */
import { Effect, Schema } from "effect"
import { TaskEvents } from "../Cluster/Events.ts"
import { InvalidInput } from "../Errors/Page.ts"
import type { Method } from "../Server/JsonRpc.ts"
import { Profile } from "./Profile.ts"
import { JobApplication, sessionOf } from "./Workflow.ts"

const StartArgs = Schema.Struct({ job: Schema.String, profile: Profile })
const StatusArgs = Schema.Struct({ run: Schema.String })

const decode = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, args: unknown) =>
  Schema.decodeUnknownEffect(schema)(args).pipe(
    Effect.mapError((issue) => new InvalidInput({ field: "arguments", message: String(issue) }))
  )

export const methods = Effect.gen(function* () {
  const context = yield* Effect.context<TaskEvents | import("effect/workflow").WorkflowEngine.WorkflowEngine>()
  const events = yield* TaskEvents
  const start: Method = ({ args }) =>
    Effect.gen(function* () {
      const payload = yield* decode(StartArgs, args)
      const run = yield* JobApplication.execute(payload, { discard: true })
      return { run, session: sessionOf(run) }
    }).pipe(Effect.provideContext(context))
  const status: Method = ({ args }) =>
    Effect.gen(function* () {
      const { run } = yield* decode(StatusArgs, args)
      const result = yield* JobApplication.poll(run)
      return {
        run,
        session: sessionOf(run),
        events: yield* events.list(run),
        result:
          result._tag === "None"
            ? null
            : result.value._tag === "Complete"
              ? result.value.exit._tag === "Success"
                ? { ok: true, value: result.value.exit.value }
                : { ok: false, error: String(result.value.exit.cause) }
              : { suspended: true }
      }
    }).pipe(Effect.provideContext(context))
  return new Map<string, Method>([
    ["apply.start", start],
    ["apply.status", status]
  ])
})
