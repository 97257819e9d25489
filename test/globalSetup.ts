/**
 * Every browser the suite starts keeps its temp profile under one run directory. After the last test, no process
 * may still run from it and no profile may be left in it; otherwise the run fails, naming what was left.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { processesMatching } from "./support/Processes.ts"

export default function setup() {
  const root = mkdtempSync(join(tmpdir(), "switchyard-test-run-"))
  // As root, Chromium runs as an unprivileged user, who must get through to its profile here (not list it).
  chmodSync(root, 0o711)
  // Workers inherit this, so os.tmpdir() in every test process points here.
  process.env.TMPDIR = root
  process.env.SWITCHYARD_TEST_RUN_DIR = root
  // Every service a test starts runs only the browsers it uses, unless the test asks for browsers started ahead.
  process.env.SWITCHYARD_WARM_BROWSERS ??= "0"
  // A service a test starts replays nothing kept by another test: the replay level is turned on by its own tests.
  process.env.SWITCHYARD_REPLAY ??= "off"
  return async () => {
    let left = processesMatching(root)
    for (let i = 0; i < 30 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100))
      left = processesMatching(root)
    }
    const profiles = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((p) =>
      p.split("/").pop()?.startsWith("switchyard-profile-")
    )
    for (const p of left) {
      try {
        process.kill(p.pid, "SIGKILL")
      } catch {}
    }
    rmSync(root, { recursive: true, force: true })
    const problems = [
      ...left.map((p) => `process ${p.pid} still running: ${p.cmdline.slice(0, 200)}`),
      ...profiles.map((p) => `temp profile left behind: ${p}`)
    ]
    if (problems.length > 0) throw new Error(`the test run left orphans:\n${problems.join("\n")}`)
  }
}
