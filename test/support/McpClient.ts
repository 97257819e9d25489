/**
 * The official MCP SDK client on a real `switchyard serve` process, for tests: over stdio, closed with the test, or
 * over Streamable HTTP to a service already listening.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { serviceEnv } from "./Service.ts"

export const main = join(import.meta.dirname, "..", "..", "src", "Main.ts")

/** An SDK client over stdio on a real `switchyard serve`, closed with the test. */
export const stdioClient = (env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve"],
        env: serviceEnv({
          ...process.env,
          SWITCHYARD_LOG_DIR: mkdtempSync(join(tmpdir(), "switchyard-logs-")),
          SWITCHYARD_IDLE_TIMEOUT_MS: "0",
          ...env
        }),
        stderr: "ignore"
      })
      const client = new Client({ name: "switchyard-test", version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** An SDK client connected over Streamable HTTP to `url`; the test ends its MCP session and closes it. */
export const httpClient = (url: string) =>
  Effect.promise(async () => {
    const transport = new StreamableHTTPClientTransport(new URL(url))
    const client = new Client({ name: "t", version: "1" })
    await client.connect(transport)
    return { client, transport }
  })
