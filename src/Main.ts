/**
 * Switchyard's entry point. `serve` (the default) answers line-delimited JSON-RPC 2.0 on stdio, driving one browser
 * session on a local Chromium (or an attached one with SWITCHYARD_CDP_URL); stdin close, SIGINT or SIGTERM shut it
 * down and the browser with it.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Logger } from "effect"
import { Cascade } from "./Cascade/Cascade.ts"
import { Engines } from "./Cascade/Engines.ts"
import { Router, type ToolAnswer } from "./Cascade/Router.ts"
import * as AttemptLog from "./Logging/AttemptLog.ts"
import * as SystemLog from "./Logging/SystemLog.ts"
import * as Telemetry from "./Logging/Telemetry.ts"
import type { BrowserProvider } from "./Sandbox/Browser.ts"
import * as CdpEndpoint from "./Sandbox/CdpEndpoint.ts"
import * as LocalChromium from "./Sandbox/LocalChromium.ts"
import { Sandbox } from "./Sandbox/Sandbox.ts"
import { ErrorCode, type Handler, RpcError, serveStdio } from "./Server/JsonRpc.ts"

const usage = `Usage: switchyard [serve] [--help]

  serve   Answer line-delimited JSON-RPC 2.0 on stdin/stdout (default).
          Methods: browser.navigate {url}, browser.act {instruction | action}, browser.extract {instruction, schema?},
          browser.observe {instruction}, browser.screenshot {fullPage?}, browser.status, browser.close,
          browserStatus, browserClose.

Environment:
  CHROME_PATH                   Chromium binary (default: chromium on PATH)
  SWITCHYARD_CDP_URL            attach to a running browser (ws://…/devtools/browser/<id> or http://host:port)
  SWITCHYARD_HEADLESS=false     show the browser window
  SWITCHYARD_IDLE_TIMEOUT_MS    close the browser after this long unused (default 300000; 0 = never)
  SWITCHYARD_LEASE_TIMEOUT_MS   how long a call waits for the browser (default 30000)
  SWITCHYARD_LOG_DIR            log root (alias CLAW_LOG_DIR; default ~/.switchyard/logs)
  SWITCHYARD_SCREENSHOTS=off    no screenshot artifact per attempt
  SWITCHYARD_OTLP_URL           export traces, metrics and logs over OTLP/HTTP (e.g. http://127.0.0.1:4318)
`

const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) {
    process.stderr.write(`switchyard: ${name}=${raw} is not a non-negative number of milliseconds\n`)
    process.exit(2)
  }
  return value
}

const providerLayer = (): Layer.Layer<BrowserProvider> => {
  const cdpUrl = process.env.SWITCHYARD_CDP_URL
  if (cdpUrl) return CdpEndpoint.layer({ endpoint: cdpUrl })
  return LocalChromium.layer({
    ...(process.env.CHROME_PATH ? { executablePath: process.env.CHROME_PATH } : {}),
    headless: process.env.SWITCHYARD_HEADLESS !== "false"
  })
}

/** JSON-RPC's view of a tool answer: the result with its state, or an error whose data carries the same. */
const toRpc = (answer: ToolAnswer): Effect.Effect<unknown, RpcError> => {
  const { ok, result, error, ...rest } = answer
  if (ok) return Effect.succeed({ result, ...rest })
  const code =
    error?.field === "tool"
      ? ErrorCode.methodNotFound
      : error?.field === "arguments"
        ? ErrorCode.invalidParams
        : ErrorCode.engineError
  return Effect.fail(new RpcError({ code, message: error?.message ?? "failed", data: { ...error, ...rest } }))
}

const serve = Effect.gen(function* () {
  const router = yield* Router
  const sandbox = yield* Sandbox
  const handler: Handler = (method, params) => {
    switch (method) {
      case "browserStatus":
        return sandbox.status
      case "browserClose":
        return sandbox.close.pipe(Effect.as({ status: "ok" }))
    }
    if (!method.startsWith("browser.")) {
      return Effect.fail(new RpcError({ code: ErrorCode.methodNotFound, message: `Method not found: ${method}` }))
    }
    const { traceId, stepId, ...args } = (typeof params === "object" && params !== null ? params : {}) as Record<
      string,
      unknown
    >
    const meta = {
      ...(typeof traceId === "string" ? { traceId } : {}),
      ...(typeof stepId === "string" ? { stepId } : {})
    }
    return router.call(method, args, meta).pipe(Effect.flatMap(toRpc))
  }
  process.stderr.write("switchyard: ready, JSON-RPC 2.0 on stdio (one request per line)\n")
  yield* serveStdio(handler)
})

const main = (argv: ReadonlyArray<string>) => {
  // Magnitude's model client (BAML) logs to stdout, which carries the protocol.
  process.env.BAML_LOG ??= "off"
  const command = argv.find((a) => !a.startsWith("-")) ?? "serve"
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(usage)
    return
  }
  if (command !== "serve") {
    process.stderr.write(`switchyard: unknown command "${command}"\n\n${usage}`)
    process.exitCode = 2
    return
  }
  const idle = numberFromEnv("SWITCHYARD_IDLE_TIMEOUT_MS", 300_000)
  const layers = Router.layer.pipe(
    Layer.provideMerge(Cascade.layer),
    Layer.provideMerge(Engines.layer),
    Layer.provideMerge(
      Sandbox.layer({
        idleTimeoutMs: idle === 0 ? null : idle,
        leaseTimeoutMs: numberFromEnv("SWITCHYARD_LEASE_TIMEOUT_MS", 30_000)
      })
    ),
    Layer.provide(providerLayer())
  )
  const root = AttemptLog.defaultRoot()
  // Attempt logs and artifacts per trace; the system log replaces console logging (stdout carries the protocol).
  const logging = Layer.mergeAll(
    AttemptLog.eventsLayer,
    AttemptLog.artifactsLayer({ screenshots: process.env.SWITCHYARD_SCREENSHOTS !== "off" })
  ).pipe(
    Layer.provideMerge(AttemptLog.AttemptLog.layerWith({ root })),
    // OTLP's logger joins the system log's, so it is built where that logger is already in place.
    Layer.merge(Telemetry.layerFromEnv().pipe(Layer.provideMerge(SystemLog.layer({ root })))),
    // Whatever still logs to the console writes to stderr: stdout carries the protocol.
    Layer.merge(Layer.succeed(Logger.LogToStderr, true))
  )
  NodeRuntime.runMain(serve.pipe(Effect.scoped, Effect.provide(layers), Effect.provide(logging)), {
    disableErrorReporting: true
  })
}

main(process.argv.slice(2))
