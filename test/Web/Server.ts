/** Serves every pattern's pages on 127.0.0.1 under `/<pattern>/…`, and keeps what pages post to `/<pattern>/record`. */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer } from "effect"
import type { WebPattern } from "./Pattern.ts"

export interface PatternServer {
  readonly origin: string
  readonly url: (pattern: string, path: string) => string
  readonly recorded: (pattern: string) => ReadonlyArray<Record<string, unknown>>
  readonly close: () => Promise<void>
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = ""
    req.on("data", (chunk) => {
      body += String(chunk)
    })
    req.on("end", () => resolve(body))
  })

/** A form post's fields; a name sent several times (a multi-select, checkboxes of one name) keeps every value. */
const formFields = (body: string) => {
  const fields: Record<string, string | Array<string>> = {}
  for (const [name, value] of new URLSearchParams(body)) {
    const had = fields[name]
    fields[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value]
  }
  return fields
}

export const start = (patterns: ReadonlyArray<WebPattern>, host = "127.0.0.1") =>
  new Promise<PatternServer>((resolve) => {
    const byName = new Map(patterns.map((p) => [p.name, p]))
    const records = new Map<string, Array<Record<string, unknown>>>()
    const server = createServer(async (req, res) => {
      const url = new URL(req.url ?? "/", "http://x")
      const [, name, ...rest] = url.pathname.split("/")
      const p = byName.get(name ?? "")
      const body = await readBody(req)
      if (p === undefined) return void res.writeHead(404, { "content-type": "text/plain" }).end("no such pattern")
      const path = `/${rest.join("/")}`
      if (path === "/record" && req.method === "POST") {
        let data: Record<string, unknown>
        let form = false
        try {
          data = JSON.parse(body) as Record<string, unknown>
        } catch {
          data = formFields(body)
          form = true
        }
        records.set(p.name, [...(records.get(p.name) ?? []), data])
        // A form sent by the browser lands on a page, as on a real site; a script's report gets no content.
        if (form) {
          return void res
            .writeHead(200, { "content-type": "text/html; charset=utf-8" })
            .end("<!doctype html><title>Received</title><h1>Thank you, we received it.</h1>")
        }
        return void res.writeHead(204).end()
      }
      const page = p.pages[path]
      if (page === undefined) return void res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not found</h1>")
      if (typeof page === "string")
        return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page)
      try {
        await page(req, res, body)
      } catch (error) {
        if (!res.headersSent) res.writeHead(500).end(String(error))
      }
    })
    server.listen(0, host, () => {
      const origin = `http://${host}:${(server.address() as AddressInfo).port}`
      resolve({
        origin,
        url: (pattern, path) => `${origin}/${pattern}${path.startsWith("/") ? "" : "/"}${path}`,
        recorded: (pattern) => records.get(pattern) ?? [],
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** A test's pattern server as a service: started with its layer, closed with it. */
export class Pages extends Context.Service<Pages, PatternServer>()("test/Web/Pages") {
  static readonly layer = (patterns: ReadonlyArray<WebPattern>) =>
    Layer.effect(
      Pages,
      Effect.acquireRelease(
        Effect.promise(() => start(patterns)),
        (s) => Effect.promise(s.close)
      )
    )
}
