/**
 * Builds the service's bundled entry, what `bin/switchyard` runs: src/Main.ts and the engine workers with effect (and
 * @effect/*) inlined and tree-shaken, each lazily loaded part of the service a chunk of its own. Run from source, a
 * start loads about 550 ES modules before the first browser (effect's barrel alone about 250) and takes ~4× the CPU;
 * the bundle loads a handful. The SDKs (playwright-core, Stagehand, magnitude-core, the MCP SDK) stay in node_modules.
 *
 * Usage: node scripts/bundle.ts. Writes .bundle/<build>/ and then .bundle/current (the build's name) last, so
 * a start never sees half a build, with the time the build began (a source saved while it ran is newer, and builds
 * again). A build a process still runs from keeps its files (lazy chunks); others go once a week old. The bundler is
 * rolldown, which comes with vitest (vite 8): no package of its own.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { build } from "rolldown"

const root = resolve(import.meta.dirname, "..")
const bundles = join(root, ".bundle")
const name = `${Date.now().toString(36)}-${process.pid}`
const out = join(bundles, name)
const began = new Date()

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
utimesSync(join(bundles, `current.${process.pid}`), began, began)
renameSync(join(bundles, `current.${process.pid}`), join(bundles, "current"))

/** The command lines of this machine's processes (Linux's /proc): a build named in one is still running. */
const running = () => {
  const lines: Array<string> = []
  for (const pid of existsSync("/proc") ? readdirSync("/proc") : []) {
    if (!/^\d+$/.test(pid)) continue
    try {
      lines.push(readFileSync(`/proc/${pid}/cmdline`, "utf8"))
    } catch {
      // The process ended while the list was read.
    }
  }
  return lines
}

// Earlier builds a week old that no process runs from: their chunks are no longer anyone's to load.
const weekAgo = Date.now() - 7 * 24 * 3600 * 1000
const inUse = running()
for (const entry of readdirSync(bundles)) {
  const path = join(bundles, entry)
  if (entry === name || entry === "current" || !existsSync(join(path, "Main.js"))) continue
  if (statSync(path).mtimeMs < weekAgo && !inUse.some((line) => line.includes(path)))
    rmSync(path, { recursive: true, force: true })
}
process.stdout.write(`${join(out, "Main.js")}\n`)
