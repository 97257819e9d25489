/**
 * `switchyard demo`: serves a bundled sign-up page on 127.0.0.1, runs a short task on it through the cascade with
 * whatever engines are configured (the Playwright engine needs none), and prints each step and where the logs and
 * screenshots went.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { Console, Effect } from "effect"
import * as AttemptLog from "../Logging/AttemptLog.ts"
import type * as Config from "./Config.ts"
import * as Service from "./Service.ts"
import { Sessions } from "./Sessions.ts"

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchyard demo</title></head>
<body>
<h1>Join the waiting list</h1>
<form onsubmit="event.preventDefault(); document.querySelector('#done').textContent = 'Thanks, ' + this.name.value + '!'">
  <label for="name">Name</label> <input id="name" name="name">
  <label for="email">Email</label> <input id="email" name="email" type="email">
  <label><input type="checkbox" name="news"> Send me news</label>
  <button type="submit">Join</button>
</form>
<p id="done" role="status"></p>
</body></html>`

const serve = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<ReturnType<typeof createServer>>((resolve) => {
        const server = createServer((_, res) => res.writeHead(200, { "content-type": "text/html" }).end(page))
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
  ),
  // Chromium keeps idle (and preconnected) sockets open: close them, or `close` waits for the server's 60 s
  // headers timeout before the process can exit.
  (server) =>
    Effect.promise(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/`))

export const run = (config: Config.ServiceConfig) =>
  Effect.gen(function* () {
    const url = yield* serve
    const sessions = yield* Sessions
    const traceId = `demo-${Date.now()}`
    const steps: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["browser.navigate", { url }],
      ["browser.act", { instruction: 'fill "Name" with "Ada Lovelace"' }],
      ["browser.act", { instruction: 'check "Send me news"' }],
      ["browser.act", { instruction: 'click "Join"' }],
      [
        "browser.extract",
        { instruction: "the confirmation", schema: { type: "object", properties: { text: { type: "string" } } } }
      ],
      ["browser.screenshot", {}]
    ]
    for (const [tool, args] of steps) {
      const answer = yield* sessions.call(undefined, tool, args, { traceId })
      const outcome = answer.ok ? "ok" : `failed (${answer.error?.type}: ${answer.error?.message})`
      yield* Console.log(
        `${tool.padEnd(19)} ${outcome}  [engine: ${answer.state.engine ?? "-"}]${answer.message ? `  ${answer.message}` : ""}`
      )
    }
    const done = yield* sessions.call(undefined, "browser.extract", { instruction: "page text" }, { traceId })
    const text = (done.result as { text?: string } | undefined)?.text ?? ""
    yield* Console.log(`\npage says: ${text.split("\n").find((l) => l.startsWith("Thanks")) ?? "(no confirmation)"}`)
    const log = yield* AttemptLog.AttemptLog
    yield* log.flush
    const dir = log.traceDir(traceId)
    yield* Console.log(
      `logs:        ${join(dir, "attempt.jsonl")}\nsummary:     ${join(dir, "summary.json")}\nscreenshots: ${join(dir, "artifacts")}`
    )
  }).pipe(Effect.scoped, Effect.provide(Service.layer(config)))
