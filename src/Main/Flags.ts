/**
 * The flags every command takes and how they become the configuration, and how a command loads what it runs only
 * when it runs: shared by the service's commands (Cli.ts) and the workflows' (Workflows.ts).
 */
import { Effect, Option, Redacted } from "effect"
import { Flag } from "effect/cli"
import * as Config from "../Server/Config.ts"

// Each command loads what it runs when it runs: the service reads its first request without loading the scenario
// runner, the other surfaces or the engines' SDKs.
export const load = <A>(module: () => Promise<A>) => Effect.promise(module)

export const common = {
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

/** The bearer token a service's clients send, from the environment. */
export const tokenFromEnv = () => {
  const token = process.env.SWITCHYARD_HTTP_TOKEN
  return token === undefined || token === "" ? undefined : Redacted.make(token)
}

export type CommonFlags = {
  readonly config: Option.Option<string>
  readonly logDir: Option.Option<string>
  readonly headed: boolean
}

/** The flags in the config file's shape: they override the file and the environment. */
export const resolveConfig = (flags: CommonFlags, extra: Config.Flags = {}) =>
  Config.resolve({
    ...(Option.isSome(flags.config) ? { file: flags.config.value } : {}),
    flags: {
      logDir: Option.getOrUndefined(flags.logDir),
      ...(flags.headed ? { browser: { headless: false } } : {}),
      ...extra
    }
  })
