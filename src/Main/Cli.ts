/**
 * Switchyard's command line: `serve` (the default: MCP on stdio, `--http` for Streamable HTTP, `--jsonrpc` for the
 * line-delimited JSON-RPC sidecar), `status` (what this machine and configuration can run), `demo` (a short task
 * on a bundled page through the cascade), `cache` (the replay level's kept resolutions) and the workflows.
 */
import { setFlagsFromString } from "node:v8"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Context, Effect, Layer, Logger, Option, Redacted } from "effect"
import { Argument, CliOutput, Command, Flag } from "effect/cli"
import * as LibraryOutput from "../Logging/LibraryOutput.ts"
import { prettyCause } from "../Logging/SystemLog.ts"
import * as Scenarios from "../Scenario/Commands.ts"
import * as Config from "../Server/Config.ts"
import { defaults } from "../Server/Defaults.ts"
import type { Sessions } from "../Server/Sessions.ts"
import * as Startup from "../Server/Startup.ts"
import * as Cache from "./Cache.ts"
import * as Presenter from "./Presenter.ts"

// Each command loads what it runs when it runs: the service reads its first request without loading the scenario
// runner, the other surfaces or the engines' SDKs.
const load = <A>(module: () => Promise<A>) => Effect.promise(module)

// Magnitude's model client (BAML) logs to stdout, which carries the protocol.
process.env.BAML_LOG ??= "off"

// V8 lets the old generation grow up to 4x its live size between full GCs, so a busy service's RSS climbs on garbage;
// 10% keeps it near the live size at a few more full GCs. The heap limit is unchanged. Set here, not on the command
// line, because engine workers refuse V8 flags in their execArgv.
if (!process.execArgv.some((arg) => arg.startsWith("--heap-growing-percent"))) {
  setFlagsFromString("--heap-growing-percent=10")
}

