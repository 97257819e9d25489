/**
 * A process and everything it started, read from /proc: CPU time (utime + stime) and memory (RSS, and PSS from
 * smaps_rollup, which splits pages shared between Chromium's processes fairly instead of counting them in each).
 */
import { readdirSync, readFileSync } from "node:fs"

// USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (100 on Linux everywhere that matters).
const ticksPerSecond = 100

interface Stat {
  readonly ppid: number
  readonly ticks: number
  /** Clock ticks after boot when the process started. */
  readonly start: number
}

const stat = (pid: number): Stat | undefined => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name may hold spaces and parentheses: the fields after it start past the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    if (fields[0] === "Z" || fields[0] === "X") return undefined
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), start: Number(fields[19]) }
  } catch {
    return undefined
  }
}

/** `root` and all its live descendants. */
export const tree = (root: number): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const s = stat(Number(entry))
    if (s === undefined) continue
    children.set(s.ppid, [...(children.get(s.ppid) ?? []), Number(entry)])
  }
  const out: Array<number> = []
  const visit = (pid: number) => {
    out.push(pid)
    for (const child of children.get(pid) ?? []) visit(child)
  }
  if (stat(root) !== undefined) visit(root)
  return out
}

/**
 * The processes `root` started, each with everything it started in turn, oldest first: a service's browsers (the
 * session's, then the spare its warm pool started after the session took one).
 */
export const children = (root: number): Array<Array<number>> =>
  tree(root)
    .filter((pid) => pid !== root && stat(pid)?.ppid === root)
    .sort((a, b) => (stat(a)?.start ?? 0) - (stat(b)?.start ?? 0))
    .map(tree)

/** CPU time used so far by the processes, in ms (a process that exited meanwhile no longer counts). */
export const cpuMs = (pids: ReadonlyArray<number>) =>
  (pids.reduce((sum, pid) => sum + (stat(pid)?.ticks ?? 0), 0) * 1000) / ticksPerSecond

const kB = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0)

const read = (path: string) => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return ""
  }
}

/**
 * RSS, PSS and USS of the processes in MiB (NaN where smaps_rollup cannot be read). PSS also moves with whatever
 * else on the machine maps the same files (other Chromiums share their binary's pages); USS, the pages only these
 * processes hold, does not.
 */
export const memoryMiB = (pids: ReadonlyArray<number>) => {
  let rss = 0
  let pss = 0
  let uss = 0
  for (const pid of pids) {
    rss += kB(read(`/proc/${pid}/status`), "VmRSS")
    const rollup = read(`/proc/${pid}/smaps_rollup`)
    pss = rollup === "" ? Number.NaN : pss + kB(rollup, "Pss")
    uss = rollup === "" ? Number.NaN : uss + kB(rollup, "Private_Clean") + kB(rollup, "Private_Dirty")
  }
  const mib = (k: number) => Math.round((k / 1024) * 10) / 10
  return { rss: mib(rss), pss: mib(pss), uss: mib(uss), processes: pids.length }
}

/** SIGKILLs whichever of `pids` is still alive: what a server left behind after it was told to stop. */
export const killLeft = (pids: ReadonlyArray<number>) => {
  const left = pids.filter((pid) => stat(pid) !== undefined)
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone meanwhile
    }
  }
  return left.length
}
