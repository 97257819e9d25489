/**
 * The job application on JSON-RPC, beside the browser tools: `apply.start {job, profile}` starts one (or joins the
 * one under way for that job and applicant) wherever the engine runs it and answers its run id at once;
 * `apply.status {run}` answers its step and engine events and, once it ended, its result; `browser.resume` on a
 * run's session (`apply-<run>`) ends the person's takeover the run waits for (a durable wait: it may have been asked
 * before a restart), and on any other session is the tool as usual.
 */
import { Effect, Option, Schema } from "effect"
import { DurableDeferred, type WorkflowEngine } from "effect/workflow"
import { TaskEvents } from "../Cluster/Events.ts"
import { InvalidInput } from "../Errors/Page.ts"
import { type Method, methods as toolMethods } from "../Server/JsonRpc.ts"
import { Sessions } from "../Server/Sessions.ts"
import { Profile } from "./Profile.ts"
import { JobApplication, personFor, runOf, sessionOf } from "./Workflow.ts"

const StartArgs = Schema.Struct({ job: Schema.String, profile: Profile })
const StatusArgs = Schema.Struct({ run: Schema.String })

const decode = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, args: unknown) =>
  Schema.decodeUnknownEffect(schema)(args).pipe(
    Effect.mapError((issue) => new InvalidInput({ field: "arguments", message: String(issue) }))
  )

/** Ends the person's takeover a run waits for on `session`; `undefined` when none waits there. */
export const resume = (session: string) =>
  Effect.gen(function* () {
    const run = runOf(session)
    if (run === undefined) return undefined
    const events = yield* TaskEvents
    const history = yield* events.list(run)
    const done = new Set(history.filter((e) => e.eventType === "human_resumed").map((e) => e.data.token))
    const open = history.find((e) => e.eventType === "human_needed" && !done.has(e.data.token))
    if (open === undefined) return undefined
    const token = open.data.token as DurableDeferred.Token
    yield* DurableDeferred.succeed(personFor(String(open.data.step)), { token, value: undefined })
    yield* events.record(run, "human_resumed", { step: open.data.step, session, token })
    return { resumed: true, step: open.data.step }
  })

export const methods = Effect.gen(function* () {
  const context = yield* Effect.context<TaskEvents | WorkflowEngine.WorkflowEngine>()
  const events = yield* TaskEvents
  const sessions = yield* Effect.serviceOption(Sessions)
  const tools = Option.match(sessions, { onNone: () => new Map<string, Method>(), onSome: toolMethods })

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

  const resumeOr =
    (name: string): Method =>
    (call) =>
      (typeof call.session === "string" ? resume(call.session) : Effect.succeed(undefined)).pipe(
        Effect.provideContext(context),
        Effect.flatMap((answer) => {
          if (answer !== undefined) return Effect.succeed(answer)
          const tool = tools.get(name)
          return tool === undefined ? Effect.succeed({ resumed: false }) : tool(call)
        })
      )

  return new Map<string, Method>([
    ["apply.start", start],
    ["apply.status", status],
    ["browser.resume", resumeOr("browser.resume")],
    ["browser_resume", resumeOr("browser_resume")]
  ])
})
