/**
 * What the security suite serves: an allowed app on 127.0.0.1 and a server on 127.0.0.2 on the same port that the
 * service is configured to deny. Every request either gets is recorded; the denied one must get none at all.
 */
import { readdirSync, readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import { join } from "node:path"
import { inflateSync } from "node:zlib"

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

/** Every attempt-log line under a log root (`…/<date>/<traceId>/attempt.jsonl`), parsed. Entries come with their
 * kind so a summary renamed into place between listing and reading cannot fail the walk. */
export const attemptLines = (root: string): Array<Record<string, unknown>> => {
  const lines: Array<Record<string, unknown>> = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name === "attempt.jsonl")
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
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      // A summary is written to a temporary name and renamed into place while the service runs: skip one gone.
      else if (!entry.name.endsWith(".tmp")) files.push({ path, data: readFileSync(path) })
    }
  }
  walk(root)
  return files
}

/** The pixels of an 8-bit RGB or RGBA PNG (what Chromium writes), as one row-major buffer: encodings may differ
 * between two captures of the same pixels, so screenshots are compared this way. */
export const pngPixels = (
  base64: string
): { readonly width: number; readonly height: number; readonly data: Buffer } => {
  const png = Buffer.from(base64, "base64")
  let offset = 8
  let width = 0
  let height = 0
  let channels = 0
  const chunks: Array<Buffer> = []
  while (offset < png.length) {
    const length = png.readUInt32BE(offset)
    const type = png.toString("latin1", offset + 4, offset + 8)
    const body = png.subarray(offset + 8, offset + 8 + length)
    if (type === "IHDR") {
      width = body.readUInt32BE(0)
      height = body.readUInt32BE(4)
      channels = body[9] === 6 ? 4 : 3
      if (body[8] !== 8 || body[12] !== 0 || (body[9] !== 2 && body[9] !== 6)) throw new Error("unsupported PNG")
    } else if (type === "IDAT") chunks.push(body)
    offset += 12 + length
  }
  const raw = inflateSync(Buffer.concat(chunks))
  const stride = width * channels
  const data = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x] ?? 0
      const a = x >= channels ? (data[y * stride + x - channels] ?? 0) : 0
      const b = y > 0 ? (data[(y - 1) * stride + x] ?? 0) : 0
      const c = x >= channels && y > 0 ? (data[(y - 1) * stride + x - channels] ?? 0) : 0
      const p = a + b - c
      const pa = Math.abs(p - a)
      const pb = Math.abs(p - b)
      const pc = Math.abs(p - c)
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
      const predicted = [0, a, b, (a + b) >> 1, paeth][filter ?? 0] ?? 0
      data[y * stride + x] = (value + predicted) & 0xff
    }
  }
  return { width, height, data }
}
