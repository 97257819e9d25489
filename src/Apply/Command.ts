/**
 * `switchyard apply --job <url> --profile <file>`: one job application as a durable workflow. On the embedded store
 * it runs in this process (run it again after a crash and it resumes where it stopped); with `DATABASE_URL` it is
 * handed to the fleet's runners and this process waits for it. An application that failed or was cancelled is not
 * run again unless `--retry` asks for a new attempt; `--status RUN` and `--cancel RUN` look at or stop one. While it
 * runs, each step is printed on stderr as it starts and ends, a person's wait with the command that ends it
 * (`switchyard resume <session>`), and stdin takes JSON-RPC: the browser tools (in this process only), `apply.status`,
 * `apply.cancel` and `browser.resume`. The result is the last line on stdout, an `apply.done` notification.
 */
import { dirname } from "node:path"
import { NodeClusterSocket } from "@effect/platform-node"
import { Cause, Effect, Exit, Fiber, FiberSet, Layer, Option } from "effect"
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
import * as Lines from "../Server/Lines.ts"
import * as Service from "../Server/Service.ts"
import { Sessions } from "../Server/Sessions.ts"
import * as Startup from "../Server/Startup.ts"
import * as Shell from "../Shell.ts"
import * as Methods from "./Methods.ts"
import * as Profile from "./Profile.ts"
import { follower, say, statusText } from "./Progress.ts"
import * as Resume from "./Resume.ts"
import * as Runs from "./Runs.ts"
import * as Start from "./Start.ts"
import { JobApplication, layer as workflowLayer } from "./Workflow.ts"

export interface ApplyOptions {
  readonly job?: string | undefined
  readonly profile?: string | undefined
  readonly store: Store.StoreOptions
  /** Start a new attempt of an application that failed or was cancelled. */
  readonly retry?: boolean
  /** The applicant's applications page on the site, where a submit's fate can be read. */
  readonly applications?: string | undefined
  /** Print this run's state and exit. */
  readonly status?: string | undefined
  /** Cancel this run and exit. */
  readonly cancel?: string | undefined
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

/** A client of a fleet's cluster: it starts, watches and resumes applications the runners execute. */
export const fleetClientLayer = (store: Store.StoreOptions) =>
  Effect.gen(function* () {
    const slots = yield* Runner.fromEnv(store)
    const sql = Store.layer(store)
    const client = NodeClusterSocket.layer({
      clientOnly: true,
      storage: "sql",
      shardingConfig: { availableShardGroups: Runner.shardingConfig(slots).availableShardGroups, shardsPerGroup: 12 }
    }).pipe(Layer.provide(sql))
    return ClusterWorkflowEngine.layer.pipe(
      Layer.provideMerge(client),
      Layer.provideMerge(TaskEvents.layer.pipe(Layer.provideMerge(sql)))
    )
  })

/** The store's events alone, for what needs no workflow engine. */
const recordsLayer = (store: Store.StoreOptions) => TaskEvents.layer.pipe(Layer.provide(Store.layer(store)))

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

/**
 * JSON-RPC on stdin for as long as the application runs, read as the service reads it (Lines.ts): a line over the
 * limit is refused while it arrives and reading goes on. Stdin closing does not end the application.
 */
const serveStdin = (handler: JsonRpc.Handler) =>
  Effect.gen(function* () {
    const running = yield* FiberSet.make()
    const runFork = yield* FiberSet.runtime(running)()
    const inFlight: JsonRpc.InFlight = new Map()
    const lines = Lines.reader()
    const serve = (line: Lines.Line) =>
      runFork(
        JsonRpc.answerLine(handler, line, inFlight).pipe(
          Effect.flatMap((out) =>
            out === undefined ? Effect.void : Effect.sync(() => process.stdout.write(`${out}\n`))
          )
        )
      )
    const ondata = (chunk: Buffer) => {
      for (const line of lines.push(chunk)) serve(line)
    }
    const onend = () => {
      for (const line of lines.end()) serve(line)
    }
    process.stdin.on("data", ondata)
    process.stdin.once("end", onend)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        process.stdin.off("data", ondata)
        process.stdin.off("end", onend)
        process.stdin.pause()
      })
    )
  })