const common = {
  config: Flag.String("config").pipe(
    Flag.optional,
    Flag.withDescription("JSON configuration file (also SWITCHYARD_CONFIG)")
  ),
  logDir: Flag.String("log-dir").pipe(
    Flag.optional,
    Flag.withDescription("Log root (SWITCHYARD_LOG_DIR, CLAW_LOG_DIR)")
  ),
  headed: Flag.Boolean("headed").pipe(Flag.withDefault(false), Flag.withDescription("Show the browser window"))
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

/** The bearer token a service's clients send, from the environment. */
const tokenFromEnv = () => {
  const token = process.env.SWITCHYARD_HTTP_TOKEN
  return token === undefined || token === "" ? undefined : Redacted.make(token)
}

/** A database named in the environment makes `serve` a runner of the fleet sharing it. */
const databaseUrl = () => process.env.SWITCHYARD_DATABASE_URL || process.env.DATABASE_URL || undefined

type CommonFlags = {
  readonly config: Option.Option<string>
  readonly logDir: Option.Option<string>
  readonly headed: boolean
}

/** The flags in the config file's shape: they override the file and the environment. */
const resolveConfig = (flags: CommonFlags, extra: Config.Flags = {}) =>
  Config.resolve({
    ...(Option.isSome(flags.config) ? { file: flags.config.value } : {}),
    flags: {
      logDir: Option.getOrUndefined(flags.logDir),
      ...(flags.headed ? { browser: { headless: false } } : {}),
      ...extra
    }
  })

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
    const listening = flags.http ? { host: config.http.host, port: config.http.port } : undefined
    const serveHttp = load(() => import("../Server/Mcp/Http.ts")).pipe(
      Effect.map(
        (McpHttp) => (stop: Effect.Effect<void>) =>
          McpHttp.serveHttp(
            {
              ...config.http,
              ...config.mcp,
              maxBodyBytes: config.limits.maxArgumentBytes * 2,
              onListening: (url) => process.stderr.write(`switchyard: MCP over HTTP at ${url}\n`)
            },
            stop
          )
      )
    )
    // On stdio the surface loads alone and reads requests at once; the service's modules and layers come after it.
    const serveStdio = flags.jsonrpc
      ? load(() => import("../Server/JsonRpc.ts")).pipe(Effect.map((JsonRpc) => JsonRpc.serveSessions))
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

const takeoverList = Command.make("list", common, (flags) =>
  Effect.all([resolveConfig(flags), load(() => import("../Takeover/Takeovers.ts"))]).pipe(
    Effect.flatMap(([config, Takeovers]) => Console.log(Takeovers.listing(Takeovers.list(config.logDir))))
  )
).pipe(Command.withDescription("The sessions a person holds, in the services running on this log root"))

const takeoverShow = Command.make(
  "show",
  {
    ...common,
    session: Argument.String("session").pipe(
      Argument.optional,
      Argument.withDescription("The session (default: the only one held)")
    )
  },
  (flags) =>
    Effect.all([resolveConfig(flags), load(() => import("../Takeover/Takeovers.ts"))]).pipe(
      Effect.flatMap(([config, Takeovers]) => Takeovers.find(config.logDir, Option.getOrUndefined(flags.session))),
      Effect.flatMap((held) => Console.log(held))
    )
).pipe(Command.withDescription("The link and password that let a person into a session, and how to resume it"))

const takeoverCommand = Command.make("takeover").pipe(
  Command.withDescription("Sessions a person holds: list them, or show the link and password for one"),
  Command.withSubcommands([takeoverList, takeoverShow])
)

const applyFlags = {
  ...common,
  job: Flag.String("job").pipe(Flag.optional, Flag.withDescription("The job posting's application page")),
  profile: Flag.String("profile").pipe(
    Flag.optional,
    Flag.withDescription("The applicant as JSON: firstName, lastName, email, phone, resume (a path), answers")
  ),
  retry: Flag.Boolean("retry").pipe(
    Flag.withDefault(false),
    Flag.withDescription("Start a new attempt of an application that failed or was cancelled")
  ),
  applications: Flag.String("applications").pipe(
    Flag.optional,
    Flag.withDescription("The applicant's applications page on the site, where a submit's fate can be read")
  ),
  status: Flag.String("status").pipe(Flag.optional, Flag.withDescription("Print run RUN's state and exit")),
  cancel: Flag.String("cancel").pipe(Flag.optional, Flag.withDescription("Cancel run RUN and exit")),
  store: storeFlag
}

const applyCommand = Command.make("apply", applyFlags, (flags) =>
  Effect.gen(function* () {
    const [config, Apply, Store] = yield* Effect.all([
      resolveConfig(flags),
      load(() => import("../Apply/Command.ts")),
      load(() => import("../Cluster/Store.ts"))
    ])
    // stdout carries the result and JSON-RPC answers: what libraries print goes to stderr, redacted.
    LibraryOutput.install()
    yield* Apply.run(config, {
      job: Option.getOrUndefined(flags.job),
      profile: Option.getOrUndefined(flags.profile),
      retry: flags.retry,
      applications: Option.getOrUndefined(flags.applications),
      status: Option.getOrUndefined(flags.status),
      cancel: Option.getOrUndefined(flags.cancel),
      store: Store.fromEnv(process.env, Option.getOrUndefined(flags.store))
    })
  })
).pipe(
  Command.withDescription(
    "Apply to a job as a durable workflow (start-browser, analyze-form, fill-fields, upload-resume, check-captcha, submit, verify); run it again to resume after a crash, --retry to try a failed one again"
  )
)

const resumeCommand = Command.make(
  "resume",
  {
    session: Argument.String("session").pipe(
      Argument.withDescription("The held session (apply-<id> for an application)")
    ),
    submitted: Flag.Boolean("submitted").pipe(
      Flag.withDefault(false),
      Flag.withDescription("For a submit whose fate was unknown: the site received the application")
    ),
    notSubmitted: Flag.Boolean("not-submitted").pipe(
      Flag.withDefault(false),
      Flag.withDescription("For a submit whose fate was unknown: it was not received; send it once")
    ),
    url: Flag.String("url").pipe(
      Flag.withDefault(`http://127.0.0.1:${defaults.http.port}`),
      Flag.withDescription("A running `serve --http` service, for sessions no application holds")
    ),
    token: Flag.Redacted("token").pipe(Flag.optional, Flag.withDescription("The service's bearer token")),
    store: storeFlag
  },
  (flags) =>
    Effect.gen(function* () {
      if (flags.submitted && flags.notSubmitted) {
        process.stderr.write("switchyard resume: --submitted or --not-submitted, not both\n")
        process.exitCode = 2
        return
      }
      const [Resume, Store] = yield* Effect.all([
        load(() => import("./Resume.ts")),
        load(() => import("../Cluster/Store.ts"))
      ])
      yield* Resume.run({
        session: flags.session,
        answer: flags.submitted ? "submitted" : flags.notSubmitted ? "not-submitted" : undefined,
        url: flags.url,
        token: Option.getOrUndefined(flags.token) ?? tokenFromEnv(),
        store: Store.fromEnv(process.env, Option.getOrUndefined(flags.store))
      })
    })
).pipe(
  Command.withDescription(
    "A person is done with a held session: ends a job application's wait (on this machine's store or the fleet's), or resumes a session on a running service"
  )
)

const devCommand = Command.make(
  "dev",
  {
    runners: Flag.Int("runners").pipe(Flag.withDefault(3), Flag.withDescription("Runner processes to start")),
    port: Flag.Int("port").pipe(Flag.withDefault(8931), Flag.withDescription("The first runner's MCP HTTP port")),
    maxBrowsers: Flag.Int("max-browsers").pipe(Flag.optional, Flag.withDescription("Browsers per runner")),
    uploadRoot: Flag.String("upload-root").pipe(
      Flag.atMost(64),
      Flag.withDescription("A folder the runners may upload files from (repeat for more; SWITCHYARD_UPLOAD_ROOTS)")
    ),
    install: Flag.Boolean("install-postgres").pipe(
      Flag.withDefault(true),
      Flag.withDescription("Install Debian's postgresql with apt-get when missing (as root)")
    )
  },
  (flags) =>
    load(() => import("../Cluster/Dev.ts")).pipe(
      Effect.flatMap((Dev) =>
        Dev.run({
          runners: flags.runners,
          port: flags.port,
          maxBrowsers: Option.getOrUndefined(flags.maxBrowsers),
          uploadRoots: flags.uploadRoot,
          installPostgres: flags.install
        })
      )
    )
).pipe(
  Command.withDescription(
    "Start a local PostgreSQL (on 127.0.0.1, in a temp dir) and N runners sharing it, each serving MCP over HTTP"
  )
)

const clusterCommand = Command.make("cluster").pipe(
  Command.withDescription("A fleet of runners on PostgreSQL"),
  Command.withSubcommands([devCommand])
)

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
