/** Upload paths confined to their roots on the real file system: `..`, absolute paths and symlinks cannot leave. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Files from "../../src/Sandbox/Files.ts"

const base = mkdtempSync(join(tmpdir(), "switchyard-files-"))
const root = join(base, "uploads")
const outside = join(base, "secret.txt")
mkdirSync(join(root, "cv"), { recursive: true })
writeFileSync(join(root, "cv", "resume.pdf"), "%PDF")
writeFileSync(outside, "secret")
symlinkSync(outside, join(root, "innocent.pdf"))
symlinkSync(base, join(root, "up"))

afterAll(() => rmSync(base, { recursive: true, force: true }))

const typeOf = (files: ReadonlyArray<string>) =>
  Files.confine([root], files).pipe(
    Effect.map(() => "ok"),
    Effect.catch((e) => Effect.succeed(e.type))
  )

describe("upload paths", () => {
  it.effect("a file under a root is its real path", () =>
    Effect.gen(function* () {
      const [real] = yield* Files.confine([root], [join(root, "cv", "resume.pdf")])
      assert.strictEqual(real, join(root, "cv", "resume.pdf"))
    })
  )

  it.effect("paths that leave the root are rejected by policy, whichever way they are written", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* typeOf([outside]), "rejected_by_policy")
      assert.strictEqual(yield* typeOf([join(root, "..", "secret.txt")]), "rejected_by_policy")
      assert.strictEqual(yield* typeOf([join(root, "innocent.pdf")]), "rejected_by_policy")
      assert.strictEqual(yield* typeOf([join(root, "up", "secret.txt")]), "rejected_by_policy")
      // One bad file refuses the whole call.
      assert.strictEqual(yield* typeOf([join(root, "cv", "resume.pdf"), "/etc/hostname"]), "rejected_by_policy")
    })
  )

  it.effect("a missing file, a folder or no file at all is bad input", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* typeOf([join(root, "cv", "missing.pdf")]), "invalid_input")
      assert.strictEqual(yield* typeOf([join(root, "cv")]), "invalid_input")
      assert.strictEqual(yield* typeOf([]), "invalid_input")
    })
  )
})