type Outcome =
  | { readonly ok: true; readonly result: typeof JobApplication.successSchema.Type }
  | { readonly ok: false; readonly error: { readonly type: string; readonly message: string; readonly step?: string } }

/** Says how the application ended: `apply.done` on stdout, a line on stderr, the exit code. */
const announce = (run: string, outcome: Outcome, retry: string) => {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", method: "apply.done", params: { run, ...outcome } })}\n`)
  if (outcome.ok) {
    say(`${outcome.result.platform}: ${outcome.result.confirmation} (${outcome.result.url})`)
    return
  }
  say(`not finished: ${outcome.error.message}`)
  if (outcome.error.type !== "stopped") say(`to try again as a new attempt: ${retry}`)
  process.exitCode = outcome.error.type === "stopped" ? 130 : 1
}

/** Waits for the application: its success, its failure, its cancellation, or this process being stopped. */
const report = <R>(
  run: string,
  application: Effect.Effect<typeof JobApplication.successSchema.Type, typeof JobApplication.errorSchema.Type, R>,
  stop: Effect.Effect<void>,
  retry: string,
  flush: Effect.Effect<void, never, R>
) =>
  Effect.gen(function* () {
    const fiber = yield* application.pipe(Effect.forkScoped)
    const outcome = yield* Fiber.await(fiber).pipe(
      Effect.map((exit): Outcome => {
        if (Exit.isSuccess(exit)) return { ok: true, result: exit.value }
        const error = Cause.findErrorOption(exit.cause)
        if (Option.isSome(error))
          return { ok: false, error: { type: error.value.type, message: error.value.message, step: error.value.step } }
        return Cause.hasInterruptsOnly(exit.cause)
          ? { ok: false, error: { type: "cancelled", message: "the run was cancelled" } }
          : { ok: false, error: { type: "defect", message: Cause.pretty(exit.cause) } }
      }),
      Effect.raceFirst(stop.pipe(Effect.as<Outcome>({ ok: false, error: { type: "stopped", message: "stopped" } })))
    )
    // The last steps' lines come before the result's.
    yield* flush
    announce(run, outcome, retry)
  })

/** The process running an application completes what other processes asked of it through the store. */
const answerRequests = (run: string) => {
  let interrupted = false
  return (history: ReadonlyArray<{ eventType: string; data: Record<string, unknown> }>) =>
    Effect.gen(function* () {
      for (const { wait, answer } of Resume.requested(run, history)) {
        yield* Resume.complete(wait, answer).pipe(
          Effect.catch((error) => Effect.sync(() => say(`a resume of ${wait.step} was refused: ${error.message}`)))
        )
      }
      if (!interrupted && history.some((e) => e.eventType === Runs.event.cancelRequested)) {
        interrupted = true
        yield* JobApplication.interrupt(run)
      }
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("could not answer a request", cause)))
}

/** A wait whose person had the browser on a screen of the process that died: this process's browser goes there. */
const screenAgain = (wait: Runs.Wait) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const answer = yield* sessions.call(wait.session, "browser.handoff", { reason: wait.reason })
    const url = answer.ok ? (answer.result as { url?: string } | undefined)?.url : undefined
    say(
      url === undefined
        ? `the browser could not be put on a screen again (${answer.error?.message ?? "no URL"}); the session still takes browser tools`
        : `the browser is on screen again, at ${url} (the page above was the stopped process's)`
    )
  })

/** `--status RUN`: the run as the store records it. */
const printStatus = (store: Store.StoreOptions, run: string) =>
  statusText(run, Store.flagFor(store)).pipe(
    Effect.flatMap((text) => Effect.sync(() => process.stdout.write(`${text}\n`))),
    Effect.provide(recordsLayer(store))
  )

/** `--cancel RUN`: on a fleet the runner holding it is told at once; on the embedded store the process running it
 * (or the next to resume it) stops it. */
