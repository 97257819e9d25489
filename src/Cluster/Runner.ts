/**
 * One runner of a fleet: this process's browsers and surfaces, joined to the others through `effect/cluster` on the
 * shared PostgreSQL. It serves the default shard group (workflows, spread over every runner and taken over when one
 * dies) and its own group (`runner:<name>`: the sessions whose browsers it holds, which never move). Its front door
 * routes any session's call to its owner. The cluster's timings are set for failover in seconds: its defaults (a
 * 35 s shard lock, a 1 min health check, a 10 s message poll) make it take 35–95 s.
 */
import { createServer } from "node:net"
import { NodeClusterSocket } from "@effect/platform-node"
import { Duration, Effect, Layer, Option } from "effect"
import { ClusterWorkflowEngine, RunnerAddress } from "effect/cluster"
import type { WorkflowEngine } from "effect/workflow"
import { NotConfigured } from "../Errors/Engine.ts"
import type * as Config from "../Server/Config.ts"
import * as Service from "../Server/Service.ts"
import { Sessions } from "../Server/Sessions.ts"
import { TaskEvents } from "./Events.ts"
import { Fleet } from "./Fleet.ts"
import * as FrontDoor from "./FrontDoor.ts"
import { SavedStates } from "./SavedState.ts"
import * as SessionEntity from "./SessionEntity.ts"
import * as Store from "./Store.ts"

export interface RunnerOptions {
  /** This runner's name, one of `slots`. */
  readonly name: string
  /** Every runner name the fleet may have: the shard groups must be the same list on every runner. */
  readonly slots: ReadonlyArray<string>
  /** Where other runners reach this one. */
  readonly host: string
  readonly port: number
  readonly store: Store.StoreOptions
  /** A runner silent this long is taken for dead: its sessions and workflows move. */
  readonly failoverAfterMs: number
  /** Where its MCP front door listens over HTTP, when it does. */
  readonly http?: Service.Listening | undefined
}

export const defaultSlots = ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"]

const freePort = (host: string) =>
  Effect.promise(
    () =>
      new Promise<number>((resolve, reject) => {
        const server = createServer()
        server.once("error", reject)
        server.listen(0, host, () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          server.close(() => resolve(port))
        })
      })
  )

/** The runner's settings from the environment: `SWITCHYARD_RUNNER`, `SWITCHYARD_RUNNERS`, `SWITCHYARD_CLUSTER_HOST`/`PORT`, `SWITCHYARD_FAILOVER_MS`. */
export const fromEnv = (
  store: Store.StoreOptions,
  env: NodeJS.ProcessEnv = process.env,
  name?: string,
  http?: Service.Listening
) =>
  Effect.gen(function* () {
    const slots = (env.SWITCHYARD_RUNNERS ?? defaultSlots.join(","))
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "")
    const runner = name ?? env.SWITCHYARD_RUNNER ?? slots[0]!
    if (!slots.includes(runner)) {
      return yield* new NotConfigured({
        message: `runner "${runner}" is not one of the fleet's runner names (${slots.join(", ")}; SWITCHYARD_RUNNERS sets them)`
      })
    }
    const host = env.SWITCHYARD_CLUSTER_HOST ?? "127.0.0.1"
    const port = env.SWITCHYARD_CLUSTER_PORT ? Number(env.SWITCHYARD_CLUSTER_PORT) : yield* freePort(host)
    const failoverAfterMs = env.SWITCHYARD_FAILOVER_MS ? Number(env.SWITCHYARD_FAILOVER_MS) : 3_000
    return { name: runner, slots, host, port, store, failoverAfterMs, http } satisfies RunnerOptions
  })

/** The cluster's timings for a runner that fails over within a few seconds. */
export const shardingConfig = (options: RunnerOptions) => {
  const lock = Duration.millis(Math.max(2_000, options.failoverAfterMs))
  return {
    runnerAddress: Option.some(RunnerAddress.make(options.host, options.port)),
    availableShardGroups: ["default", ...options.slots.map(SessionEntity.groupOf)],
    assignedShardGroups: ["default", SessionEntity.groupOf(options.name)],
    shardsPerGroup: 12,
    shardLockRefreshInterval: Duration.millis(Math.max(500, options.failoverAfterMs / 3)),
    shardLockExpiration: lock,
    runnerHealthCheckInterval: Duration.seconds(1),
    refreshAssignmentsInterval: Duration.seconds(1),
    entityMessagePollInterval: Duration.seconds(1),
    // Session entities keep nothing of their own (the browser lives in the local sessions): idling out is harmless.
    entityMaxIdleTime: Duration.minutes(10)
  }
}

/**
 * The runner's layers: local sessions (`Service.layer`), the cluster on the store, the session entity, the fleet's
 * bookkeeping and the front door, with `workflows` registered on the cluster's workflow engine.
 */
export const layer = <E, R>(
  config: Config.ServiceConfig,
  options: RunnerOptions,
  workflows: Layer.Layer<never, E, R>
) => {
  const sql = Store.layer(options.store)
  const records = Layer.mergeAll(TaskEvents.layer, SavedStates.layer).pipe(Layer.provideMerge(sql))
  const sharding = NodeClusterSocket.layer({ storage: "sql", shardingConfig: shardingConfig(options) }).pipe(
    Layer.provide(sql)
  )
  const engine = ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(sharding))
  const local = Service.layer(config, options.http, TaskEvents.layerEngineEvents).pipe(Layer.provide(records))
  const fleet = Layer.unwrap(
    Effect.gen(function* () {
      const sessions = yield* Sessions
      return Fleet.layer(
        {
          self: options.name,
          address: `${options.host}:${options.port}`,
          capacity: config.sessions.maxBrowsers,
          heartbeatMs: Math.max(250, Math.floor(options.failoverAfterMs / 4)),
          failoverAfterMs: options.failoverAfterMs
        },
        sessions.browsers
      )
    })
  )
  const base = Layer.mergeAll(engine, fleet).pipe(Layer.provideMerge(records), Layer.provideMerge(local))
  const front = FrontDoor.layer.pipe(Layer.provideMerge(base))
  const hosted = SessionEntity.layer.pipe(Layer.provide(base))
  return Layer.mergeAll(hosted, workflows as Layer.Layer<never, E, Exclude<R, never>>).pipe(Layer.provideMerge(front))
}

export type WorkflowRequirements = Sessions | TaskEvents | SavedStates | WorkflowEngine.WorkflowEngine
