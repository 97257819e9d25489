/**
 * What a VNC stack needs on this machine (Xvfb, x11vnc, websockify, noVNC's page), where each is, and for what is
 * missing the Debian package that brings it: checked before starting a stack and shown by `switchyard status`.
 */
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"
import { isExecutable } from "../LocalChromium.ts"

/** Where to look for what a stack runs. */
export interface ToolOptions {
  /** Directory holding noVNC's `vnc.html`; default /usr/share/novnc (Debian's novnc package). */
  readonly webRoot?: string
  /** Binaries; default the first `Xvfb`, `x11vnc`, `websockify` on PATH. */
  readonly executables?: { readonly xvfb?: string; readonly x11vnc?: string; readonly websockify?: string }
}

export interface MissingTool {
  readonly tool: string
  readonly package: string
}

const defaultWebRoot = "/usr/share/novnc"

const onPath = (name: string) =>
  (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "")
    .map((dir) => join(dir, name))
    .find(isExecutable)

const binaries = [
  { key: "xvfb", name: "Xvfb", package: "xvfb" },
  { key: "x11vnc", name: "x11vnc", package: "x11vnc" },
  { key: "websockify", name: "websockify", package: "websockify" }
] as const

/** The binaries and noVNC directory a stack would use, and what is missing. */
export const resolveBinaries = (options: ToolOptions) => {
  const found: Partial<Record<(typeof binaries)[number]["key"], string>> = {}
  const missing: Array<MissingTool> = []
  for (const b of binaries) {
    const explicit = options.executables?.[b.key]
    const path = explicit === undefined ? onPath(b.name) : isExecutable(explicit) ? explicit : undefined
    if (path === undefined) missing.push({ tool: explicit ?? b.name, package: b.package })
    else found[b.key] = path
  }
  const webRoot = options.webRoot ?? defaultWebRoot
  if (!existsSync(join(webRoot, "vnc.html")))
    missing.push({ tool: `noVNC (${join(webRoot, "vnc.html")})`, package: "novnc" })
  return { found, missing, webRoot }
}

/** The tools a VNC stack needs that this machine lacks (empty when it can run one). */
export const missingTools = (options: ToolOptions = {}): ReadonlyArray<MissingTool> => resolveBinaries(options).missing
