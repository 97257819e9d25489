/** `switchyard demo` as users run it: it prints its result and exits promptly, leaving no browser behind. */
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"

const main = join(import.meta.dirname, "..", "..", "src", "Main.ts")

describe("switchyard demo", () => {
  it.live(
    "exits within seconds of printing its result",
    () =>
      Effect.promise(async () => {
        const child = spawn(
          process.execPath,
          [main, "demo", "--log-dir", mkdtempSync(join(tmpdir(), "switchyard-logs-"))],
          {
            stdio: ["ignore", "pipe", "pipe"]
          }
        )
        let out = ""
        let printedAt = 0
        child.stdout.on("data", (chunk) => {
          out += String(chunk)
          if (printedAt === 0 && out.includes("screenshots:")) printedAt = Date.now()
        })
        child.stderr.resume()
        const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)))
        assert.strictEqual(code, 0, out)
        assert.match(out, /page says: Thanks, Ada Lovelace!/)
        assert.isBelow(Date.now() - printedAt, 15_000, "exits soon after printing")
      }),
    120_000
  )
})
