/**
 * The web-patterns suite: every pattern in `patterns/` driven through the public tools of the real service, one
 * session per pattern, the way an agent would. A pattern fails when the agent does not get what a person would.
 * It runs as parts side by side, one file each (`Patterns<k>.integration.test.ts`): part k of n drives every n-th
 * pattern on a service of its own, and n is the number of those files, so every pattern runs in exactly one part.
 */
import { readdirSync } from "node:fs"
import { basename } from "node:path"
import { afterAll, beforeAll, describe, it } from "vitest"
import { type Service, startService, stopServices } from "../support/Service.ts"
import { agentFor } from "./Agent.ts"
import { load } from "./Patterns.ts"
import * as Server from "./Server.ts"

const partFile = /^Patterns(\d+)\.integration\.test\.ts$/

const partsOf = () => {
  const numbers = readdirSync(import.meta.dirname)
    .map((f) => partFile.exec(f)?.[1])
    .filter((n) => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b)
  // A gap would leave the patterns of the missing part unrun.
  if (!numbers.every((n, i) => n === i + 1)) throw new Error(`the web-pattern parts are not 1..n: ${numbers}`)
  return numbers.length
}

/** Registers the part that `file` (a part file's `import.meta.filename`) runs. */
export const part = async (file: string) => {
  const k = Number(partFile.exec(basename(file))?.[1])
  const n = partsOf()
  const patterns = (await load()).filter((_, i) => i % n === k - 1)

  describe(`web patterns, part ${k} of ${n}`, () => {
    let service: Service
    let server: Server.PatternServer
    beforeAll(async () => {
      server = await Server.start(patterns)
      // An endless download is stopped at the cap whatever its size; a small cap spares the parts beside this one
      // streaming the default 100 MB. The bench runs the patterns on the default.
      service = startService({ SWITCHYARD_DOWNLOAD_MAX_BYTES: String(8 * 1024 * 1024) })
    })
    afterAll(async () => {
      await service.call("browserClose", {}).catch(() => undefined)
      service.child.stdin.end()
      await Promise.race([service.exited, new Promise((r) => setTimeout(r, 10_000))])
      await stopServices()
      await server.close()
    })

    for (const p of patterns) {
      it(`${p.class}: ${p.name}`, { timeout: 60_000 }, async () => {
        try {
          await p.run(agentFor(service, server, p))
        } finally {
          await service.call("browserClose", { session: p.name })
        }
      })
    }
  })
}
