/**
 * `switchyard status`: what this machine and configuration can run — the browser, each cascade level's engine (or
 * why it would be skipped), human takeover, the log root and the services running on it. Reads only; starts nothing.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option } from "effect"
import * as Engines from "../Cascade/Engines.ts"
import * as Policy from "../Cascade/Policy.ts"
import * as EngineId from "../EngineId.ts"
import * as LocalChromium from "../Sandbox/Provider/LocalChromium.ts"
import { missingTools } from "../Sandbox/Provider/Vnc/Tools.ts"
import * as Takeovers from "../Takeover/Takeovers.ts"
import type * as Config from "./Config.ts"

const services = (root: string) => {
  try {
    return readdirSync(join(root, "run"))
      .filter((f) => f.endsWith(".json"))
      .map(
        (f) =>
          JSON.parse(readFileSync(join(root, "run", f), "utf8")) as {
            pid: number
            started: string
            browsers: Record<string, string>
          }
      )
      .filter((s) => {
        try {
          process.kill(s.pid, 0)
          return true
        } catch {
          return false
        }
      })
  } catch {
    return []
  }
}

/** Human takeover: on or off, the VNC tools found or missing (with their packages), the sessions a person holds. */
const takeover = (config: Config.ServiceConfig) => {
  const missing = missingTools()
  const install = `apt-get install ${[...new Set(missing.map((m) => m.package))].join(" ")}`
  const tools =
    missing.length === 0
      ? "Xvfb, x11vnc, websockify and noVNC found"
      : `missing ${missing.map((m) => m.tool).join(", ")} (${install})`
  const on = config.human.enabled
  const held = Takeovers.list(config.logDir)
  return {
    level: !on
      ? "off: SWITCHYARD_HUMAN=on gives each session's browser its own VNC display a person can take over"
      : missing.length === 0
        ? `ready: each session's browser runs headed on its own VNC display; a person has ${config.human.timeoutMs} ms`
        : `cannot start: ${tools}`,
    lines: [
      `takeover     ${on ? "on" : "off (SWITCHYARD_HUMAN=on)"}; VNC tools: ${tools}`,
      ...(held.length === 0
        ? ["held         no session is held by a person"]
        : held.map(
            (t, i) =>
              `${i === 0 ? "held        " : "            "} ${t.session} since ${t.since} (${t.reason}): switchyard takeover show ${t.session}`
          ))
    ]
  }
}

export const report = (config: Config.ServiceConfig) =>
  Effect.gen(function* () {
    const root = config.logDir
    const lines: Array<string> = ["Switchyard status", ""]
    const browser = config.browser
    const kind = browser.provider
    if (kind === "local") {
      const chromium = yield* Effect.result(LocalChromium.findExecutable(browser.chromePath))
      lines.push(
        `browser      local Chromium: ${chromium._tag === "Success" ? chromium.success : chromium.failure.message}`
      )
      const sandbox = yield* Effect.result(LocalChromium.sandboxing(browser))
      lines.push(
        `sandbox      ${
          sandbox._tag === "Failure"
            ? `cannot start: ${sandbox.failure.message}`
            : sandbox.success.kind === "off"
              ? "OFF: Chromium runs with --no-sandbox (browser.noSandbox / SWITCHYARD_NO_SANDBOX is set)"
              : sandbox.success.kind === "user"
                ? `on: Chromium runs as ${sandbox.success.account.name} (uid ${sandbox.success.account.uid}), not root`
                : "on: Chromium runs as this user"
        }`
      )
    } else {
      lines.push(`browser      ${kind}: ${kind === "cdp" ? browser.cdpUrl : browser.adspower.url}`)
    }
    const policy = typeof config.cascade === "string" ? yield* Policy.load(config.cascade) : config.cascade
    const registry = yield* Engines.make({ model: config.model })
    lines.push("cascade      (default policy; Workday pages start with Magnitude)")
    const vnc = takeover(config)
    for (const [i, level] of policy.default.levels.entries()) {
      const spec = yield* Effect.option(registry.specFor(level))
      const why =
        level.engine === "human"
          ? vnc.level
          : Option.isSome(spec)
            ? "ready"
            : (yield* Effect.flip(registry.specFor(level))).message
      lines.push(`  ${i}. ${EngineId.label(Policy.idOf(level)).padEnd(15)} ${why}`)
    }
    lines.push(...vnc.lines)
    const sessions = config.sessions
    lines.push(
      `sessions     up to ${sessions.maxBrowsers} browsers, ${sessions.queue} calls queued, idle close after ${sessions.idleTimeoutMs} ms`
    )
    lines.push(`log root     ${root}`)
    const running = services(root)
    lines.push(
      running.length === 0
        ? "services     none running on this log root"
        : `services     ${running.map((s) => `pid ${s.pid} since ${s.started} (${Object.keys(s.browsers).length} browsers)`).join("; ")}`
    )
    return lines.join("\n")
  })
