/**
 * The service's configuration as one Effect `Config`: each setting declared once, with its key in the JSON file,
 * its environment names and its default (Defaults.ts), read from flags ← environment ← file layered as
 * ConfigProviders (Config/Sources.ts). Each source is also read alone, so an error names the bad key and value;
 * secrets are `Redacted` from the moment they are read.
 */
import { readFile } from "node:fs/promises"
import { Config, ConfigProvider, Effect, Option, Schema, SchemaIssue } from "effect"
import { Policy } from "../Cascade/Policy.ts"
import * as Egress from "../Egress/Policy.ts"
import * as Model from "../Engine/Model.ts"
import { InvalidInput } from "../Errors/Page.ts"
import { byPrecedence } from "../Setting.ts"
import {
  type Env,
  type Flags,
  fromEnvironment,
  fromFlags,
  list,
  nameSet,
  oneOf,
  onOff,
  optional,
  type Path,
  type Read,
  secret,
  setting,
  text,
  valueAt,
  whole
} from "./Config/Sources.ts"
import { defaults } from "./Defaults.ts"

export type { Flags } from "./Config/Sources.ts"

/** A cascade policy inline, or the path of a JSON file holding one. */
const policy: Read<string | Policy> = (path) => Config.schema(Schema.Union([Schema.String, Policy]), path)

/** A JSON array, or a comma-separated list, of egress entries. */
const egressEntries: Read<ReadonlyArray<string>> = (path) => Config.Array(Egress.EntryText, path, { separator: "," })

const browser = Config.all({
  provider: optional("browser.provider", ["SWITCHYARD_BROWSER"], oneOf(["local", "cdp", "adspower"])),
  chromePath: optional("browser.chromePath", ["CHROME_PATH"], text),
  headless: setting("browser.headless", ["SWITCHYARD_HEADLESS"], onOff, defaults.browser.headless),
  profileDir: optional("browser.profileDir", ["SWITCHYARD_PROFILE_DIR"], text),
  /** As root, the unprivileged user Chromium runs as, sandboxed. */
  user: setting("browser.user", ["SWITCHYARD_BROWSER_USER"], text, defaults.browser.user),
  /** Chromium without its sandbox: only when set. */
  noSandbox: setting("browser.noSandbox", ["SWITCHYARD_NO_SANDBOX"], onOff, defaults.browser.noSandbox),
  cdpUrl: optional("browser.cdpUrl", ["SWITCHYARD_CDP_URL"], text),
  adspower: Config.all({
    url: optional("browser.adspower.url", ["ADSPOWER_API_URL"], text),
    userId: optional("browser.adspower.userId", ["SWITCHYARD_ADSPOWER_USER_ID"], text),
    serialNumber: optional("browser.adspower.serialNumber", ["SWITCHYARD_ADSPOWER_SERIAL"], text),
    apiKey: optional("browser.adspower.apiKey", ["SWITCHYARD_ADSPOWER_API_KEY"], secret)
  })
}).pipe(
  Config.map(({ provider, adspower, ...browser }) => {
    // Unnamed, a CDP URL means attach; a provider without its own settings falls back to a local Chromium.
    const kind = provider ?? (browser.cdpUrl ? "cdp" : "local")
    const adspowerSet = Object.values(adspower).some((value) => value !== undefined)
    return {
      ...browser,
      provider: kind === "cdp" && browser.cdpUrl ? kind : kind === "adspower" && adspowerSet ? kind : "local",
      adspower: { ...adspower, url: adspower.url ?? defaults.browser.adspowerUrl }
    }
  })
)

