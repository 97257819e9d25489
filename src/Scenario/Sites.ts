/**
 * The bundled fixture sites (`scenarios/sites/`) served on 127.0.0.1 for a suite run: `site:` URLs on one origin,
 * `site2:` URLs on a second one that is another site altogether (`localhost`, another port), for cross-site frames.
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { dirname, extname, join, normalize, resolve } from "node:path"
import { Effect } from "effect"

/** Where the bundled sites live in the repository: above this module, from source or from the bundled entry. */
export const defaultRoot = (() => {
  let dir = import.meta.dirname
  while (!existsSync(join(dir, "scenarios", "sites")) && dirname(dir) !== dir) dir = dirname(dir)
  return resolve(dir, "scenarios", "sites")
})()

export interface Sites {
  /** `http://127.0.0.1:P`: what `site:` URLs resolve to. */
  readonly origin: string
  /** `http://localhost:Q`: what `site2:` URLs resolve to (a different site, so its frames run out of process). */
  readonly origin2: string
  /** `site:/a.html` → `http://127.0.0.1:P/a.html`, `site2:/b.html` → `http://localhost:Q/b.html`; others unchanged. */
  readonly resolve: (url: string) => string
  /** The reverse: a URL on one of the two origins written back as `site:`/`site2:`. */
  readonly unresolve: (url: string) => string
}

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml"
}

/** Longest a page may be held back by `?delay=`. */
const maxDelayMs = 20_000

const listen = (server: Server) =>
  new Promise<number>((done, fail) => {
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => done((server.address() as AddressInfo).port))
  })

const close = (server: Server) =>
  new Promise<void>((done) => {
    server.closeAllConnections()
    server.close(() => done())
  })

/** Serves `root` on two loopback ports; `{{origin}}` and `{{origin2}}` in HTML become the two origins. */
export const start = (root: string = defaultRoot) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const origins = { origin: "", origin2: "" }
      const pending = new Set<NodeJS.Timeout>()
      const handler = (req: IncomingMessage, res: ServerResponse) => {
        const url = new URL(req.url ?? "/", "http://x")
        const serve = async () => {
          let path: string
          try {
            path = normalize(decodeURIComponent(url.pathname))
          } catch {
            return void res.writeHead(400).end()
          }
          const file = join(root, path.endsWith("/") ? `${path}index.html` : path)
          if (!file.startsWith(root)) return void res.writeHead(403).end()
          try {
            const body = await readFile(file)
            const type = types[extname(file)] ?? "application/octet-stream"
            const out =
              extname(file) === ".html"
                ? body
                    .toString("utf8")
                    .replaceAll("{{origin2}}", origins.origin2)
                    .replaceAll("{{origin}}", origins.origin)
                : body
            res.writeHead(200, { "content-type": type, "cache-control": "no-store" }).end(out)
          } catch {
            res.writeHead(404, { "content-type": "text/plain" }).end("not found")
          }
        }
        // `?delay=ms` holds the response back: a slow server.
        const delay = Math.min(Number(url.searchParams.get("delay") ?? 0) || 0, maxDelayMs)
        if (delay <= 0) return void serve()
        const timer = setTimeout(() => {
          pending.delete(timer)
          void serve()
        }, delay)
        pending.add(timer)
        res.once("close", () => {
          clearTimeout(timer)
          pending.delete(timer)
        })
      }
      const first = createServer(handler)
      const second = createServer(handler)
      origins.origin = `http://127.0.0.1:${await listen(first)}`
      origins.origin2 = `http://localhost:${await listen(second)}`
      return { servers: [first, second], origins, pending }
    }),
    ({ servers, pending }) =>
      Effect.promise(async () => {
        for (const timer of pending) clearTimeout(timer)
        await Promise.all(servers.map(close))
      })
  ).pipe(Effect.map(({ origins }) => make(origins.origin, origins.origin2)))

/** The URL mapping for two given origins (also used to read scenarios without serving anything). */
export const make = (origin: string, origin2: string): Sites => ({
  origin,
  origin2,
  resolve: (url) => resolveWith(url, origin, origin2),
  unresolve: (url) =>
    url.startsWith(`${origin}/`)
      ? `site:${url.slice(origin.length)}`
      : url.startsWith(`${origin2}/`)
        ? `site2:${url.slice(origin2.length)}`
        : url
})

const resolveWith = (url: string, origin: string, origin2: string) => {
  const join = (base: string, rest: string) => `${base}${rest.startsWith("/") ? "" : "/"}${rest}`
  if (url.startsWith("site2:")) return join(origin2, url.slice("site2:".length))
  if (url.startsWith("site:")) return join(origin, url.slice("site:".length))
  return url
}

/** Whether a URL names a bundled site page. */
export const isSiteUrl = (url: string) => url.startsWith("site:") || url.startsWith("site2:")
