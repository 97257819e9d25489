/**
 * Switchyard as a library another project installs: `npm pack` builds JavaScript with type declarations, every
 * `exports` entry is in the tarball, and `examples/compose` — installed from that tarball — type-checks and passes its
 * own tests (a TestClock cascade time limit, and its own service over a real Chromium) through the public API only.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"

const root = join(import.meta.dirname, "..")
const example = join(root, "examples", "compose")
const bin = (name: string) => join(root, "node_modules", ".bin", name)
const run = (file: string, args: ReadonlyArray<string>, cwd: string) =>
  execFileSync(file, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: process.env })

describe("the packed library", () => {
  it("packs, installs into the example project and passes its tests through the public entry points", () => {
    const out = mkdtempSync(join(tmpdir(), "switchyard-pack-"))
    try {
      // `npm pack` runs the build (prepack): dist/ with .js and .d.ts.
      const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], root)) as Array<{
        filename: string
        files: ReadonlyArray<{ path: string }>
      }>
      const tarball = join(out, packed[0]!.filename)
      const files = new Set(packed[0]!.files.map((f) => f.path))
      const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        exports: Record<string, string | { types: string; default: string }>
      }
      const missing = Object.values(manifest.exports)
        .flatMap((e) => (typeof e === "string" ? [e] : [e.types, e.default]))
        .map((p) => p.replace(/^\.\//, ""))
        .filter((p) => !files.has(p))
      assert.deepStrictEqual(missing, [], "every exports entry is in the tarball")
      assert.isFalse(
        [...files].some((p) => p.endsWith(".ts") && !p.endsWith(".d.ts")),
        "no TypeScript sources in the package"
      )
      // Installed the way npm installs a tarball (unpacked under node_modules); its dependencies resolve from the
      // repository's node_modules above, so the test needs no registry.
      const installed = join(example, "node_modules", "switchyard")
      rmSync(installed, { recursive: true, force: true })
      mkdirSync(installed, { recursive: true })
      run("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"], root)
      run(bin("tsc"), ["-p", "tsconfig.json"], example)
      const report = join(out, "example.json")
      run(bin("vitest"), ["run", "--root", example, "--reporter=json", `--outputFile=${report}`], example)
      const result = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number }
      assert.deepStrictEqual({ passed: result.numPassedTests, failed: result.numFailedTests }, { passed: 2, failed: 0 })
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 180_000)
})