const sessions = Config.all({
  maxBrowsers: setting("sessions.maxBrowsers", ["SWITCHYARD_MAX_BROWSERS"], whole(1), defaults.sessions.maxBrowsers),
  warmBrowsers: setting(
    "sessions.warmBrowsers",
    ["SWITCHYARD_WARM_BROWSERS"],
    whole(0),
    defaults.sessions.warmBrowsers
  ),
  queue: setting("sessions.queue", ["SWITCHYARD_QUEUE"], whole(0), defaults.sessions.queue),
  maxPendingPerSession: setting(
    "sessions.maxPendingPerSession",
    ["SWITCHYARD_MAX_PENDING_PER_SESSION"],
    whole(1),
    defaults.sessions.maxPendingPerSession
  ),
  idleTimeoutMs: setting(
    "sessions.idleTimeoutMs",
    ["SWITCHYARD_IDLE_TIMEOUT_MS"],
    whole(0),
    defaults.sessions.idleTimeoutMs
  ),
  leaseTimeoutMs: setting(
    "sessions.leaseTimeoutMs",
    ["SWITCHYARD_LEASE_TIMEOUT_MS"],
    whole(1),
    defaults.sessions.leaseTimeoutMs
  )
})

/** Keys or base URLs for each provider in sight, each read at `model.<field>.<provider>` (env names: Model.ts). */
const byProvider = <A>(field: "apiKeys" | "baseURLs", read: Read<A>, providers: ReadonlyArray<string>) =>
  Config.all(
    providers.map((name) =>
      Config.option(read(["model", field, name])).pipe(Config.map(Option.map((v) => [name, v] as const)))
    )
  ).pipe(Config.map((entries) => Object.fromEntries(entries.flatMap(Option.toArray))))

const model = Config.all({
  ids: Config.all({
    model: setting("model.model", [Model.modelEnv.model], text, defaults.model),
    stagehandDom: optional("model.stagehandDom", [Model.modelEnv.stagehandDom], text),
    stagehandCua: optional("model.stagehandCua", [Model.modelEnv.stagehandCua], text),
    magnitude: optional("model.magnitude", [Model.modelEnv.magnitude], text)
  }),
  keys: Config.Record(Schema.String, Schema.RedactedFromValue(Schema.String), ["model", "apiKeys"]).pipe(
    Config.withDefault({})
  ),
  urls: Config.Record(Schema.String, Schema.String, ["model", "baseURLs"]).pipe(Config.withDefault({}))
}).pipe(
  Config.flatMap(({ ids, keys, urls }) => {
    const named = Object.values(ids).flatMap((id) => (id?.includes("/") ? [id.split("/")[0]!.toLowerCase()] : []))
    const providers = [...new Set([...Model.knownProviders, ...named, ...Object.keys(keys), ...Object.keys(urls)])]
    return Config.all({
      apiKeys: byProvider("apiKeys", secret, providers),
      baseURLs: byProvider("baseURLs", text, providers)
    }).pipe(Config.map((credentials) => ({ ...ids, ...credentials })))
  })
)

