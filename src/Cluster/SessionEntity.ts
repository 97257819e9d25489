/**
 * A browser session as a cluster entity, pinned to the runner holding its browser: the entity id is
 * `<runner>/<session>` and its shard group is that runner's own (`runner:<name>`), which only that runner serves, so
 * the cluster never moves it — a browser cannot move. Its handler is the session host over the runner's local
 * sessions. Calls are volatile (not persisted): a tool call is never replayed on its own after a crash.
 */
import { Effect, Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import type { CallMeta } from "../Cascade/Router.ts"
import { Sessions } from "../Server/Sessions.ts"
import * as SessionHost from "./SessionHost.ts"

/** The shard group a runner serves alone. */
export const groupOf = (runner: string) => `runner:${runner}`

export const entityId = (runner: string, session: string) => `${runner}/${session}`

const runnerOfId = (id: string) => id.slice(0, id.indexOf("/"))

export const BrowserSession = Entity.make("BrowserSession", [
  Rpc.make("Call", {
    payload: { session: Schema.String, tool: Schema.String, args: Schema.Unknown, meta: Schema.Unknown },
    success: Schema.Unknown
  }),
  Rpc.make("Status", { payload: { session: Schema.String }, success: Schema.Unknown }),
  Rpc.make("Close", { payload: { session: Schema.String } })
]).annotate(ClusterSchema.ShardGroup, (id) => groupOf(runnerOfId(id)))

/** This runner's side: the calls for sessions it holds, run by its host over its local sessions. */
export const layer = BrowserSession.toLayer(
  Effect.gen(function* () {
    const local = yield* Sessions
    const host = yield* SessionHost.make(local)
    return BrowserSession.of({
      Call: ({ payload }) => host.call(payload.session, payload.tool, payload.args, (payload.meta ?? {}) as CallMeta),
      Status: ({ payload }) => local.status(payload.session),
      Close: ({ payload }) => host.close(payload.session)
    })
  }),
  // Status and close answer while a long call runs, as on one machine; the session's own lane orders the rest.
  { concurrency: "unbounded", maxIdleTime: "10 minutes" }
)
