/**
 * What a crashed run leaves behind, found through the log root: each running service keeps
 * `<logRoot>/run/<pid>.json` listing the browsers it started (pid, profile). At start, files whose service is gone
 * are reaped: their browsers' process groups killed and their temp profiles removed. Temp profiles no run file names
 * are found by their owner files (`sweep`).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import * as Folders from "../Sandbox/Folders.ts"
import {
  pidNamespace,
  reapStaleProfiles,
  removeProfile,
  running,
  sameNamespace
} from "../Sandbox/Provider/LocalChromium/Profile.ts"

interface RunState {
  readonly pid: number
  /** The pid namespace its pids are in (none in files older than it): another's pids name other processes here. */
  readonly namespace?: string
  readonly started: string
  readonly browsers: Record<string, string>
}

const kill = (pid: number) => {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL")
    } catch {
      // gone already
    }
  }
}

/** Reaps the run files of dead services under `root`; returns what it removed, for the log. */
export const reap = (root: string) =>
  Effect.promise(async () => {
    const dir = join(root, "run")
    const reaped: Array<string> = []
    let files: Array<string> = []
    try {
      files = readdirSync(dir).filter((f) => f.endsWith(".json"))
    } catch {
      return reaped
    }
    for (const file of files) {
      let state: RunState
      try {
        state = JSON.parse(readFileSync(join(dir, file), "utf8")) as RunState
      } catch {
        rmSync(join(dir, file), { force: true })
        continue
      }
      // Read before this run writes its own: a file with this pid is a crashed run's that had it too (a container's
      // pid 1). Another namespace's run cannot be told dead, nor its pids killed.
      if (!sameNamespace(state.namespace) || (state.pid !== process.pid && running(state.pid))) continue
      for (const [pid, profile] of Object.entries(state.browsers)) {
        if (running(Number(pid))) kill(Number(pid))
        if (profile !== "") await removeProfile(profile)
        reaped.push(`browser ${pid}${profile ? ` (${profile})` : ""}`)
      }
      rmSync(join(dir, file), { force: true })
    }
    return reaped
  })

/** This service's run file, kept current as browsers start and stop; removed on a clean exit. */
export const register = (root: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = join(root, "run")
      const file = join(dir, `${process.pid}.json`)
      const state: RunState = {
        pid: process.pid,
        namespace: pidNamespace,
        started: new Date().toISOString(),
        browsers: {}
      }
      const write = () => {
        try {
          mkdirSync(dir, { recursive: true })
          writeFileSync(file, JSON.stringify(state))
        } catch {
          // An unwritable log root only loses the reaping of a crash; the system log reports the root.
        }
      }
      write()
      return {
        file,
        started: (pid: number, profileDir: string) => {
          state.browsers[String(pid)] = profileDir
          write()
        },
        stopped: (pid: number) => {
          delete state.browsers[String(pid)]
          write()
        }
      }
    }),
    ({ file }) => Effect.sync(() => rmSync(file, { force: true }))
  )

/**
 * Temp profiles that no run file names (a browser started before its service registered it, a run whose log root
 * was unwritable), found where temp profiles go by their owner files: only those whose Chromium is gone. Also the
 * empty download folders under `downloadRoots` whose browser is gone.
 */
export const sweep = (downloadRoots: ReadonlyArray<string>) =>
  Effect.all([
    reapIn([tmpdir(), "/tmp"], reapStaleProfiles, (paths) =>
      Effect.logWarning(`reaped temp profiles whose browser is gone: ${paths}`)
    ),
    reapIn(downloadRoots, Folders.reapEmpty, (paths) =>
      Effect.logInfo(`removed empty download folders whose browser is gone: ${paths}`)
    )
  ]).pipe(Effect.asVoid)

/** Runs `reap` in each of `dirs` (once each) and logs what it removed, if anything. */
const reapIn = (
  dirs: ReadonlyArray<string>,
  reap: (dir: string) => Promise<ReadonlyArray<string>>,
  log: (paths: string) => Effect.Effect<void>
) =>
  Effect.forEach([...new Set(dirs)], (dir) => Effect.promise(() => reap(dir))).pipe(
    Effect.map((found) => found.flat()),
    Effect.flatMap((paths) => (paths.length > 0 ? log(paths.join(", ")) : Effect.void))
  )
