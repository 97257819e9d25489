/**
 * Switchyard's command line: `serve` (the default: MCP on stdio, `--http` for Streamable HTTP, `--jsonrpc` for the
 * line-delimited JSON-RPC sidecar), `status` (what this machine and configuration can run) and `demo` (a short task
 * on a bundled page through the cascade).
 */
import { setFlagsFromString } from "node:v8"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Logger, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { prettyCause } from "../Logging/SystemLog.ts"
import * as Scenarios from "../Scenario/Commands.ts"
import * as Config from "../Server/Config.ts"
import { defaults } from "../Server/Defaults.ts"

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
    Flag.withDescription("Bearer token HTTP clients must send (required off 127.0.0.1; also SWITCHYARD_HTTP_TOKEN)")
  ),
  maxBrowsers: Flag.Int("max-browsers").pipe(Flag.optional, Flag.withDescription("Sessions (browsers) at once"))
}

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
    if (!flags.http) {
      // stdout carries the protocol: libraries that print with console.log/info/debug are sent to stderr.
      const toStderr = (...args: Array<unknown>) => console.error(...args)
      Object.assign(console, { log: toStderr, info: toStderr, debug: toStderr })
    }
    const surface = flags.jsonrpc
      ? load(() => import("../Server/JsonRpc.ts")).pipe(Effect.map((JsonRpc) => JsonRpc.serveSessions))
      : flags.http
        ? load(() => import("../Server/Mcp/Http.ts")).pipe(
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
        : load(() => import("../Server/Mcp.ts")).pipe(
            Effect.map((Mcp) => (stop: Effect.Effect<void>) => Mcp.serveStdio(config.mcp, stop))
          )
    const [Service, serveOn] = yield* Effect.all([load(() => import("../Server/Service.ts")), surface], {
      concurrency: "unbounded"
    })
    const listening = flags.http ? { host: config.http.host, port: config.http.port } : undefined
    yield* Service.run(serveOn).pipe(Effect.provide(Service.layer(config, listening)))
  }).pipe(Effect.scoped)

const serveCommand = Command.make("serve", serveFlags, serve).pipe(
  Command.withDescription("Run the service (default): MCP on stdio, --http for Streamable HTTP, --jsonrpc for JSON-RPC")
)

const statusCommand = Command.make("status", common, (flags) =>
  Effect.all([resolveConfig(flags), load(() => import("../Server/Status.ts"))]).pipe(
    Effect.flatMap(([config, Status]) => Status.report(config)),
    Effect.flatMap(Console.log)
  )
).pipe(
  Command.withDescription("Show what this machine and configuration can run: browser, engines, log root, services")
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
  Command.withSubcommands([serveCommand, statusCommand, demoCommand, Scenarios.scenarios, Scenarios.analyze])
)

const program = Command.run(root, { version: "0.1.0" }).pipe(
  Effect.catchTag("InvalidInput", (error) =>
    Effect.sync(() => {
      process.stderr.write(`switchyard: ${error.message}\n`)
      process.exitCode = 2
    })
  ),
  Effect.provide(NodeServices.layer),
  // stdout may carry a protocol: anything logged before the service's own loggers are in place goes to stderr.
  Effect.provideService(Logger.LogToStderr, true)
)

// Signals are the service's to handle (graceful first, forced on the second), so no runtime-level handlers here.
Effect.runPromiseExit(program).then((exit) => {
  if (exit._tag === "Failure") process.stderr.write(`switchyard: ${prettyCause(exit.cause)}\n`)
  process.exit(exit._tag === "Success" ? ((process.exitCode as number | undefined) ?? 0) : 1)
})
