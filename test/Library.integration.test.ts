/**
 * Switchyard as a package another project installs: `npm pack` builds JavaScript with type declarations and its
 * command; installed with nothing but its declared dependencies, every `exports` entry loads and type-checks and the
 * command serves a real call; and `examples/compose`, installed from the same tarball, type-checks and passes its own
 * tests (a TestClock cascade time limit, and typed calls to its own service over a real Chromium).
 */
import { execFileSync, spawn } from "node:child_process"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as SiteServer from "./fixtures/SiteServer.ts"
import { isAlive } from "./support/Processes.ts"
import { waitFor } from "./support/Wait.ts"

const root = join(import.meta.dirname, "..")
const example = join(root, "examples", "compose")
const bin = (name: string) => join(root, "node_modules", ".bin", name)
/** The Node running the tests first on PATH: the package's command runs on `node` from PATH, as npm's links do. */
const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` }
const run = (file: string, args: ReadonlyArray<string>, cwd: string) => {
  try {
    return execFileSync(file, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env })
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`${file} ${args.join(" ")} failed:\n${stdout ?? ""}\n${stderr ?? ""}`)
  }
}

interface Manifest {
  readonly private?: boolean
  readonly bin: Record<string, string>
  readonly exports: Record<string, string | { types: string; default: string }>
  readonly dependencies: Record<string, string>
  readonly peerDependencies: Record<string, string>
}
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Manifest
/** Every `exports` entry as a specifier another project imports (`switchyard/Router`). */
const specifiers = Object.keys(manifest.exports).map((key) => `switchyard${key.slice(1)}`)
/** How an entry is imported: JSON (the manifest) only with its import attribute, as Node requires. */
const attributes = (specifier: string) => (specifier.endsWith(".json") ? ` with { type: "json" }` : "")

let out = ""
let tarball = ""
let files = new Set<string>()
let consumer = ""

/** The package unpacked under `project`'s node_modules, its commands linked into `.bin`, as npm installs a tarball. */
const install = (project: string) => {
  const installed = join(project, "node_modules", "switchyard")
  rmSync(installed, { recursive: true, force: true })
  mkdirSync(installed, { recursive: true })
  run("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"], root)
  mkdirSync(join(project, "node_modules", ".bin"), { recursive: true })
  for (const [name, target] of Object.entries(manifest.bin)) {
    const link = join(project, "node_modules", ".bin", name)
    rmSync(link, { force: true })
    symlinkSync(relative(dirname(link), join(installed, target)), link)
    chmodSync(join(installed, target), 0o755)
  }
}

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), "switchyard-pack-"))
  // What an earlier build left of a module since removed: the build starts afresh, so it is not published.
  mkdirSync(join(root, "dist"), { recursive: true })
  writeFileSync(join(root, "dist", "Removed.js"), "export {}\n")
  // `npm pack` runs the build (prepack): dist/ with .js and .d.ts.
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], root)) as Array<{
    filename: string
    files: ReadonlyArray<{ path: string }>
  }>
  tarball = join(out, packed[0]!.filename)
  files = new Set(packed[0]!.files.map((f) => f.path))
  // A project that installed the package: beside it only its dependencies and peers, so what its declarations and
  // modules name must be among them.
  consumer = join(out, "consumer")
  mkdirSync(join(consumer, "node_modules"), { recursive: true })
  install(consumer)
  for (const name of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
    mkdirSync(dirname(join(consumer, "node_modules", name)), { recursive: true })
    symlinkSync(join(root, "node_modules", name), join(consumer, "node_modules", name))
  }
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }))
}, 240_000)

afterAll(() => rmSync(out, { recursive: true, force: true }))

describe("the packed library", () => {
  it("holds the built library and its command, nothing else, and may be published", () => {
    assert.isUndefined(manifest.private, "a private package cannot be published")
    const missing = Object.values(manifest.exports)
      .flatMap((e) => (typeof e === "string" ? [e] : [e.types, e.default]))
      .map((p) => p.replace(/^\.\//, ""))
      .filter((p) => !files.has(p))
    assert.deepStrictEqual(missing, [], "every exports entry is in the tarball")
    for (const target of Object.values(manifest.bin)) assert.isTrue(files.has(target), `the command ${target}`)
    assert.deepStrictEqual(
      [...files].filter((p) => !/^(dist\/.*|scenarios\/.*|docs\/.*\.md|README\.md|package\.json)$/.test(p)),
      [],
      "only the build, the scenario suite, the README and its docs pages, the manifest: no sources, scripts or tests"
    )
    assert.isFalse(
      [...files].some((p) => p.endsWith(".ts") && !p.endsWith(".d.ts")),
      "no TypeScript sources in the package"
    )
    const stale = [...files]
      .filter((p) => p.startsWith("dist/"))
      .map((p) => p.replace(/^dist\//, "src/").replace(/(\.d)?\.(js|ts)(\.map)?$/, ".ts"))
      .filter((p) => !existsSync(join(root, p)))
    assert.deepStrictEqual(stale, [], "every built file is one of today's modules")
  })

  it("installed with only its declared dependencies, every entry point loads and its declarations type-check", () => {
    writeFileSync(
      join(consumer, "entries.ts"),
      specifiers.map((s, i) => `import * as Entry${i} from "${s}"${attributes(s)}\nexport { Entry${i} }\n`).join("")
    )
    // Strict, and every declaration checked (skipLibCheck off): a type named but not installed is an error. Node's
    // types named as a Node project names them (TypeScript 7 loads no `@types` package unasked).
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2023",
          module: "nodenext",
          moduleResolution: "nodenext",
          types: ["node"],
          strict: true,
          noEmit: true,
          skipLibCheck: false
        },
        files: ["entries.ts"]
      })
    )
    run(bin("tsc"), ["-p", "tsconfig.json"], consumer)
    const script = `const failed = []
