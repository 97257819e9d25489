/**
 * `switchyard apply --job <url> --profile <file>`: runs one job application as a durable workflow in this process,
 * on the store (embedded SQLite by default, PostgreSQL when `DATABASE_URL` names one). Run it again after a crash and
 * it resumes where it stopped. While it runs, stdin takes the service's JSON-RPC (the session is `apply-<run>`) plus
 * `apply.status`; `browser.resume` on that session ends a person's takeover. Progress goes to stderr; the result is
 * the last line on stdout, as a JSON-RPC notification `apply.done`.
 */
import { createInterface } from "node:readline"
import { Effect, Fiber, FiberSet, Layer } from "effect"
import { ClusterWorkflowEngine, SingleRunner } from "effect/cluster"
import * as Digest from "effect/crypto/Digest"
import { DurableDeferred, type WorkflowEngine } from "effect/workflow"
import { splitCommon } from "../Cascade/Tool.ts"
import { TaskEvents } from "../Cluster/Events.ts"
import { SavedStates } from "../Cluster/SavedState.ts"
import * as SessionHost from "../Cluster/SessionHost.ts"
import * as Store from "../Cluster/Store.ts"
import type * as Config from "../Server/Config.ts"
import * as JsonRpc from "../Server/JsonRpc.ts"
import * as Service from "../Server/Service.ts"
import { Sessions, sessionNameOf } from "../Server/Sessions.ts"
import * as Profile from "./Profile.ts"
import { JobApplication, personFor, runOf, sessionOf, layer as workflowLayer } from "./Workflow.ts"

export interface ApplyOptions {
  readonly job: string
  readonly profile: string
  readonly store: Store.StoreOptions
}

/** The workflow engine on one machine: a single runner whose shards, messages and workflows live in the store. */
export const engineLayer = (store: Store.StoreOptions) => {
  const sql = Store.layer(store)
  const records = Layer.mergeAll(TaskEvents.layer, SavedStates.layer).pipe(Layer.provideMerge(sql))
  const runner = SingleRunner.layer({
    runnerStorage: "sql",
    // A runner killed mid-step holds its shard locks until they expire: seconds, not the default half-minute.
    shardingConfig: { shardLockExpiration: "6 seconds", shardLockRefreshInterval: "2 seconds" }
  }).pipe(Layer.provide(Digest.layerWebCrypto))
  return ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(runner), Layer.provideMerge(records))
}

/** The person's takeover on a run's session ends: the step waiting for them runs again. */
const resume = (session: string) =>
  Effect.gen(function* () {
    const run = runOf(session)
    if (run === undefined) return undefined
    const events = yield* TaskEvents
    const history = yield* events.list(run)
    const asked = history.filter((e) => e.eventType === "human_needed")
    const done = new Set(history.filter((e) => e.eventType === "human_resumed").map((e) => e.data.token))
    const open = asked.find((e) => !done.has(e.data.token))
    if (open === undefined) return undefined
    const token = open.data.token as DurableDeferred.Token
    yield* DurableDeferred.succeed(personFor(String(open.data.step)), { token, value: undefined })
    yield* events.record(run, "human_resumed", { step: open.data.step, session, token })
    return { resumed: true, step: open.data.step }
  })

/** The service's JSON-RPC methods, with `browser.resume` ending a run's takeover and `apply.status` reading it. */
const handlerOf = Effect.gen(function* () {
  const sessions = yield* Sessions
  const events = yield* TaskEvents
  const context = yield* Effect.context<TaskEvents | WorkflowEngine.WorkflowEngine>()
  const table = JsonRpc.methods(sessions)
  const handler: JsonRpc.Handler = (method, params) => {
    const call = splitCommon(params)
    if ((method === "browser.resume" || method === "browser_resume") && typeof call.session === "string") {
      return resume(call.session).pipe(
        Effect.provideContext(context),
        Effect.flatMap((answer) =>
          answer === undefined ? (table.get(method)?.(call) ?? Effect.succeed(null)) : Effect.succeed(answer)
        )
      )
    }
    if (method === "apply.status") {
      const run = (call.args as { run?: unknown }).run
      return sessionNameOf(call.session).pipe(
        Effect.flatMap((session) => events.list(typeof run === "string" ? run : (runOf(session) ?? session)))
      )
    }
    const found = table.get(method)
    return found === undefined
      ? Effect.fail(
          new JsonRpc.RpcError({ code: JsonRpc.ErrorCode.methodNotFound, message: `Method not found: ${method}` })
        )
      : found(call)
  }
  return handler
})

/** JSON-RPC on stdin for as long as the application runs; stdin closing does not end it. */
const serveStdin = (handler: JsonRpc.Handler) =>
  Effect.gen(function* () {
    const running = yield* FiberSet.make()
    const runFork = yield* FiberSet.runtime(running)()
    const inFlight: JsonRpc.InFlight = new Map()
    const input = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
    yield* Effect.addFinalizer(() => Effect.sync(() => input.close()))
    input.on("line", (line) => {
      if (line.trim() === "") return
      runFork(
        JsonRpc.handleLine(handler, line, inFlight).pipe(
          Effect.flatMap((out) =>
            out === undefined ? Effect.void : Effect.sync(() => process.stdout.write(`${out}\n`))
          )
        )
      )
    })
  })

export const run = (config: Config.ServiceConfig, options: ApplyOptions) =>
  Effect.gen(function* () {
    const profile = yield* Profile.load(options.profile)
    const payload = { job: options.job, profile }
    const executionId = yield* JobApplication.executionId(payload)
    process.stderr.write(
      `switchyard apply: run ${executionId} on ${Store.describe(options.store)}; session ${sessionOf(executionId)}\n`
    )
    yield* Service.run((stop) =>
      Effect.gen(function* () {
        yield* serveStdin(yield* handlerOf)
        const application = yield* JobApplication.execute(payload).pipe(Effect.forkScoped)
        const outcome = yield* Fiber.join(application).pipe(
          Effect.map((result) => ({ ok: true as const, result })),
          Effect.catch((error) =>
            Effect.succeed({ ok: false as const, error: { type: error.type, message: error.message } })
          ),
          Effect.raceFirst(stop.pipe(Effect.as({ ok: false as const, error: { type: "stopped", message: "stopped" } })))
        )
        process.stdout.write(
          `${JSON.stringify({ jsonrpc: "2.0", method: "apply.done", params: { run: executionId, ...outcome } })}\n`
        )
        process.stderr.write(
          outcome.ok
            ? `switchyard apply: ${outcome.result.platform}: ${outcome.result.confirmation} (${outcome.result.url})\n`
            : `switchyard apply: not finished: ${outcome.error.message}\n`
        )
        if (!outcome.ok) process.exitCode = outcome.error.type === "stopped" ? 130 : 1
        const sessions = yield* Sessions
        yield* sessions.shutdown
      })
    ).pipe(
      Effect.provide(
        workflowLayer.pipe(
          Layer.provideMerge(SessionHost.layer),
          // The sessions emit engine events into the same store the steps are written to.
          Layer.provideMerge(Service.layer(config, TaskEvents.layerEngineEvents)),
          Layer.provideMerge(engineLayer(options.store))
        )
      )
    )
  }).pipe(Effect.scoped)
