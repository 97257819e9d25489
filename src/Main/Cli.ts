/**
 * Switchyard's command line: `serve` (the default: MCP on stdio, `--http` for Streamable HTTP, `--jsonrpc` for the
 * line-delimited JSON-RPC sidecar), `status` (what this machine and configuration can run), `demo` (a short task
 * on a bundled page through the cascade), `cache` (the replay level's kept resolutions) and the workflows
 * (their commands in Workflows.ts, the shared flags in Flags.ts).
 */
import { setFlagsFromString } from "node:v8"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Context, Deferred, Effect, Layer, Logger, Option } from "effect"
import { CliOutput, Command, Flag } from "effect/cli"
import * as LibraryOutput from "../Logging/LibraryOutput.ts"
import { prettyCause } from "../Logging/SystemLog.ts"
import * as Scenarios from "../Scenario/Commands.ts"
import { defaults } from "../Server/Defaults.ts"
import type { Sessions } from "../Server/Sessions.ts"
import * as Startup from "../Server/Startup.ts"
import * as Cache from "./Cache.ts"
import { common, load, resolveConfig } from "./Flags.ts"
import * as Presenter from "./Presenter.ts"
import { applyCommand, clusterCommand, resumeCommand, takeoverCommand } from "./Workflows.ts"

// Magnitude's model client (BAML) logs to stdout, which carries the protocol.
process.env.BAML_LOG ??= "off"

// V8 lets the old generation grow up to 4x its live size between full GCs, so a busy service's RSS climbs on garbage;
// 10% keeps it near the live size at a few more full GCs. The heap limit is unchanged. Set here, not on the command
// line, because engine workers refuse V8 flags in their execArgv.
if (!process.execArgv.some((arg) => arg.startsWith("--heap-growing-percent"))) {
  setFlagsFromString("--heap-growing-percent=10")
}

const serveFlags = {
  ...common,
  jsonrpc: Flag.Boolean("jsonrpc").pipe(
    Flag.withDefault(false),
    Flag.withDescription("Line-delimited JSON-RPC 2.0 on stdio instead of MCP (the sidecar mode)")
  ),
  http: Flag.Boolean("http").pipe(Flag.withDefault(false), Flag.withDescription("MCP over Streamable HTTP at /mcp")),
  host: Flag.String("host").pipe(
    Flag.optional,
    Flag.withDescription(`HTTP bind address (default ${defaults.http.host})`)
  ),
  port: Flag.Int("port").pipe(
    Flag.optional,
    Flag.withDescription(`HTTP port (default ${defaults.http.port}; 0: any free one)`)
  ),
  token: Flag.Redacted("token").pipe(
    Flag.optional,
    Flag.withDescription("Bearer token HTTP clients must send (required off loopback; also SWITCHYARD_HTTP_TOKEN)")
  ),
  maxBrowsers: Flag.Int("max-browsers").pipe(Flag.optional, Flag.withDescription("Sessions (browsers) at once")),
  runner: Flag.String("runner").pipe(
    Flag.optional,
    Flag.withDescription(
      "With DATABASE_URL: this runner's name in the fleet (SWITCHYARD_RUNNER; one of SWITCHYARD_RUNNERS)"
    )
  )
}

/** A database named in the environment makes `serve` a runner of the fleet sharing it. */
const databaseUrl = () => process.env.SWITCHYARD_DATABASE_URL || process.env.DATABASE_URL || undefined

