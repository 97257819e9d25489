/**
 * A destination the egress proxy let through but could not reach, as it is recorded (the network's code and cause)
 * and as the browser is answered: a page marked as the proxy's own, so no call takes it for the site's.
 */

/** A request the proxy let through but could not fetch: the site was not reached, for the cause given. */
export interface Unreached {
  /** The URL with query values, fragment and credentials redacted (a tunnel: `https://host:port`). */
  readonly url: string
  readonly host: string
  readonly port: number
  /** The network's own word for it and where: `ECONNREFUSED 127.0.0.1:4100`, `ENOTFOUND jobs.example`. */
  readonly cause: string
  /** `ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT`, `ECONNRESET`, … */
  readonly code: string
  readonly via: "http" | "connect"
  /** As for a block: `document` is a top-level page; absent for a tunnel (and for plain HTTP to an origin the browser
   * sends no fetch metadata to). */
  readonly dest?: string
  readonly at: number
}

/** The header that marks an answer as the proxy's own, never the site's: its value is the failure's code. */
export const unreachedHeader = "x-switchyard-egress-unreached"

/** The network's code and a short cause for a failed connection or lookup: `ECONNREFUSED 127.0.0.1:4100`. */
export const causeOf = (error: unknown, where: string): { readonly code: string; readonly cause: string } => {
  const code = (error as { code?: unknown }).code
  if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) {
    const address = (error as { address?: unknown; port?: unknown }).address
    const port = (error as { port?: unknown }).port
    const at = typeof address === "string" ? `${address}${typeof port === "number" ? `:${port}` : ""}` : where
    return { code, cause: `${code} ${at}` }
  }
  const message = error instanceof Error ? error.message : String(error)
  const named = /\b(E[A-Z_]{3,})\b/.exec(message)?.[1]
  return named === undefined
    ? { code: "EUNREACHED", cause: `${message} (${where})` }
    : { code: named, cause: `${named} ${where}` }
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c)

/** The proxy's own page for a destination it could not reach: titled and marked so nobody takes it for the site. */
export const unreachedAnswer = (url: string, cause: string, code: string) => {
  const text = `switchyard egress proxy: ${url} was not reached: ${cause}`
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>Not reached: ${escapeHtml(cause)}</title></head><body><h1>Not reached</h1><p>${escapeHtml(text)}</p><p>This page is the egress proxy's, not the site's.</p></body></html>\n`
  return {
    body,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-length": String(Buffer.byteLength(body)),
      "cache-control": "no-store",
      [unreachedHeader]: code
    }
  }
}
