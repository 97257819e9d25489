/**
 * The source tree's shape, checked: every module imports only downward (Errors and Logging at the bottom, the CLI
 * at the top) and no file imports itself back through others. A new engineer can trust the folder order.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { assert, describe, it } from "@effect/vitest"

const root = resolve(import.meta.dirname, "..")
const src = join(root, "src")

/** Lower ranks are imported by higher ones, never the other way. */
const ranks: ReadonlyArray<readonly [RegExp, number]> = [
  [/^Engine\/EngineId\.ts$/, 0],
  [/^Errors(\.ts|\/)/, 0],
  [/^Logging\//, 1],
  [/^Cdp\//, 2],
  [/^Egress\//, 2],
  [/^Takeover\//, 2],
  [/^Engine\//, 3],
  [/^Sandbox\//, 4],
  [/^Cascade\//, 5],
  [/^Server\//, 6],
  [/^Scenario\//, 7],
  [/^Main(\.ts|\/)/, 8]
]

const rankOf = (file: string) => ranks.find(([pattern]) => pattern.test(file))?.[1]

const sources = (readdirSync(src, { recursive: true, encoding: "utf8" }) as Array<string>).filter((f) =>
  f.endsWith(".ts")
)

/** Each source file's imports of other source files (static `import … from` and `export … from`). */
const graph = new Map(
  sources.map((file) => {
    const text = readFileSync(join(src, file), "utf8")
    const targets = [...text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gms)].map((m) =>
      relative(src, resolve(src, dirname(file), m[1]!))
    )
    return [file, targets] as const
  })
)

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
