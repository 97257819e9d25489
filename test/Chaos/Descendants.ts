/**
 * Every process a service started, seen while it runs (browsers, their helpers, any Xvfb or VNC server), so that
 * after it exits the suite can tell whether any of them outlived it. A pid is matched with its start time, so a
 * reused pid is not mistaken for a survivor.
 */
import { readdirSync, readFileSync } from "node:fs"

export interface Seen {
  readonly pid: number
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
  readonly start: string
  readonly name: string
}

const stat = (pid: string) => {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, "utf8")
    const name = raw.slice(raw.indexOf("(") + 1, raw.lastIndexOf(")"))
    const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ")
    return { name, state: fields[0]!, ppid: Number(fields[1]), start: fields[19]! }
  } catch {
    return undefined
  }
}

/** Live descendants of `root` (not the root itself), walked through /proc. */
export const descendants = (root: number): Array<Seen> => {
  const children = new Map<number, Array<{ pid: number; name: string; start: string }>>()
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    const s = stat(pid)
    if (s === undefined || s.state === "Z" || s.state === "X") continue
    const list = children.get(s.ppid) ?? []
    list.push({ pid: Number(pid), name: s.name, start: s.start })
    children.set(s.ppid, list)
  }
  const found: Array<Seen> = []
  const queue = [root]
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child)
      queue.push(child.pid)
    }
  }
  return found
}

/** Accumulates what `descendants` finds at each `sample`. */
export const tracker = (root: number) => {
  const seen = new Map<string, Seen>()
  return {
    sample: () => {
      for (const p of descendants(root)) seen.set(`${p.pid}:${p.start}`, p)
    },
    seen: () => [...seen.values()],
    /** Those still running (same pid, same start time, not a zombie). */
    survivors: () =>
      [...seen.values()].filter((p) => {
        const s = stat(String(p.pid))
        return s !== undefined && s.start === p.start && s.state !== "Z" && s.state !== "X"
      })
  }
}
