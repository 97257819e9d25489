/**
 * The proxy's HTTP headers: what it passes on (end-to-end headers only), what it reads from the browser's (whether a
 * request loads a document) and the headers of the answers it writes itself.
 */
import type { IncomingMessage } from "node:http"
import type * as Policy from "../Policy.ts"

const hopByHop = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade"
])

/** Raw header pairs without the hop-by-hop ones (and whatever `Connection` names). */
export const endToEnd = (raw: ReadonlyArray<string>) => {
  const named = new Set<string>()
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]?.toLowerCase() === "connection")
      for (const n of (raw[i + 1] ?? "").split(",")) named.add(n.trim().toLowerCase())
  const out: Array<string> = []
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] ?? ""
    if (!hopByHop.has(name.toLowerCase()) && !named.has(name.toLowerCase())) out.push(name, raw[i + 1] ?? "")
  }
  return out
}

const documentDestinations = new Set(["document", "iframe", "frame", "embed", "object", "fencedframe"])

export const kindOf = (req: IncomingMessage): Policy.Target["kind"] => {
  const dest = req.headers["sec-fetch-dest"]
  return typeof dest === "string" && dest !== "" && !documentDestinations.has(dest) ? "subresource" : "document"
}

export const plainAnswer = (reason: string, rule?: string) => {
  const body = rule === undefined ? `${reason}\n` : `Blocked by the egress policy (rule ${rule}): ${reason}\n`
  return {
    body,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "content-length": String(Buffer.byteLength(body)),
      "cache-control": "no-store",
      ...(rule === undefined ? {} : { "x-switchyard-egress-rule": rule })
    }
  }
}

export const headerLines = (headers: Record<string, string>) =>
  Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")
