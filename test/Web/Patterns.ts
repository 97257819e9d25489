/** Every web pattern, from the files in `patterns/`: one list for the suite and the bench. */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import type { WebPattern } from "./Pattern.ts"

const dir = join(import.meta.dirname, "patterns")

export const load = async (): Promise<ReadonlyArray<WebPattern>> => {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".ts"))
    .sort()
  const modules = await Promise.all(
    files.map((f) => import(join(dir, f)) as Promise<{ readonly patterns: ReadonlyArray<WebPattern> }>)
  )
  const all = modules.flatMap((m) => m.patterns)
  const names = new Set<string>()
  for (const p of all) {
    if (names.has(p.name)) throw new Error(`two web patterns are named ${p.name}`)
    names.add(p.name)
  }
  return all
}
