/**
 * The composed application against a real page: a local HTTP server on 127.0.0.1 and a headless Chromium started
 * and stopped by Switchyard's layers.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { JobPage, layer } from "../src/JobPage.ts"

const page = `<!doctype html><title>Apply</title><form>
  <label for="name">Full name</label><input id="name">
  <label for="mail">Email</label><input id="mail" type="email">
</form>`

const serve = Effect.acquireRelease(
  Effect.callback<ReturnType<typeof createServer>>((resume) => {
    const server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(page))
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
)

it.live(
  "reads the page's title and its form's fields through Switchyard",
  () =>
    Effect.gen(function* () {
      const server = yield* serve
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
      const form = yield* Effect.gen(function* () {
        const jobs = yield* JobPage
        return yield* jobs.read(url)
      }).pipe(Effect.provide(layer(process.env.CHROME_PATH ? { executablePath: process.env.CHROME_PATH } : {})))
      assert.deepStrictEqual(form, { title: "Apply", fields: ["Full name", "Email"] })
    }),
  60_000
)
