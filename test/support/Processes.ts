/** Finds live processes by command line, for the no-orphans checks (zombies awaiting their reaper are ignored). */
import { readdirSync, readFileSync } from "node:fs"

export interface ProcessInfo {
  readonly pid: number
  readonly cmdline: string
}

const state = (pid: string) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  } catch {
    return "X"
  }
}

/** Live processes whose command line contains `needle`. */
export const processesMatching = (needle: string): Array<ProcessInfo> => {
  const found: Array<ProcessInfo> = []
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue
    let cmdline: string
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")
    } catch {
      continue
    }
    if (cmdline.includes(needle) && !["Z", "X"].includes(state(pid))) found.push({ pid: Number(pid), cmdline })
  }
  return found
}

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return !["Z", "X"].includes(state(String(pid)))
  } catch {
    return false
  }
}

/** System V shared-memory segments created by `pids` that still exist (/proc/sysvipc/shm: key shmid perms size cpid …). */
export const sharedMemoryOf = (pids: ReadonlyArray<number>): Array<{ shmid: number; cpid: number }> =>
  readFileSync("/proc/sysvipc/shm", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length > 4)
    .map((fields) => ({ shmid: Number(fields[1]), cpid: Number(fields[4]) }))
    .filter((segment) => pids.includes(segment.cpid))
