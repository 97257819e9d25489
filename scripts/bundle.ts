/**
 * Builds the service's bundled entry, what `bin/switchyard` runs: src/Main.ts and the engine workers with effect (and
 * @effect/*) inlined and tree-shaken, each lazily loaded part of the service a chunk of its own. Run from source, a
 * start loads about 550 ES modules before the first browser (effect's barrel alone about 250) and takes ~4× the CPU;
 * the bundle loads a handful. The SDKs (playwright-core, Stagehand, magnitude-core, the MCP SDK) stay in node_modules.
 *
 * Usage: node scripts/bundle.ts. Writes dist/bundle/<build>/ and then dist/bundle/current (the build's name) last, so
 * a start never sees half a build; a service still running from an earlier build keeps its files (lazy chunks) until
 * that build is a week old. The bundler is rolldown, which comes with vitest (vite 8): no package of its own.
 */
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { build } from "rolldown"

const root = resolve(import.meta.dirname, "..")
const bundles = join(root, "dist", "bundle")
const name = `${Date.now().toString(36)}-${process.pid}`
const out = join(bundles, name)

// effect's modules are what the bundle is for; every other package is loaded from node_modules as it is.
const inlined = (id: string) => id === "effect" || id.startsWith("effect/") || id.startsWith("@effect/")
const external = (id: string) => !(id.startsWith(".") || id.startsWith("/") || id.startsWith("\0") || inlined(id))

await build({
  // A worker is a file beside the module that starts it (Engine/Isolated.ts `sibling`): every file goes in one folder.
  input: {
    Main: join(root, "src", "Main.ts"),
    CuaWorker: join(root, "src", "Engine", "Stagehand", "CuaWorker.ts"),
    Worker: join(root, "src", "Engine", "Magnitude", "Worker.ts")
  },
  platform: "node",
  external,
  logLevel: "warn",
  output: {
    dir: out,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    sourcemap: true
  }
})
writeFileSync(join(bundles, `current.${process.pid}`), name)
renameSync(join(bundles, `current.${process.pid}`), join(bundles, "current"))

// Earlier builds a week old: no service started from one is expected to still load its chunks.
const weekAgo = Date.now() - 7 * 24 * 3600 * 1000
for (const entry of readdirSync(bundles)) {
  const path = join(bundles, entry)
  if (entry === name || entry === "current" || !existsSync(join(path, "Main.js"))) continue
  if (statSync(path).mtimeMs < weekAgo) rmSync(path, { recursive: true, force: true })
}
process.stdout.write(`${join(out, "Main.js")}\n`)
