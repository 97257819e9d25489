/** This process's live child processes by name, for per-test checks that a test left nothing running. */
import { readdirSync, readFileSync } from "node:fs"

export interface ChildInfo {
  readonly pid: number
  readonly name: string
}

/** Live (non-zombie) children of this process whose name matches, e.g. /^(Xvfb|x11vnc|websockify|chromium)$/. */
export const ownChildren = (names: RegExp): Array<ChildInfo> => {
  const found: Array<ChildInfo> = []
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    } catch {
      continue
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(ppid) === process.pid && state !== "Z" && state !== "X" && names.test(name)) {
      found.push({ pid: Number(pid), name })
    }
  }
  return found
}

/** What a VNC test may start: the stack, the session's Chromium and the viewer's. */
export const vncProcessNames = /^(Xvfb|x11vnc|websockify|chromium|setpriv)$/
