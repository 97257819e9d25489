/**
 * The job application on JSON-RPC, beside the browser tools: `apply.start {job, profile, retry?, applications?}`
 * starts one (joins the attempt under way; with `retry`, a new attempt of one that failed or was cancelled) wherever
 * the engine runs it and answers its run id at once; `apply.status {run}` answers its attempts, events and result;
 * `apply.cancel {run}` cancels it; `browser.resume {session, answer?}` on an application's session (`apply-<id>`)
 * ends the person's wait it has (a durable wait: it may have been asked before a restart), and on any other session
 * is the tool as usual.
 */
import { Effect, Option, Schema } from "effect"
import type { WorkflowEngine } from "effect/workflow"
import { TaskEvents } from "../Cluster/Events.ts"
import { InvalidInput } from "../Errors/Page.ts"
import { type Method, methods as toolMethods } from "../Server/JsonRpc.ts"
import { Sessions } from "../Server/Sessions.ts"
import { Profile } from "./Profile.ts"
import * as Resume from "./Resume.ts"
import * as Runs from "./Runs.ts"
import * as Start from "./Start.ts"
import { JobApplication } from "./Workflow.ts"

const StartArgs = Schema.Struct({
  job: Schema.String,
  profile: Profile,
  retry: Schema.optional(Schema.Boolean),
  applications: Schema.optional(Schema.String)
})
const RunArgs = Schema.Struct({ run: Schema.String })
const ResumeArgs = Schema.Struct({ answer: Schema.optional(Runs.Answer) })

const decode = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, args: unknown) =>
  Schema.decodeUnknownEffect(schema)(args).pipe(
    Effect.mapError((issue) => new InvalidInput({ field: "arguments", message: String(issue) }))
  )

/** An application's attempts and the requested run's events and result, from the store and the engine. */
export const status = (run: string) =>
  Effect.gen(function* () {
    const events = yield* TaskEvents
    const application = yield* Runs.applicationOf(run)
    const attempts = yield* Effect.forEach(yield* Runs.attempts(application), Runs.describe)
    const polled = yield* JobApplication.poll(run)
    return {
      run,
      application,
      session: Runs.sessionOf(application),
      attempts: attempts.map((a) => ({
        attempt: a.attempt,
        run: a.run,
        outcome: a.outcome,
        ...(a.wait === undefined ? {} : { wait: a.wait, command: Runs.resumeCommand(a.wait) })
      })),
      events: yield* events.list(run),
      result:
        polled._tag === "None"
          ? null
          : polled.value._tag === "Complete"
            ? polled.value.exit._tag === "Success"
              ? { ok: true, value: polled.value.exit.value }
              : { ok: false, error: String(polled.value.exit.cause) }
            : { suspended: true }
    }
  })

/** Cancels the application's attempt `run` (or its latest, given the application): recorded, then interrupted. */
export const cancel = (run: string) =>
  Effect.gen(function* () {
    const events = yield* TaskEvents
    const application = yield* Runs.applicationOf(run)
    const latest = yield* Runs.current(application)
    const target = run === application ? latest : yield* Runs.describe({ attempt: 0, run })
    if (target.outcome.state !== "running") return { cancelled: false, run: target.run, outcome: target.outcome }
    yield* events.record(target.run, Runs.event.cancelRequested, {})
    yield* JobApplication.interrupt(target.run)
    return { cancelled: true, run: target.run }
  })

export const methods = Effect.gen(function* () {
  const context = yield* Effect.context<TaskEvents | WorkflowEngine.WorkflowEngine>()
  const sessions = yield* Effect.serviceOption(Sessions)
  const tools = Option.match(sessions, { onNone: () => new Map<string, Method>(), onSome: toolMethods })

  const start: Method = ({ args }) =>
    Effect.gen(function* () {
      const { retry, ...payload } = yield* decode(StartArgs, args)
      const plan = yield* Start.plan(payload, retry === true)
      const session = Runs.sessionOf(plan.application)
      if (plan.kind === "ended") return { run: plan.run, session, attempt: plan.attempt, outcome: plan.outcome }
      yield* JobApplication.execute(Start.payloadOf(payload, plan), { discard: true })
      return { run: plan.run, session, attempt: plan.attempt, ...(plan.kind === "join" ? { joined: true } : {}) }
    }).pipe(Effect.provideContext(context))

  const statusOf: Method = ({ args }) =>
    decode(RunArgs, args).pipe(
      Effect.flatMap(({ run }) => status(run)),
      Effect.provideContext(context)
    )

  const cancelOf: Method = ({ args }) =>
    decode(RunArgs, args).pipe(
      Effect.flatMap(({ run }) => cancel(run)),
      Effect.provideContext(context)
    )

  const resumeOr =
    (name: string): Method =>
    (call) =>
      Effect.gen(function* () {
        const wait = typeof call.session === "string" ? yield* Resume.waitOn(call.session) : undefined
        if (wait === undefined) {
          const tool = tools.get(name)
          return tool === undefined ? { resumed: false } : yield* tool(call)
        }
        const { answer } = yield* decode(ResumeArgs, call.args)
        return yield* Resume.complete(wait, answer)
      }).pipe(Effect.provideContext(context))

  return new Map<string, Method>([
    ["apply.start", start],
    ["apply.status", statusOf],
    ["apply.cancel", cancelOf],
    ["browser.resume", resumeOr("browser.resume")],
    ["browser_resume", resumeOr("browser_resume")]
  ])
})
