/**
 * What a start reaps through the log root's run files: a dead run's browsers and profiles, also one that had this
 * process's pid (a container's service is pid 1 on every start), and nothing of a run in another pid namespace.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Reaper from "../../src/Server/Reaper.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A log root holding the run file of a run with `pid` in `namespace`, whose one browser used a temp profile. */
const crashedRun = (pid: number, namespace: string | undefined) => {
  const root = mkdtempSync(join(tmpdir(), "switchyard-reaper-"))
  dirs.push(root)
  const profile = join(root, "switchyard-profile-left")
  mkdirSync(profile)
  mkdirSync(join(root, "run"))
  // A browser pid no process has (above any pid_max): nothing is killed.
  const run = { pid, ...(namespace === undefined ? {} : { namespace }), started: "", browsers: { 4194305: profile } }
  writeFileSync(join(root, "run", `${pid}.json`), JSON.stringify(run))
  return { root, profile }
}

describe("Reaper.reap", () => {
  it.effect("reaps a crashed run that had this process's pid: its file is read before this run writes its own", () =>
    Effect.gen(function* () {
      const { root, profile } = crashedRun(process.pid, readlinkSync("/proc/self/ns/pid"))
      const reaped = yield* Reaper.reap(root)
      assert.lengthOf(reaped, 1)
      assert.isFalse(existsSync(profile), "its profile")
      assert.deepStrictEqual(readdirSync(join(root, "run")), [], "its run file")
    })
  )

  it.effect("leaves a run of another pid namespace alone: its pids name other processes here", () =>
    Effect.gen(function* () {
      const { root, profile } = crashedRun(4194306, "pid:[1]")
      assert.deepStrictEqual(yield* Reaper.reap(root), [])
      assert.isTrue(existsSync(profile))
    })
  )
})