/** The whole configuration over the settings' keys (`resolve` reads it from the sources); defaults fill every gap. */
export const ServiceConfig = Config.all({
  logDir: setting("logDir", ["SWITCHYARD_LOG_DIR", "CLAW_LOG_DIR"], text, defaults.logDir),
  browser,
  sessions,
  model,
  cascade: setting("cascade", ["SWITCHYARD_CASCADE"], policy, defaults.cascade),
  /** Route to the fallback engines after Stagehand's second failure. */
  fallback: setting("fallback", ["SWITCHYARD_FALLBACK"], onOff, defaults.fallback),
  waits: Config.all({
    /** A target that is not on the page yet (late content) is waited for this long before element_not_found. */
    elementMs: setting("waits.elementMs", ["SWITCHYARD_ELEMENT_WAIT_MS"], whole(0), defaults.waits.elementMs)
  }),
  urls: Config.all({
    /** URL schemes `browser.navigate` accepts. */
    schemes: setting("urls.schemes", ["SWITCHYARD_URL_SCHEMES"], list, defaults.urls.schemes),
    /** Loopback and private ranges; unset, the surface decides (Defaults.ts). */
    privateNetworks: optional("urls.privateNetworks", ["SWITCHYARD_PRIVATE_NETWORKS"], onOff)
  }),
  limits: Config.all({
    maxArgumentBytes: setting(
      "limits.maxArgumentBytes",
      ["SWITCHYARD_MAX_ARGUMENT_BYTES"],
      whole(1),
      defaults.limits.maxArgumentBytes
    ),
    /** The JavaScript heap of each page's renderer, in MiB. */
    pageHeapMb: setting("limits.pageHeapMb", ["SWITCHYARD_PAGE_HEAP_MB"], whole(1), defaults.limits.pageHeapMb),
    /** Pages (tabs, popups) a session's browser may have open at once. */
    maxPages: setting("limits.maxPages", ["SWITCHYARD_MAX_PAGES"], whole(1), defaults.limits.maxPages),
    /** Loads of the session's page within one call (a reload loop stops there). */
    maxNavigationsPerCall: setting(
      "limits.maxNavigationsPerCall",
      ["SWITCHYARD_MAX_NAVIGATIONS_PER_CALL"],
      whole(1),
      defaults.limits.maxNavigationsPerCall
    )
  }),
  http: Config.all({
    host: setting("http.host", [], text, defaults.http.host),
    port: setting("http.port", [], whole(0), defaults.http.port),
    token: optional("http.token", ["SWITCHYARD_HTTP_TOKEN"], secret),
    /** Host names clients may use (Host and Origin headers) besides the bound address: DNS rebinding protection. */
    allowedHosts: setting("http.allowedHosts", ["SWITCHYARD_HTTP_ALLOWED_HOSTS"], list, defaults.http.allowedHosts),
    sessionIdleMs: setting(
      "http.sessionIdleMs",
      ["SWITCHYARD_MCP_SESSION_IDLE_MS"],
      whole(1),
      defaults.http.sessionIdleMs
    ),
    maxSessions: setting("http.maxSessions", ["SWITCHYARD_MCP_MAX_SESSIONS"], whole(1), defaults.http.maxSessions),
    /** MCP clients that name no session share one browser session instead of getting one each. */
    sharedDefaultSession: setting(
      "http.sharedDefaultSession",
      ["SWITCHYARD_MCP_SHARED_DEFAULT"],
      onOff,
      defaults.http.sharedDefaultSession
    )
  }),
  mcp: Config.all({
    /** How MCP lists the tools: `browser_navigate` (underscore) or `browser.navigate` (dotted); both are accepted. */
    toolNames: setting(
      "mcp.toolNames",
      ["SWITCHYARD_MCP_TOOL_NAMES"],
      oneOf(["underscore", "dotted"]),
      defaults.mcp.toolNames
    ),
    /** How often a call with a progressToken reports progress besides each cascade step. */
    progressIntervalMs: setting(
      "mcp.progressIntervalMs",
      ["SWITCHYARD_MCP_PROGRESS_MS"],
      whole(1),
      defaults.mcp.progressIntervalMs
    )
  }),
  artifacts: Config.all({
    screenshots: setting("artifacts.screenshots", ["SWITCHYARD_SCREENSHOTS"], onOff, defaults.artifacts.screenshots),
    snapshots: setting("artifacts.snapshots", [], onOff, defaults.artifacts.snapshots)
  }),
  /** The largest screenshot an answer carries: past it, scaled down or clipped (and the answer says which). */
  screenshot: Config.all({
    /** The longest side, in pixels. */
    maxPx: setting("screenshot.maxPx", ["SWITCHYARD_SCREENSHOT_MAX_PX"], whole(1), defaults.screenshot.maxPx),
    /** The image as sent (base64), in bytes. */
    maxBytes: setting(
      "screenshot.maxBytes",
      ["SWITCHYARD_SCREENSHOT_MAX_BYTES"],
      whole(1),
      defaults.screenshot.maxBytes
    )
  }),
  /** Human takeover over VNC: each session's browser runs headed on its own VNC display. */
  human: Config.all({
    enabled: setting("human.enabled", ["SWITCHYARD_HUMAN"], onOff, defaults.human.enabled),
    /** How long a person has before `human_timeout`. */
    timeoutMs: setting("human.timeoutMs", ["SWITCHYARD_HUMAN_TIMEOUT_MS"], whole(1), defaults.human.timeoutMs),
    /** Where the noVNC page listens, and the host name people use to reach it. */
    host: setting("human.host", ["SWITCHYARD_VNC_HOST"], text, defaults.human.host),
    publicHost: optional("human.publicHost", ["SWITCHYARD_VNC_PUBLIC_HOST"], text)
  }),
  /** Who answers the pages' JavaScript dialogs: the agent (held open and reported), or the service at once. */
  dialogs: Config.all({
    mode: setting("dialogs.mode", ["SWITCHYARD_DIALOGS"], oneOf(["agent", "accept", "dismiss"]), defaults.dialogs.mode),
    beforeunload: setting(
      "dialogs.beforeunload",
      ["SWITCHYARD_DIALOGS_BEFOREUNLOAD"],
      oneOf(["agent", "accept", "dismiss"]),
      defaults.dialogs.beforeunload
    )
  }),
  /** Folders a page's file input may be given files from (real paths: symlinks and `..` cannot leave them). */
  uploads: Config.all({
    roots: setting("uploads.roots", ["SWITCHYARD_UPLOAD_ROOTS"], list, defaults.uploads.roots)
  }),
  downloads: Config.all({
    /** Each session saves its downloads in a folder of its own under this one. */
    dir: setting("downloads.dir", ["SWITCHYARD_DOWNLOAD_DIR"], text, defaults.downloads.dir),
    /** A download growing past this many bytes is cancelled (`download_too_large`). */
    maxBytes: setting("downloads.maxBytes", ["SWITCHYARD_DOWNLOAD_MAX_BYTES"], whole(1), defaults.downloads.maxBytes)
  }),
  /** What the browser may reach, enforced by the egress proxy (Egress/): networks and host patterns, a deny wins. */
  egress: Config.all({
    allow: setting("egress.allow", ["SWITCHYARD_EGRESS_ALLOW"], egressEntries, defaults.egress.allow),
    deny: setting("egress.deny", ["SWITCHYARD_EGRESS_DENY"], egressEntries, defaults.egress.deny),
    subresources: setting(
      "egress.subresources",
      ["SWITCHYARD_EGRESS_SUBRESOURCES"],
      onOff,
      defaults.egress.subresources
    )
  }),
  /** Tools the operator turns on: `browser.evaluate` runs the agent's JavaScript in the page. */
  tools: Config.all({
    evaluate: setting("tools.evaluate", ["SWITCHYARD_EVALUATE"], onOff, defaults.tools.evaluate)
  }),
  /** Named storage states (cookies, localStorage, sessionStorage), kept in the store encrypted with this key. */
  storage: Config.all({
    key: optional("storage.key", ["SWITCHYARD_STORAGE_KEY"], secret),
    /** The state every new session starts from. */
    state: optional("storage.state", ["SWITCHYARD_STORAGE_STATE"], text)
  }),
  /** The replay level: what a level resolved is kept in the store and replayed without a model next time. */
  replay: Config.all({
    enabled: setting("replay.enabled", ["SWITCHYARD_REPLAY"], onOff, defaults.replay.enabled),
    /** How long a kept resolution lives after it was kept or last replayed. */
    ttlMs: setting("replay.ttlMs", ["SWITCHYARD_REPLAY_TTL_MS"], whole(1), defaults.replay.ttlMs)
  }),
  /** A JSON file of secrets (name → value) tools refer to as `{{secret:NAME}}`, besides `SWITCHYARD_SECRET_<NAME>`. */
  secretsFile: optional("secretsFile", ["SWITCHYARD_SECRETS_FILE"], text),
  /** OTLP/HTTP export of traces, metrics and logs, when a collector is named. */
  telemetry: Config.all({
    otlpUrl: optional("telemetry.otlpUrl", ["SWITCHYARD_OTLP_URL", "OTEL_EXPORTER_OTLP_ENDPOINT"], text),
    serviceName: setting("telemetry.serviceName", ["OTEL_SERVICE_NAME"], text, defaults.telemetry.serviceName)
  })
})
export type ServiceConfig = Config.Success<typeof ServiceConfig>

