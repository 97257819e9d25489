/**
 * A private VNC stack per session, so a person can take over its browser: Xvfb on a free display, x11vnc on it with a
 * password per takeover, websockify serving the noVNC client. Every process stops with the scope, and with this process.
 */
import { hostname } from "node:os"
import { Context, Effect, Layer } from "effect"
import type { BrowserLaunchFailed } from "../../Errors/Browser.ts"
import { NotConfigured } from "../../Errors/Engine.ts"
import { Display } from "../../Takeover/Display.ts"
import { BrowserProvider } from "./Browser.ts"
import * as LocalChromium from "./LocalChromium.ts"
import { accessTo, files, newPassword, remote } from "./Vnc/Access.ts"
import { onFreePort, ready, setpriv, started } from "./Vnc/Process.ts"
import { resolveBinaries, type ToolOptions } from "./Vnc/Tools.ts"

export interface VncOptions extends ToolOptions {
  /** Screen size of the private display; the VNC Chromium's window fills it. Default 1280×800. */
  readonly width?: number
  readonly height?: number
  /** Interface websockify (the noVNC page and its WebSocket) listens on; default 127.0.0.1. x11vnc is loopback-only. */
  readonly host?: string
  /** Host name in the noVNC URL, as the person's browser reaches it; default `host` (this machine's name for 0.0.0.0). */
  readonly publicHost?: string
  /** Port for the noVNC page and its WebSocket; default a free one. */
  readonly websocketPort?: number
  /** Bound on each process becoming ready; default 15 s. */
  readonly startTimeoutMs?: number
  /** How long each process may take to exit on SIGTERM before its process group is killed; default 2 s. */
  readonly stopTimeoutMs?: number
  /** Told about the stack's private directory (with Xvfb's pid), so a later run can remove what a crashed one left. */
  readonly registry?: LocalChromium.LocalChromiumOptions["registry"]
}

export interface VncProcesses {
  readonly xvfb: number
  readonly x11vnc: number
  readonly websockify: number
}

export class Vnc extends Context.Service<
  Vnc,
  {
    /** The X display the session's browser runs on, e.g. `:3`. */
    readonly display: string
    readonly size: { readonly width: number; readonly height: number }
    /** The page that connects at once; it carries no password (noVNC asks for it), so it may be logged. */
    readonly url: string
    readonly websocketPort: number
    /** x11vnc's RFB port, on 127.0.0.1 only. */
    readonly vncPort: number
    readonly pids: VncProcesses
    /** Whether Xvfb, x11vnc and websockify all still run. */
    readonly alive: Effect.Effect<boolean>
    /** A fresh password for one takeover (nobody knows the one in force otherwise), and the link carrying it. */
    readonly admit: Display["Service"]["admit"]
    /** Replaces the password with one nobody knows and disconnects every viewer. */
    readonly dismiss: Effect.Effect<void>
  }
>()("switchyard/Vnc") {
  static readonly layer = (options: VncOptions = {}): Layer.Layer<Vnc, NotConfigured | BrowserLaunchFailed> =>
    Layer.effect(Vnc, make(options))

  /** What a person sees: this stack's display and noVNC page. */
  static readonly layerDisplay: Layer.Layer<Display, never, Vnc> = Layer.effect(
    Display,
    Effect.gen(function* () {
      const vnc = yield* Vnc
      return Display.of({
        name: vnc.display,
        url: vnc.url,
        alive: vnc.alive,
        admit: vnc.admit,
        dismiss: vnc.dismiss
      })
    })
  )

  /** The session's browser provider for a VNC session: a headed local Chromium filling the VNC display. */
  static readonly layerLocalChromium = (
    options: Omit<LocalChromium.LocalChromiumOptions, "headless" | "display"> = {}
  ): Layer.Layer<BrowserProvider, never, Vnc> =>
    Layer.effect(
      BrowserProvider,
      Effect.gen(function* () {
        const vnc = yield* Vnc
        return LocalChromium.make({
          ...(yield* LocalChromium.throughEgress(options)),
          headless: false,
          display: vnc.display,
          windowSize: options.windowSize ?? vnc.size,
          // No window manager places the window: put it at the screen's corner, where the person's view starts.
          extraArgs: ["--window-position=0,0", ...(options.extraArgs ?? [])]
        })
      })
    )
}

