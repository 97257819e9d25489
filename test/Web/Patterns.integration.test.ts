/**
 * The web-patterns suite: every pattern in `patterns/` driven through the public tools of the real service, one
 * session per pattern, the way an agent would. A pattern fails when the agent does not get what a person would.
 */
import { afterAll, beforeAll, describe, it } from "vitest"
import { type Service, startService, stopServices } from "../support/Service.ts"
import { agentFor } from "./Agent.ts"
import { load } from "./Patterns.ts"
import * as Server from "./Server.ts"

const patterns = await load()

describe("web patterns", () => {
  let service: Service
  let server: Server.PatternServer
  beforeAll(async () => {
    server = await Server.start(patterns)
    service = startService()
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