const serve = (flags: Command.Command.Config.Infer<typeof serveFlags>) =>
  Effect.gen(function* () {
    const config = yield* resolveConfig(flags, {
      sessions: { maxBrowsers: Option.getOrUndefined(flags.maxBrowsers) },
      http: {
        host: Option.getOrUndefined(flags.host),
        port: Option.getOrUndefined(flags.port),
        token: Option.getOrUndefined(flags.token)
      }
    })
    // stdout carries the protocol: what libraries print goes to stderr, redacted.
    LibraryOutput.install()
    // With port 0 the server learns its port as it binds, and tells the sessions' egress through `bound`.
    const bound = yield* Deferred.make<number>()
    const listening = flags.http ? { host: config.http.host, port: config.http.port, bound } : undefined
    const serveHttp = load(() => import("../Server/Mcp/Http.ts")).pipe(
      Effect.map(
        (McpHttp) => (stop: Effect.Effect<void>) =>
          McpHttp.serveHttp(
            {
              ...config.http,
              ...config.mcp,
              maxBodyBytes: config.limits.maxArgumentBytes * 2,
              bound,
              onListening: (url) => process.stderr.write(`switchyard: MCP over HTTP at ${url}\n`)
            },
            stop
          )
      )
    )
    // On stdio the surface loads alone and reads requests at once; the service's modules and layers come after it.
    const serveStdio = flags.jsonrpc
      ? load(() => import("../Server/JsonRpc/Protocol.ts")).pipe(
          Effect.map(
            (Protocol) => (stop: Effect.Effect<void>, sessions: Sessions["Service"]) =>
              // The method table is the tool list's: requests are read while it loads, and wait for it.
              Protocol.serveLoading(
                load(() => import("../Server/JsonRpc.ts")).pipe(Effect.map((JsonRpc) => JsonRpc.handler(sessions))),
                stop,
                sessions.shutdown
              )
          )
        )
      : load(() => import("../Server/Mcp.ts")).pipe(
          Effect.map(
            (Mcp) => (stop: Effect.Effect<void>, sessions: Sessions["Service"]) =>
              Mcp.serveStdio(config.mcp, stop, sessions)
          )
        )
    if (databaseUrl() === undefined) {
      if (flags.http) {
        const [Service, serveOn] = yield* Effect.all([load(() => import("../Server/Service.ts")), serveHttp], {
          concurrency: "unbounded"
        })
        return yield* Startup.run(serveOn).pipe(Effect.provide(Service.layer(config, listening)))
      }
      const serveOn = yield* serveStdio
      const build = load(() => Promise.all([import("../Server/Service.ts"), import("../Server/Sessions.ts")])).pipe(
        Effect.flatMap(([Service, { Sessions }]) =>
          Layer.build(Service.layer(config, listening)).pipe(
            Effect.map((context) => ({
              sessions: Context.get(context, Sessions),
              context: context as Context.Context<never>
            }))
          )
        )
      )
      return yield* Startup.serveWhileBuilding(build, serveOn)
    }
    const [Store, Runner, ApplyWorkflow, ApplyMethods, ApplyResume, JsonRpc, { Sessions: SessionsTag }] =
      yield* Effect.all(
        [
          load(() => import("../Cluster/Store.ts")),
          load(() => import("../Cluster/Runner.ts")),
          load(() => import("../Apply/Workflow.ts")),
          load(() => import("../Apply/Methods.ts")),
          load(() => import("../Apply/Resume.ts")),
          load(() => import("../Server/JsonRpc.ts")),
          load(() => import("../Server/Sessions.ts"))
        ],
        { concurrency: "unbounded" }
      )
    const store = Store.fromEnv()
    const runner = yield* Runner.fromEnv(store, process.env, Option.getOrUndefined(flags.runner), listening)
    process.stderr.write(
      `switchyard: runner ${runner.name} at ${runner.host}:${runner.port} on ${Store.describe(store)}\n`
    )
    const fleetSurface = flags.http
      ? yield* serveHttp
      : yield* serveStdio.pipe(
          Effect.map(
            (onStdio) => (stop: Effect.Effect<void>) =>
              SessionsTag.pipe(
                Effect.flatMap((sessions) =>
                  // Its JSON-RPC also starts and watches job applications, run wherever the fleet has room.
                  flags.jsonrpc
                    ? ApplyMethods.methods.pipe(Effect.flatMap((extra) => JsonRpc.serveSessions(stop, sessions, extra)))
                    : onStdio(stop, sessions)
                )
              )
          )
        )
    // A person's answer to an application's question may come through the runner's HTTP resume route.
    const runnerLayer = ApplyResume.questions.pipe(
      Layer.provideMerge(Runner.layer(config, runner, ApplyWorkflow.layer))
    )
    yield* Startup.run(fleetSurface).pipe(Effect.provide(runnerLayer))
  }).pipe(Effect.scoped)

