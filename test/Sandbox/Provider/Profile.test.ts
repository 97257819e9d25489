/** Which temp profiles a start reaps: those whose owner file names a Chromium of this pid namespace that is gone. */
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { ownerFile, profilePrefix, reapStaleProfiles } from "../../../src/Sandbox/Provider/LocalChromium/Profile.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe("reapStaleProfiles", () => {
  it("removes a profile whose Chromium is gone, and none a live or another namespace's Chromium may still use", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-reap-"))
    dirs.push(dir)
    const ours = readlinkSync("/proc/self/ns/pid")
    // Above any pid_max Linux allows: no process has it.
    const gone = 4_194_305
    const profiles = {
      gone: `${gone} ${ours}`,
      goneBeforeNamespaces: `${gone}`,
      live: `${process.pid} ${ours}`,
      otherNamespace: `${gone} pid:[1]`
    }
    for (const [name, owner] of Object.entries(profiles)) {
      mkdirSync(join(dir, `${profilePrefix}${name}`))
      writeFileSync(join(dir, `${profilePrefix}${name}`, ownerFile), owner)
    }
    const reaped = await reapStaleProfiles(dir)
    assert.sameMembers(
      reaped.map((path) => path.slice(path.lastIndexOf(profilePrefix) + profilePrefix.length)),
      ["gone", "goneBeforeNamespaces"]
    )
    assert.sameMembers(readdirSync(dir), [`${profilePrefix}live`, `${profilePrefix}otherNamespace`])
  })
})
