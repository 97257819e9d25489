/**
 * Checks a scenario's expected outcome on the live browser over raw CDP, without any engine: the page's URL, texts
 * shown (open shadow roots and every frame, cross-site ones included), field values and what an extract returned.
 * Raw CDP and a bound on every read, because a page that hangs its renderer must not hang the check.
 */
import { Effect, Option } from "effect"
import * as CdpConnection from "../Cdp/Connection.ts"
import * as CdpHttp from "../Cdp/Http.ts"
import type { Sites } from "./Sites.ts"
import type { Expect } from "./Suite.ts"

/** `[a, b]` ⊆ `[a, b]`, `{a: 1}` ⊆ `{a: 1, b: 2}`: the expected part of a value is there and equal. */
export const isSubset = (expected: unknown, actual: unknown): boolean => {
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) && expected.length === actual.length && expected.every((e, i) => isSubset(e, actual[i]))
    )
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null) return false
    return Object.entries(expected).every(([k, v]) => isSubset(v, (actual as Record<string, unknown>)[k]))
  }
  return expected === actual
}

interface Seen {
  readonly url: string
  readonly text: string
  readonly values: Record<string, { readonly value: string; readonly checked: boolean | null } | null>
}

/**
 * Runs in a frame: its URL, the text it shows (documents, same-origin child frames and open shadow roots) and the
 * fields the selectors name. In a selector, ` >> ` steps into the matched element's shadow root or frame document.
 */
const readExpression = (selectors: ReadonlyArray<string>) => `(() => {
  const docs = [document]
  for (let i = 0; i < docs.length; i++) {
    for (const f of docs[i].querySelectorAll("iframe, frame")) {
      try { if (f.contentDocument) docs.push(f.contentDocument) } catch (e) {}
    }
  }
  const roots = []
  for (const d of docs) {
    const rs = [d]
    for (let i = 0; i < rs.length; i++) for (const el of rs[i].querySelectorAll("*")) if (el.shadowRoot) rs.push(el.shadowRoot)
    roots.push(...rs)
  }
  const textOf = (root) => {
    if (root.body !== undefined) return root.body ? root.body.innerText : ""
    return Array.from(root.children).filter((c) => !["STYLE", "SCRIPT"].includes(c.tagName)).map((c) => c.innerText || c.textContent || "").join("\\n")
  }
  const inside = (el) => el.shadowRoot || el.contentDocument || null
  const find = (selector) => {
    const parts = selector.split(/\\s+>>\\s+/)
    let scopes = roots
    let found = null
    for (const [i, part] of parts.entries()) {
      found = null
      for (const scope of scopes) { try { found = scope.querySelector(part) } catch (e) { return null } if (found) break }
      if (!found) return null
      if (i < parts.length - 1) { const next = inside(found); if (!next) return null; scopes = [next] }
    }
    return found
  }
  const values = {}
  for (const selector of ${JSON.stringify(selectors)}) {
    const el = find(selector)
    values[selector] = el ? { value: "value" in el ? String(el.value) : (el.textContent || "").trim(), checked: "checked" in el && (el.type === "checkbox" || el.type === "radio") ? el.checked : null } : null
  }
  return { url: location.href, text: roots.map(textOf).join("\\n"), values }
})()`

const squash = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase()

/** Reads one target (a page or an out-of-process frame), or nothing when it does not answer within `ms`. */
const readTarget = (cdp: CdpConnection.Connection, targetId: string, selectors: ReadonlyArray<string>, ms: number) =>
  Effect.gen(function* () {
    const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId, flatten: true })
    const result = yield* cdp.send(
      "Runtime.evaluate",
      { expression: readExpression(selectors), returnByValue: true },
      sessionId
    )
    return result.result.value
  }).pipe(
    Effect.timeoutOption(ms),
    Effect.map(Option.flatMap(Option.fromNullishOr)),
    Effect.orElseSucceed(() => Option.none<Seen>())
  )

