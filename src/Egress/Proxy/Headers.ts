/**
 * The proxy's HTTP headers: what it passes on (end-to-end headers only), what it reads from the browser's (whether a
 * request loads a document) and the headers of the answers it writes itself.
 */
import type { IncomingMessage } from "node:http"
import type * as Policy from "../Policy.ts"

// Not an ES import of node:http: see Proxy.ts.
const { validateHeaderName, validateHeaderValue } = process.getBuiltinModule("node:http")

/** Whether Node can write this header: a site's header with a control character cannot be passed on. */
const writable = (name: string, value: string) => {
  try {
    validateHeaderName(name)
    validateHeaderValue(name, value)
    return true
  } catch {
    return false
  }
}

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

/**
 * An answer's headers for the browser: end-to-end ones, and the body's length as the proxy sends it. A site that
 * sent its body chunked and a Content-Length too is framed by the chunks (RFC 9112 §6.3), as a browser reads it; the
 * proxy sends that body whole, so the length it names is dropped. A length said twice alike is said once. A header
 * the browser would have read but Node cannot write (a control character in its value) is left out.
 */
export const answerHeaders = (answer: IncomingMessage) => {
  const out: Array<string> = []
  const chunked = answer.headers["transfer-encoding"] !== undefined
  let length = false
  const pairs = endToEnd(answer.rawHeaders)
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i] ?? ""
    if (name.toLowerCase() === "content-length") {
      if (chunked || length) continue
      length = true
    }
    const value = pairs[i + 1] ?? ""
    if (writable(name, value)) out.push(name, value)
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