const bad = (where: string, message: string) =>
  new InvalidInput({ field: where, message: `configuration ${where}: ${message}` })

/** One source: its provider, and where a path's value in it came from (named as a user would look for it). */
interface Source {
  readonly provider: ConfigProvider.ConfigProvider
  readonly where: (path: Path) => { readonly name: string; readonly value: unknown }
}

/** Reads the whole configuration from one source, failing with its bad key and value. */
const check = (source: Source) =>
  ServiceConfig.parse(source.provider).pipe(
    Effect.mapError((error) => {
      if (error.cause._tag === "SourceError") return bad(source.where([]).name, error.cause.message)
      // The deepest issue is the precise one (a union reports each of its members).
      const issues = SchemaIssue.makeFormatterStandardSchemaV1()(error.cause.issue).issues
      const issue = issues.reduce((a, b) => ((b.path?.length ?? 0) > (a.path?.length ?? 0) ? b : a))
      const path = (issue.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment))
      const { name, value } = source.where(path)
      const shown = JSON.stringify(value)
      return bad(
        name,
        issue.message.startsWith("is ") ? `${shown} ${issue.message}` : `${issue.message} (got ${shown})`
      )
    })
  )

/** A key in the file no setting read: misspelt, or a value where settings belong. */
const strayKey = (json: unknown, read: ReadonlySet<string>, path: ReadonlyArray<string> = []): string | undefined => {
  const children = typeof json === "object" && json !== null ? Object.entries(json) : []
  if (children.length > 0) {
    for (const [key, value] of children) {
      const stray = strayKey(value, read, [...path, key])
      if (stray !== undefined) return stray
    }
    return undefined
  }
  const key = path.join(".")
  if (key === "") return undefined
  const holdsSettings = [...read].some((r) => r.startsWith(`${key}.`))
  if (read.has(key) || (holdsSettings && typeof json === "object")) return undefined
  return holdsSettings ? `${key} holds settings, not ${JSON.stringify(json)}` : `unknown key ${key}`
}