/** What does not hold of `expect` on the session's page ([] when all of it holds). */
export const check = (options: {
  readonly wsEndpoint: string
  readonly expect: Expect
  /** The page the last answer was on, to tell the session's page from others. */
  readonly lastUrl: string | null
  /** What the last `browser.extract` returned. */
  readonly extracted: unknown
  readonly sites: Sites
  /** Bound on reading each target; default 4 s. */
  readonly readTimeoutMs?: number
}): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function* () {
    const { expect, sites } = options
    const problems: Array<string> = []
    if (expect.extracted !== undefined && !isSubset(expect.extracted, options.extracted)) {
      problems.push(
        `extracted ${JSON.stringify(options.extracted ?? null).slice(0, 300)} does not contain ${JSON.stringify(expect.extracted)}`
      )
    }
    const selectors = Object.keys(expect.values ?? {})
    const needsPage =
      expect.url !== undefined ||
      expect.urlIncludes !== undefined ||
      (expect.text?.length ?? 0) > 0 ||
      (expect.textAbsent?.length ?? 0) > 0 ||
      selectors.length > 0
    if (!needsPage) return problems
    const http = yield* CdpHttp.httpOrigin(options.wsEndpoint).pipe(Effect.option)
    const targets = Option.isNone(http)
      ? []
      : yield* CdpHttp.listTargets(http.value).pipe(Effect.orElseSucceed(() => [] as ReadonlyArray<CdpHttp.TargetInfo>))
    // The page the last answer was on first; then the others (after a renderer crash the session may have moved on
    // to another tab while its old one stays behind, dead).
    const pages = targets
      .filter((t) => t.type === "page")
      .sort((a, b) => Number(b.url === options.lastUrl) - Number(a.url === options.lastUrl))
    if (pages.length === 0) return [...problems, "the browser has no page to check"]
    const ms = options.readTimeoutMs ?? 4_000
    const seen = yield* Effect.scoped(
      Effect.gen(function* () {
        const cdp = yield* CdpConnection.connect(options.wsEndpoint)
        let main = Option.none<Seen>()
        for (const page of pages) {
          main = yield* readTarget(cdp, page.id, selectors, ms)
          if (Option.isSome(main)) break
        }
        // Out-of-process frames (other sites) are targets of their own.
        const frames: Array<Seen> = []
        for (const t of targets.filter((t) => t.type === "iframe")) {
          const frame = yield* readTarget(cdp, t.id, selectors, ms)
          if (Option.isSome(frame)) frames.push(frame.value)
        }
        return { main, frames }
      })
    ).pipe(Effect.orElseSucceed(() => ({ main: Option.none<Seen>(), frames: [] as Array<Seen> })))
    if (Option.isNone(seen.main)) {
      return [
        ...problems,
        `no page answered within ${ms} ms (${pages.map((p) => p.url).join(", ")}), so nothing could be checked`
      ]
    }
    const all = [seen.main.value, ...seen.frames]
    const url = seen.main.value.url
    const text = squash(all.map((s) => s.text).join("\n"))
    if (expect.url !== undefined && url !== sites.resolve(expect.url)) {
      problems.push(`the page is ${url}, not ${sites.resolve(expect.url)}`)
    }
    if (expect.urlIncludes !== undefined && !url.includes(sites.resolve(expect.urlIncludes))) {
      problems.push(`the page ${url} does not include "${expect.urlIncludes}"`)
    }
    for (const wanted of expect.text ?? []) {
      if (!text.includes(squash(wanted))) problems.push(`"${wanted}" is not shown on ${url}`)
    }
    for (const unwanted of expect.textAbsent ?? []) {
      if (text.includes(squash(unwanted))) problems.push(`"${unwanted}" is shown on ${url}, and should not be`)
    }
    for (const [selector, want] of Object.entries(expect.values ?? {})) {
      const field = all.map((s) => s.values[selector]).find((v) => v !== null && v !== undefined)
      if (field === undefined) {
        problems.push(`no element matches ${selector}`)
        continue
      }
      const got = typeof want === "boolean" ? field!.checked : field!.value
      if (got !== want) problems.push(`${selector} is ${JSON.stringify(got)}, not ${JSON.stringify(want)}`)
    }
    return problems
  })
