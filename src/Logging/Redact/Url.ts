/**
 * URL redaction: every query and fragment parameter value (unless kept by name) and the userinfo become markers;
 * scheme, host and path stay readable. Works on absolute and relative URLs and on URLs embedded in text.
 */
import type { Marking, Replacer } from "./Marking.ts"

/**
 * An XPath (`//*[@id='x']`, `(//button)[2]`, `//label/following-sibling::input`) starts like a path or a
 * protocol-relative URL but is none: what precedes its first `?` or `#` has a predicate (`[@`, `[2]`, `[text()`), an
 * axis, a wildcard step or a parenthesised path. A URL's query (`?tags[]=a`) comes before any bracket of it.
 */
export const isXPath = (s: string) => {
  if (!/^\(*\//.test(s)) return false
  const head = s.split(/[?#]/, 1)[0]!
  return /^\(+\/|\[\s*(?:@|\d+\s*\]|[a-z-]+\s*\()|::|\/\*/i.test(head)
}

export interface UrlRedaction {
  /** One URL's parameters and userinfo (the patterns are applied by the caller). */
  readonly structure: (u: string) => string
  /** For a URL found in text: trailing punctuation is not part of it. */
  readonly embedded: Replacer
}

/** `keep` holds lower-case parameter names whose values pass. */
export const make = ({ mark, isMarker }: Marking, keep: ReadonlySet<string>): UrlRedaction => {
  const params = (query: string) =>
    query
      .split("&")
      .map((part) => {
        const eq = part.indexOf("=")
        if (eq < 0) return part
        const name = part.slice(0, eq)
        const value = part.slice(eq + 1)
        if (value === "" || isMarker(value)) return part
        let decoded = name
        try {
          decoded = decodeURIComponent(name.replace(/\+/g, " "))
        } catch {}
        return keep.has(decoded.toLowerCase()) ? part : `${name}=${mark("query")}`
      })
      .join("&")

  const urlStructure = (u: string) => {
    if (isXPath(u)) return u
    const hash = u.indexOf("#")
    const beforeHash = hash < 0 ? u : u.slice(0, hash)
    const q = beforeHash.indexOf("?")
    let base = q < 0 ? beforeHash : beforeHash.slice(0, q)
    const authority = /^((?:[a-z][a-z0-9+.-]*:)?\/\/)([^/?#]*)/i.exec(base)
    if (authority !== null) {
      const at = authority[2]!.lastIndexOf("@")
      const userinfo = at < 0 ? "" : authority[2]!.slice(0, at)
      if (userinfo !== "" && !isMarker(userinfo)) {
        base = authority[1] + mark("userinfo") + base.slice(authority[1]!.length + at)
      }
    }
    let out = base
    if (q >= 0) out += "?" + params(beforeHash.slice(q + 1))
    if (hash >= 0) {
      const fragment = u.slice(hash + 1)
      const fq = fragment.indexOf("?")
      out +=
        "#" +
        (!fragment.includes("=")
          ? fragment
          : fq >= 0
            ? fragment.slice(0, fq + 1) + params(fragment.slice(fq + 1))
            : params(fragment))
    }
    return out
  }

  const embeddedUrl: Replacer = (match) => {
    const trimmed = match.replace(/[.,;:!?)]+$/, "")
    return urlStructure(trimmed) + match.slice(trimmed.length)
  }

  return { structure: urlStructure, embedded: embeddedUrl }
}