const cancelRun = (store: Store.StoreOptions, run: string) =>
  Effect.gen(function* () {
    if (store.kind === "postgres") {
      const answer = yield* Methods.cancel(run).pipe(Effect.provide(yield* fleetClientLayer(store)))
      say(answer.cancelled ? `run ${answer.run} cancelled` : `run ${answer.run} is not under way: nothing to cancel`)
      return
    }
    const answer = yield* Effect.gen(function* () {
      const application = yield* Runs.applicationOf(run)
      const target = run === application ? yield* Runs.current(application) : yield* Runs.describe({ attempt: 0, run })
      if (target.outcome.state !== "running") return { cancelled: false, run: target.run }
      const events = yield* TaskEvents
      yield* events.record(target.run, Runs.event.cancelRequested, {})
      return { cancelled: true, run: target.run }
    }).pipe(Effect.provide(recordsLayer(store)))
    say(
      answer.cancelled
        ? `run ${answer.run} cancelled: it starts no further step (a running \`switchyard apply\` stops it now); \`switchyard apply … --retry\` starts a new attempt`
        : `run ${answer.run} is not under way: nothing to cancel`
    )
  })

/** The command that retries, as a person types it. */
const retryCommand = (options: ApplyOptions & { readonly job: string; readonly profile: string }) =>
  `switchyard apply --job ${Shell.word(options.job)} --profile ${Shell.word(options.profile)}${options.applications ? ` --applications ${Shell.word(options.applications)}` : ""}${Store.flagFor(options.store)} --retry`

export const run = (configured: Config.ServiceConfig, options: ApplyOptions) =>
  Effect.gen(function* () {
    if (options.status !== undefined) return yield* printStatus(options.store, options.status)
    if (options.cancel !== undefined) return yield* cancelRun(options.store, options.cancel)
    if (options.job === undefined || options.profile === undefined) {
      say("--job and --profile name the application (or --status RUN, --cancel RUN)")
      process.exitCode = 2
      return
    }
    const profile = yield* Profile.load(options.profile)
    // The applicant's own résumé may be uploaded from where the profile names it, besides the configured folders.
    const config = {
      ...configured,
      uploads: { ...configured.uploads, roots: [...configured.uploads.roots, dirname(profile.resume)] }
    }
    const payload = {
      job: options.job,
      profile,
      ...(options.applications === undefined ? {} : { applications: options.applications })
    }
    const plan = yield* Start.plan(payload, options.retry === true).pipe(Effect.provide(recordsLayer(options.store)))
    // The commands printed for a person name this store when another shell would not find it.
    const storeFlag = Store.flagFor(options.store)
    say(
      `${Start.describe(plan, storeFlag)}; session ${Runs.sessionOf(plan.application)} on ${Store.describe(options.store)}`
    )
    const retry = retryCommand({ ...options, job: options.job, profile: options.profile })
    if (plan.kind === "ended") {
      return announce(
        plan.run,
        plan.outcome.state === "succeeded"
          ? { ok: true, result: plan.outcome.result as never }
          : {
              ok: false,
              error: {
                type: plan.outcome.state,
                message: plan.outcome.state === "failed" ? plan.outcome.error : "the run was cancelled"
              }
            },
        retry
      )
    }
    const execute = JobApplication.execute(Start.payloadOf(payload, plan))
    if (options.store.kind === "postgres") {
      // The fleet's runners execute it (any of them after a crash); this process watches and waits.
      return yield* Effect.gen(function* () {
        yield* serveStdin(yield* handlerOf)
        const progress = yield* follower(plan.run)
        yield* progress.loop.pipe(Effect.forkScoped)
        yield* report(plan.run, execute, Effect.never, retry, progress.poll)
      }).pipe(Effect.provide(yield* fleetClientLayer(options.store)))
    }
    yield* Startup.run((stop) =>
      Effect.gen(function* () {
        yield* serveStdin(yield* handlerOf)
        if (plan.kind === "join" && plan.wait?.novnc !== undefined) yield* screenAgain(plan.wait)
        const progress = yield* follower(plan.run, answerRequests(plan.run), storeFlag)
        yield* progress.loop.pipe(Effect.forkScoped)
        yield* report(plan.run, execute, stop, retry, progress.poll)
        const sessions = yield* Sessions
        yield* sessions.shutdown
      })
    ).pipe(
      Effect.provide(
        workflowLayer.pipe(
          Layer.provideMerge(SessionHost.layer),
          // The sessions emit engine events into the same store the steps are written to, and keep what the replay
          // level resolved there too: the next application on this store replays it.
          Layer.provideMerge(Service.layer(config, undefined, TaskEvents.layerEngineEvents, options.store)),
          Layer.provideMerge(engineLayer(options.store))
        )
      )
    )
  }).pipe(Effect.scoped)
