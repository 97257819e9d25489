/**
 * What the security suite serves: an allowed app on 127.0.0.1 and a server on 127.0.0.2 on the same port that the
 * service is configured to deny. Every request either gets is recorded; the denied one must get none at all.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import { join } from "node:path"

export interface Recorder {
  readonly server: Server
  /** `METHOD path` per request, and `connection` per TCP connection (a request refused later still connects). */
  readonly hits: Array<string>
}

type Answer = readonly [number, Record<string, string>, string]

const listen = (host: string, port: number, answer: (req: IncomingMessage, body: string) => Answer) =>
  new Promise<Recorder>((resolve, reject) => {
    const hits: Array<string> = []
    const server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`)
      let received = ""
      req.setEncoding("utf8")
      req.on("data", (chunk: string) => (received += chunk))
      req.on("end", () => {
        const [status, headers, body] = answer(req, received)
        res.writeHead(status, headers).end(body)
      })
    })
    server.on("connection", () => hits.push("connection"))
    server.once("error", reject)
    server.listen(port, host, () => resolve({ server, hits }))
  })

const close = (recorder: Recorder) =>
  new Promise<void>((done) => {
    recorder.server.closeAllConnections()
    recorder.server.close(() => done())
  })

export interface Sites {
  readonly port: number
  readonly allowed: Recorder
  readonly denied: Recorder
  readonly allowedUrl: (path: string) => string
  readonly deniedUrl: (path: string) => string
  readonly close: () => Promise<void>
}

const html = (body: string): Answer => [200, { "content-type": "text/html; charset=utf-8" }, body]

/**
 * The denied server on 127.0.0.2 and the allowed app on 127.0.0.1 at the same port; `pages` maps the app's paths
 * to their HTML given the denied origin (a function gets the request body). `/redirect` always answers a redirect to
 * the denied server.
 */
export const startSites = async (
  pages: (denied: string) => Record<string, string | ((body: string) => string)>
): Promise<Sites> => {
  for (let attempt = 0; ; attempt++) {
    const denied = await listen("127.0.0.2", 0, () => html("<title>denied</title><p>the denied server</p>"))
    const port = (denied.server.address() as { port: number }).port
    const origin = `http://127.0.0.2:${port}`
    const table = pages(origin)
    const allowed = await listen("127.0.0.1", port, (req, body) => {
      const path = (req.url ?? "/").split("?")[0] ?? "/"
      if (path === "/redirect") return [302, { location: `${origin}/redirect-target` }, ""]
      const page = table[path]
      if (page === undefined) return [404, { "content-type": "text/plain" }, "not found"]
      return html(typeof page === "function" ? page(body) : page)
    }).catch(async (error: unknown) => {
      await close(denied)
      if (attempt >= 5) throw error
      return undefined
    })
    if (allowed !== undefined)
      return {
        port,
        allowed,
        denied,
        allowedUrl: (path) => `http://127.0.0.1:${port}${path}`,
        deniedUrl: (path) => `${origin}${path}`,
        close: () => Promise.all([close(denied), close(allowed)]).then(() => undefined)
      }
  }
}

/** Every attempt-log line under a log root (`…/<date>/<traceId>/attempt.jsonl`), parsed. */
export const attemptLines = (root: string): Array<Record<string, unknown>> => {
  const lines: Array<Record<string, unknown>> = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name === "attempt.jsonl")
        for (const line of readFileSync(path, "utf8").split("\n"))
          if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>)
    }
  }
  walk(root)
  return lines
}

/** Every file under `root`, as text, for "appears nowhere" checks. */
export const everyFile = (root: string): Array<{ readonly path: string; readonly data: Buffer }> => {
  const files: Array<{ path: string; data: Buffer }> = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else files.push({ path, data: readFileSync(path) })
    }
  }
  walk(root)
  return files
}