for (const s of ${JSON.stringify(specifiers)}) await import(s, s.endsWith(".json") ? { with: { type: "json" } } : undefined).catch((e) => failed.push(s + ": " + e.message))
console.log(JSON.stringify(failed)); process.exit(0)`
    const failed = JSON.parse(run(process.execPath, ["--input-type=module", "-e", script], consumer)) as Array<string>
    assert.deepStrictEqual(failed, [], "every exports entry loads")
  }, 180_000)

  it.live(
    "its command runs from the tarball: help, a refused mistake, and a service answering a call over a real Chromium",
    () =>
      Effect.gen(function* () {
        const command = join(consumer, "node_modules", ".bin", "switchyard")
        const help = run(command, ["--help"], consumer)
        assert.include(help, "USAGE\n  switchyard <subcommand>")
        const refused = yield* Effect.promise(
          () =>
            new Promise<{ code: number | null; stderr: string }>((resolve) => {
              const child = spawn(command, ["resmue"], { cwd: consumer, env, stdio: ["ignore", "ignore", "pipe"] })
              let stderr = ""
              child.stderr.on("data", (c) => {
                stderr += String(c)
              })
              child.once("exit", (code) => resolve({ code, stderr }))
            })
        )
        assert.deepStrictEqual(refused, {
          code: 2,
          stderr: 'switchyard: unknown command "resmue"; did you mean `resume`?\n'
        })

        const site = yield* SiteServer.start
        const service = yield* Effect.acquireRelease(
          Effect.sync(() =>
            spawn(command, ["serve", "--jsonrpc"], {
              cwd: consumer,
              env: {
                ...env,
                SWITCHYARD_LOG_DIR: join(out, "logs"),
                SWITCHYARD_WARM_BROWSERS: "0",
                SWITCHYARD_IDLE_TIMEOUT_MS: "0"
              },
              stdio: ["pipe", "pipe", "pipe"]
            })
          ),
          (child) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
        )
        const exited = new Promise<number | null>((resolve) => service.once("exit", resolve))
        const answers = new Map<number, (answer: { result?: Record<string, unknown>; error?: unknown }) => void>()
        createInterface({ input: service.stdout }).on("line", (line) => {
          const answer = JSON.parse(line) as { id: number; result?: Record<string, unknown>; error?: unknown }
          answers.get(answer.id)?.(answer)
        })
        let stderr = ""
        service.stderr.on("data", (c) => {
          stderr += String(c)
        })
        let id = 0
        const call = (method: string, params: object = {}) =>
          Effect.promise(
            () =>
              new Promise<{ result?: Record<string, unknown>; error?: unknown }>((resolve) => {
                answers.set(++id, resolve)
                service.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
              })
          )
        const navigated = yield* call("browser.navigate", { url: site.url("/plain.html") })
        assert.deepInclude(
          (navigated.result as { result: object } | undefined)?.result,
          { title: "Plain page", url: site.url("/plain.html") },
          `${JSON.stringify(navigated)}\n${stderr}`
        )
        const status = yield* call("browserStatus")
        const browserPid = (status.result as { browserPid: number }).browserPid
        assert.isTrue(isAlive(browserPid))
        service.stdin.end()
        assert.strictEqual(yield* Effect.promise(() => exited), 0, stderr)
        assert.isTrue(yield* Effect.promise(() => waitFor(() => !isAlive(browserPid))), "its Chromium ended with it")

        // The scenario suite it ships, on the fixture sites it ships (a page it cannot serve fails the scenario).
        const logs = join(out, "scenario-logs")
        const suite = join(consumer, "node_modules", "switchyard", "scenarios", "suite.json")
        const baseline = join(out, "baseline.json")
        const ran = run(
          command,
          [
            "scenarios",
            "run",
            suite,
            "--only",
            "forms-subscribe",
            "--log-dir",
            logs,
            "--baseline",
            baseline,
            "--update-baseline"
          ],
          consumer
        )
        assert.include(ran, "Runs passed: 1/1 (100.0%)", ran)
      }),
    180_000
  )

  it("installs into the example project, which type-checks and passes its tests through the public entry points", () => {
    // Its dependencies resolve from the repository's node_modules above, so the test needs no registry.
    install(example)
    run(bin("tsc"), ["-p", "tsconfig.json"], example)
    const report = join(out, "example.json")
    run(bin("vitest"), ["run", "--root", example, "--reporter=json", `--outputFile=${report}`], example)
    const result = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number }
    assert.deepStrictEqual({ passed: result.numPassedTests, failed: result.numFailedTests }, { passed: 2, failed: 0 })
  }, 180_000)
})