/** Starts the stack for the current scope; closing the scope stops websockify, x11vnc and Xvfb, in that order. */
export const make = Effect.fnUntraced(function* (options: VncOptions = {}) {
  const { found, missing, webRoot } = resolveBinaries(options)
  if (missing.length > 0) {
    return yield* new NotConfigured({
      engine: "human",
      message: `human takeover over VNC needs ${missing.map((m) => m.tool).join(", ")}, which ${missing.length === 1 ? "is" : "are"} not installed: apt-get install ${[...new Set(missing.map((m) => m.package))].join(" ")}`
    })
  }
  const width = options.width ?? 1280
  const height = options.height ?? 800
  const host = options.host ?? "127.0.0.1"
  const startTimeoutMs = options.startTimeoutMs ?? 15_000
  const graceMs = options.stopTimeoutMs ?? 2_000
  if (setpriv === undefined) {
    yield* Effect.logWarning("setpriv (util-linux) not found: the VNC processes would outlive a killed service")
  }

  // Xvfb picks a free display itself and writes its number to fd 3 once it accepts clients.
  const xvfb = yield* started(
    "Xvfb",
    found.xvfb!,
    ["-displayfd", "3", "-screen", "0", `${width}x${height}x24`, "-nolisten", "tcp", "-noreset"],
    graceMs,
    true
  )
  const displayNumber = yield* ready<number>(xvfb, startTimeoutMs, (done) => {
    let text = ""
    const stream = xvfb.child.stdio[3] as NodeJS.ReadableStream | null
    const onData = (chunk: Buffer | string) => {
      text += String(chunk)
      const match = /^(\d+)\s/.exec(text)
      if (match) done(Number(match[1]))
    }
    stream?.on("data", onData)
    return () => stream?.off("data", onData)
  })
  const display = `:${displayNumber}`

  // x11vnc reads its password from a private file (never its command line), again on every new connection: each
  // takeover writes a fresh one there. Until then it holds one nobody is told.
  const own = yield* files(webRoot)
  if (xvfb.child.pid !== undefined) options.registry?.started(xvfb.child.pid, own.dir)
  yield* Effect.addFinalizer(() => Effect.sync(() => xvfb.child.pid && options.registry?.stopped(xvfb.child.pid)))

  const { proc: x11vnc, port: vncPort } = yield* onFreePort("127.0.0.1", undefined, (port) =>
    Effect.gen(function* () {
      const proc = yield* started(
        "x11vnc",
        found.x11vnc!,
        [
          ...["-display", display, "-rfbport", String(port), "-localhost", "-noipv6"],
          ...["-passwdfile", `read:${own.passwordFile}`],
          // Remote control stays on (over the X display, which whoever could use it drives anyway): it is how a
          // takeover's end disconnects the person.
          ...["-forever", "-shared", "-norc", "-nolookup", "-nocmds", "-quiet"],
          // Shared-memory polling leaves its segments behind whenever x11vnc is killed; they add up until none are left.
          "-noshm"
        ],
        graceMs
      )
      // x11vnc prints PORT=<n> on stdout once it listens.
      const listening = yield* ready<number>(proc, startTimeoutMs, (done) => {
        let text = ""
        const onData = (chunk: string) => {
          text += chunk
          const match = /PORT=(\d+)\s/.exec(text)
          if (match) done(Number(match[1]))
        }
        proc.child.stdout?.on("data", onData)
        return () => proc.child.stdout?.off("data", onData)
      })
      return { proc, port: listening }
    })
  )

  const { proc: websockify, port: websocketPort } = yield* onFreePort(host, options.websocketPort, (port) =>
    Effect.gen(function* () {
      const proc = yield* started(
        "websockify",
        found.websockify!,
        [`--web=${own.webRoot}`, `${host.includes(":") ? `[${host}]` : host}:${port}`, `127.0.0.1:${vncPort}`],
        graceMs
      )
      const probeHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host
      const page = `http://${probeHost.includes(":") ? `[${probeHost}]` : probeHost}:${port}/`
      // Ready when it serves the noVNC page.
      yield* ready<void>(proc, startTimeoutMs, (done) => {
        let polling = true
        const poll = async () => {
          while (polling) {
            const ok = await fetch(page, { signal: AbortSignal.timeout(1_000) })
              .then(async (r) => {
                await r.body?.cancel()
                return r.ok
              })
              .catch(() => false)
            if (ok) return done()
            await new Promise((r) => setTimeout(r, 50))
          }
        }
        void poll()
        return () => {
          polling = false
        }
      })
      return { proc, port }
    })
  )

  const urlHost = options.publicHost ?? (host === "0.0.0.0" || host === "::" ? hostname() : host)
  const authority = `${urlHost.includes(":") ? `[${urlHost}]` : urlHost}:${websocketPort}`
  // noVNC finds the WebSocket where it found the page, so the address says nothing more.
  const url = `http://${authority}/`
  const procs = [xvfb, x11vnc, websockify]
  yield* Effect.logInfo("VNC stack started", { display, url, vncPort, websocketPort })
  yield* Effect.addFinalizer(() => Effect.logDebug("VNC stack stopping", { display }))

  return Vnc.of({
    display,
    size: { width, height },
    url,
    websocketPort,
    vncPort,
    pids: { xvfb: xvfb.child.pid ?? -1, x11vnc: x11vnc.child.pid ?? -1, websockify: websockify.child.pid ?? -1 },
    alive: Effect.sync(() => procs.every((p) => !p.exited())),
    admit: Effect.gen(function* () {
      const password = newPassword()
      yield* own.setPassword(password)
      return accessTo(url, password)
    }),
    dismiss: Effect.gen(function* () {
      yield* own.setPassword(newPassword())
      if (!(yield* remote(found.x11vnc!, display, "disconnect:all")))
        yield* Effect.logWarning(`could not disconnect the viewers of ${display}; the password they used is void`)
    })
  })
})