const serveCommand = Command.make("serve", serveFlags, serve).pipe(
  Command.withDescription("Run the service (default): MCP on stdio, --http for Streamable HTTP, --jsonrpc for JSON-RPC")
)

const storeFlag = Cache.storeFlag

const statusCommand = Command.make("status", { ...common, store: storeFlag }, (flags) =>
  Effect.gen(function* () {
    const [config, Status, Store, Dashboard] = yield* Effect.all([
      resolveConfig(flags),
      load(() => import("../Server/Status.ts")),
      load(() => import("../Cluster/Store.ts")),
      load(() => import("../Cluster/Dashboard.ts"))
    ])
    const machine = yield* Status.report(config)
    // The fleet (with DATABASE_URL) or the embedded store: runners, sessions and the dashboard's questions.
    const location = Store.fromEnv(process.env, Option.getOrUndefined(flags.store))
    const store = yield* Dashboard.report(location)
    const replay = yield* ReplayReport().pipe(Effect.flatMap((r) => r.status(location, config.replay.enabled)))
    yield* Console.log(`${machine}${store}${replay}`)
  })
).pipe(
  Command.withDescription(
    "Show what this machine and configuration can run (browser, engines, log root, services) and, from the store, the fleet and the step and engine dashboard"
  )
)

const ReplayReport = () => load(() => import("../Cascade/Replay/Report.ts"))

const demoCommand = Command.make("demo", common, (flags) =>
  Effect.all([resolveConfig(flags), load(() => import("../Server/Demo.ts"))]).pipe(
    Effect.flatMap(([config, Demo]) => Demo.run(config))
  )
).pipe(
  Command.withDescription(
    "Open a bundled local page and run a short task through the cascade with the engines configured; print where the logs and screenshots are"
  )
)

const root = Command.make("switchyard", serveFlags, serve).pipe(
  Command.withDescription("Reliable browser automation for AI agents"),
  Command.withSubcommands([
    serveCommand,
    statusCommand,
    demoCommand,
    applyCommand,
    resumeCommand,
    clusterCommand,
    takeoverCommand,
    Cache.cache,
    Scenarios.scenarios,
    Scenarios.analyze
  ])
)

const program = Command.run(root, { version: "0.1.0" }).pipe(
  // A call the command line refused was already answered on one line (Presenter.ts); help asked for is no failure.
  Effect.catchTag("ShowHelp", (shown) =>
    Effect.sync(() => {
      process.exitCode = shown.errors.length > 0 ? Presenter.usageExitCode : 0
    })
  ),
  Effect.catchTag("InvalidInput", (error) =>
    Effect.sync(() => {
      process.stderr.write(`switchyard: ${error.message}\n`)
      process.exitCode = Presenter.usageExitCode
    })
  ),
  Effect.provide(Layer.merge(NodeServices.layer, CliOutput.layerPresenter(Presenter.presenter))),
  // stdout may carry a protocol: anything logged before the service's own loggers are in place goes to stderr.
  Effect.provideService(Logger.LogToStderr, true)
)

// Signals are the service's to handle (graceful first, forced on the second), so no runtime-level handlers here.
Effect.runPromiseExit(program).then((exit) => {
  if (exit._tag === "Failure") process.stderr.write(`switchyard: ${prettyCause(exit.cause)}\n`)
  process.exit(exit._tag === "Success" ? ((process.exitCode as number | undefined) ?? 0) : 1)
})
