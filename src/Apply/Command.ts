/**
 * `switchyard apply --job <url> --profile <file>`: one job application as a durable workflow. On the embedded store
 * it runs in this process (run it again after a crash and it resumes where it stopped); with `DATABASE_URL` it is
 * handed to the fleet's runners and this process waits for it. While it runs, stdin takes JSON-RPC: the browser tools
 * (the session is `apply-<run>`; in this process only), `apply.status`, and `browser.resume` on that session, which
 * ends a person's takeover. Progress goes to stderr; the result is the last line on stdout, an `apply.done`
 * notification.
 */
import { dirname } from "node:path"
import { createInterface } from "node:readline"
import { NodeClusterSocket } from "@effect/platform-node"
import { Effect, Fiber, FiberSet, Layer, Option, Schedule } from "effect"
import { ClusterWorkflowEngine, SingleRunner } from "effect/cluster"
import * as Digest from "effect/crypto/Digest"
import { splitCommon } from "../Cascade/Tool.ts"
import { TaskEvents } from "../Cluster/Events.ts"
import * as Runner from "../Cluster/Runner.ts"
import { SavedStates } from "../Cluster/SavedState.ts"
import * as SessionHost from "../Cluster/SessionHost.ts"
import * as Store from "../Cluster/Store.ts"
import type * as Config from "../Server/Config.ts"
import * as JsonRpc from "../Server/JsonRpc.ts"
import * as Service from "../Server/Service.ts"
import { Sessions } from "../Server/Sessions.ts"
import * as Startup from "../Server/Startup.ts"
import * as Methods from "./Methods.ts"
import * as Profile from "./Profile.ts"
import { JobApplication, sessionOf, layer as workflowLayer } from "./Workflow.ts"

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

/** The service's JSON-RPC methods (when this process has sessions) and the application's own. */
const handlerOf = Effect.gen(function* () {
  const sessions = yield* Effect.serviceOption(Sessions)
  const table = new Map([
    ...Option.match(sessions, {
      onNone: (): Array<[string, JsonRpc.Method]> => [],
      onSome: (s) => [...JsonRpc.methods(s)]
    }),
    ...(yield* Methods.methods)
  ])
  const handler: JsonRpc.Handler = (method, params) => {
    const found = table.get(method)
    return found === undefined
      ? Effect.fail(
          new JsonRpc.RpcError({
            code: JsonRpc.ErrorCode.methodNotFound,
            message: `Method not found: ${method}; methods: ${[...table.keys()].join(", ")}`
          })
        )
      : found(splitCommon(params))
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

/** Step events as they are stored, on stderr, for a person watching a run another process executes. */
const follow = (run: string) =>
  Effect.gen(function* () {
    const events = yield* TaskEvents
    let seen = 0
    yield* events.list(run).pipe(
      Effect.tap((all) =>
        Effect.sync(() => {
          for (const e of all.slice(seen)) {
            if (e.eventType.startsWith("step_") || e.eventType.startsWith("human_"))
              process.stderr.write(
                `switchyard apply: ${e.eventType} ${String(e.data.step ?? "")}${e.data.runner ? ` on ${e.data.runner}` : ""}\n`
              )
          }
          seen = all.length
        })
      ),
      Effect.repeat(Schedule.spaced("1 second"))
    )
  })

/**
 * With a fleet's database: the application is handed to the fleet (the runners execute it, any of them after a
 * crash) and this process only waits, printing its steps; its stdin takes `apply.status` and `browser.resume`.
 */
const runOnFleet = (options: ApplyOptions, payload: typeof JobApplication.payloadSchema.Type, run: string) =>
  Effect.gen(function* () {
    const slots = yield* Runner.fromEnv(options.store)
    const sql = Store.layer(options.store)
    const client = NodeClusterSocket.layer({
      clientOnly: true,
      storage: "sql",
      shardingConfig: { availableShardGroups: Runner.shardingConfig(slots).availableShardGroups, shardsPerGroup: 12 }
    }).pipe(Layer.provide(sql))
    const layer = ClusterWorkflowEngine.layer.pipe(
      Layer.provideMerge(client),
      Layer.provideMerge(TaskEvents.layer.pipe(Layer.provideMerge(sql)))
    )
    yield* Effect.gen(function* () {
      yield* serveStdin(yield* handlerOf)
      yield* follow(run).pipe(Effect.forkScoped)
      return yield* report(run, JobApplication.execute(payload), Effect.never)
    }).pipe(Effect.provide(layer))
  })

/** Waits for the application and says how it ended: `apply.done` on stdout, a line on stderr, the exit code. */
const report = <R>(
  run: string,
  application: Effect.Effect<typeof JobApplication.successSchema.Type, typeof JobApplication.errorSchema.Type, R>,
  stop: Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const fiber = yield* application.pipe(Effect.forkScoped)
    const outcome = yield* Fiber.join(fiber).pipe(
      Effect.map((result) => ({ ok: true as const, result })),
      Effect.catch((error) =>
        Effect.succeed({ ok: false as const, error: { type: error.type, message: error.message } })
      ),
      Effect.raceFirst(stop.pipe(Effect.as({ ok: false as const, error: { type: "stopped", message: "stopped" } })))
    )
    process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", method: "apply.done", params: { run, ...outcome } })}\n`)
    process.stderr.write(
      outcome.ok
        ? `switchyard apply: ${outcome.result.platform}: ${outcome.result.confirmation} (${outcome.result.url})\n`
        : `switchyard apply: not finished: ${outcome.error.message}\n`
    )
    if (!outcome.ok) process.exitCode = outcome.error.type === "stopped" ? 130 : 1
  })

export const run = (configured: Config.ServiceConfig, options: ApplyOptions) =>
  Effect.gen(function* () {
    const profile = yield* Profile.load(options.profile)
    // The applicant's own résumé may be uploaded from where the profile names it, besides the configured folders.
    const config = {
      ...configured,
      uploads: { ...configured.uploads, roots: [...configured.uploads.roots, dirname(profile.resume)] }
    }
    const payload = { job: options.job, profile }
    const executionId = yield* JobApplication.executionId(payload)
    process.stderr.write(
      `switchyard apply: run ${executionId} on ${Store.describe(options.store)}; session ${sessionOf(executionId)}\n`
    )
    if (options.store.kind === "postgres") return yield* runOnFleet(options, payload, executionId)
    yield* Startup.run((stop) =>
      Effect.gen(function* () {
        yield* serveStdin(yield* handlerOf)
        yield* report(executionId, JobApplication.execute(payload), stop)
        const sessions = yield* Sessions
        yield* sessions.shutdown
      })
    ).pipe(
      Effect.provide(
        workflowLayer.pipe(
          Layer.provideMerge(SessionHost.layer),
          // The sessions emit engine events into the same store the steps are written to.
          Layer.provideMerge(Service.layer(config, undefined, TaskEvents.layerEngineEvents)),
          Layer.provideMerge(engineLayer(options.store))
        )
      )
    )
  }).pipe(Effect.scoped)
