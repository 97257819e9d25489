/**
 * The source tree's shape, checked: every module imports only downward (Errors and Logging at the bottom, the CLI
 * at the top), never sideways into another folder of its rank, and no file imports itself back through others —
 * counting a dynamic `import()` as an import. A new engineer can trust the folder order.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { assert, describe, it } from "@effect/vitest"

const root = resolve(import.meta.dirname, "..")
const src = join(root, "src")

/** Lower ranks are imported by higher ones, never the other way. */
const ranks: ReadonlyArray<readonly [RegExp, number]> = [
  [/^EngineId\.ts$/, 0],
  [/^Shell\.ts$/, 0],
  [/^Setting\.ts$/, 0],
  [/^Errors(\.ts|\/)/, 0.5],
  [/^Logging\//, 1],
  [/^Store\//, 1],
  [/^Cdp\//, 1.5],
  [/^Egress\//, 2],
  [/^Takeover\//, 2],
  [/^Engine\//, 3],
  [/^Sandbox\//, 4],
  [/^Cascade\//, 5],
  [/^Server\//, 6],
  [/^Scenario\//, 7],
  [/^Cluster\//, 7],
  [/^Apply\//, 7.5],
  [/^Main(\.ts|\/)/, 8]
]

const rankOf = (file: string) => ranks.find(([pattern]) => pattern.test(file))?.[1]

const sources = (readdirSync(src, { recursive: true, encoding: "utf8" }) as Array<string>).filter((f) =>
  f.endsWith(".ts")
)

/** Static `import … from` and `export … from`, and dynamic `import("…")`, of a relative path. */
const importPatterns = [
  /^(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gms,
  /\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g
]

/** Each source file's imports of other source files. */
const graph = new Map(
  sources.map((file) => {
    const text = readFileSync(join(src, file), "utf8")
    const targets = importPatterns.flatMap((pattern) =>
      [...text.matchAll(pattern)].map((m) => relative(src, resolve(src, dirname(file), m[1]!)))
    )
    return [file, [...new Set(targets)]] as const
  })
)

/** The concept a file belongs to: its folder (`Cascade`), or a file at the top of `src` with its folder (`Errors.ts`
 * and `Errors/` are both `Errors`). */
const folderOf = (file: string) => file.split("/")[0]!.replace(/\.ts$/, "")

describe("source layout", () => {
  it("every file has a layer", () => {
    assert.deepStrictEqual(
      sources.filter((f) => rankOf(f) === undefined),
      []
    )
  })

  it("imports only point down the layers", () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => (rankOf(t) ?? 0) > (rankOf(file) ?? 0)).map((t) => `${file} → ${t}`)
    )
    assert.deepStrictEqual(upward, [])
  })

  it("no import reaches sideways into another folder of the same layer", () => {
    const sideways = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => folderOf(t) !== folderOf(file) && rankOf(t) === rankOf(file)).map((t) => `${file} → ${t}`)
    )
    assert.deepStrictEqual(sideways, [])
  })

  it("a dynamic import() is seen as an import", () => {
    assert.include(graph.get("Main/Cli.ts") ?? [], "Server/Mcp.ts")
  })

  it("surfaces read a tool's properties from its record, never by comparing its name", () => {
    // `name === "browser.status"` in a surface is a property (a whole state block, closing the session) kept apart
    // from the tool's record in Tool.ts, where every other surface would not see it.
    const byName = /(?:===|!==)\s*"browser[._][a-z_]+"|"browser[._][a-z_]+"\s*(?:===|!==)|case\s+"browser[._]/
    const surfaces = sources.filter((f) => /^(Server|Cluster|Main)(\/|\.ts$)/.test(f))
    assert.deepStrictEqual(
      surfaces.filter((f) => byName.test(readFileSync(join(src, f), "utf8").replace(/"browser\.provider"/g, ""))),
      []
    )
  })

  it("no import cycles", () => {
    const cycles: Array<string> = []
    const state = new Map<string, "open" | "done">()
    const visit = (file: string, path: Array<string>) => {
      if (state.get(file) === "done") return
      if (state.get(file) === "open") {
        cycles.push([...path.slice(path.indexOf(file)), file].join(" → "))
        return
      }
      state.set(file, "open")
      for (const next of graph.get(file) ?? []) visit(next, [...path, file])
      state.set(file, "done")
    }
    for (const file of sources) visit(file, [])
    assert.deepStrictEqual(cycles, [])
  })
})
