/** Which temp profiles a start reaps: those whose owner file names a Chromium of this pid namespace that is gone. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
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
      otherNamespace: `${gone} pid:[1]`,
      // Being written (or cut short) by a launch this moment: judged by its age, as one with no owner file.
      beingWritten: ""
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
    assert.sameMembers(readdirSync(dir), [
      `${profilePrefix}live`,
      `${profilePrefix}otherNamespace`,
      `${profilePrefix}beingWritten`
    ])
  })

  it("removes a gone profile's socket directory outside it only where Chromium puts one, whatever its link says", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-reap-"))
    dirs.push(dir)
    const gone = `4194305 ${readlinkSync("/proc/self/ns/pid")}`
    /** A gone profile whose singleton socket link points into `socketDir`. */
    const profileLinkedTo = (name: string, socketDir: string) => {
      const profile = join(dir, `${profilePrefix}${name}`)
      mkdirSync(profile)
      writeFileSync(join(profile, ownerFile), gone)
      mkdirSync(socketDir, { recursive: true })
      symlinkSync(join(socketDir, "SingletonSocket"), join(profile, "SingletonSocket"))
    }
    // Where a TMPDIR too long for the socket inside the profile puts it: removed with the profile.
    const chromiums = mkdtempSync(join(tmpdir(), "org.chromium.Chromium."))
    dirs.push(chromiums)
    profileLinkedTo("socketOutside", chromiums)
    // A link to anywhere else named like one: left alone.
    const elsewhere = join(dir, "kept", "org.chromium.Chromium.abc123")
    profileLinkedTo("linkedElsewhere", elsewhere)
    await reapStaleProfiles(dir)
    assert.isFalse(existsSync(chromiums), "the socket's directory went with its profile")
    assert.isTrue(existsSync(elsewhere), "a directory the link names elsewhere stays")
    assert.deepStrictEqual(
      readdirSync(dir).filter((name) => name.startsWith(profilePrefix)),
      []
    )
  })
})