const readJson = (path: string) =>
  Effect.tryPromise({
    try: async () => JSON.parse(await readFile(path, "utf8")) as unknown,
    catch: (cause) => bad(path, `cannot read it as JSON: ${(cause as Error).message}`)
  }).pipe(
    Effect.filterOrFail(
      (json) => typeof json === "object" && json !== null && !Array.isArray(json),
      () => bad(path, "is not a JSON object")
    )
  )

/**
 * Defaults ← the JSON file (`file`, else `SWITCHYARD_CONFIG`) ← the environment ← flags: Setting.ts's precedence, which
 * the early browser reads takeover by too. Every source is read alone first, so an error names the file and key, the
 * environment variable or the flag; unknown file keys are errors.
 */
export const resolve = (options: { file?: string; flags?: Flags; env?: Env } = {}) =>
  Effect.gen(function* () {
    const env = options.env ?? process.env
    const named = yield* Config.option(Config.String("SWITCHYARD_CONFIG")).parse(ConfigProvider.fromEnvRecord(env))
    const path = options.file ?? Option.getOrUndefined(named)
    const json = path === undefined ? {} : yield* readJson(path)
    const fileSource = ConfigProvider.fromUnknown(json)
    const envSource = fromEnvironment(env)
    const flagSource = fromFlags(options.flags ?? {})

    if (path !== undefined) {
      // The file is read through a provider that notes each key asked for: any other key is a mistake.
      const read = new Set<string>()
      const noting = ConfigProvider.make((at) => {
        read.add(at.join("."))
        return fileSource.load(at)
      })
      yield* check({
        provider: noting,
        where: (at) => ({ name: `${path}: ${at.join(".")}`, value: valueAt(json, at) })
      })
      const stray = strayKey(json, read)
      if (stray !== undefined) return yield* bad(path, stray)
    }
    yield* check({
      provider: envSource,
      where: (at) => {
        const name = nameSet(env, at) ?? "environment"
        return { name, value: env[name] }
      }
    })
    yield* check({
      provider: flagSource,
      where: (at) => ({ name: `flags: ${at.join(".")}`, value: valueAt(options.flags, at) })
    })
    return yield* check({
      provider: byPrecedence({ flags: flagSource, env: envSource, file: fileSource }).reduce((first, next) =>
        ConfigProvider.orElse(first, next)
      ),
      where: (at) => ({ name: at.join("."), value: undefined })
    })
  })
