/**
 * A session's page as it outlives its browser — URL, cookies (HttpOnly too), localStorage and sessionStorage —
 * read over the session's CDP link and put back into a new page before that page's first request: the cookies into
 * the browser, the storage by a script that runs before the page's own, then the navigation. One mechanism for a
 * crashed browser's relaunch, a crashed tab's replacement, a hibernated session's return and a fleet's failover.
 */
import { Effect, Schema } from "effect"
import type * as CdpConnection from "../Cdp/Connection.ts"
import type { Protocol } from "../Cdp/Protocol.ts"
import * as Session from "../Cdp/Session.ts"
import type { CdpClosed } from "../Errors/Engine.ts"

/** One origin's storage entries, in the order the page holds them. */
export interface OriginEntries {
  readonly origin: string
  readonly entries: ReadonlyArray<readonly [string, string]>
}

/**
 * The saved page, as the store keeps it (JSON). Cookies are objects with at least `name`, `value` and `domain`
 * (CDP's and Playwright's shapes both read back); storage is per origin.
 */
export interface SavedPage {
  readonly url: string
  readonly cookies: ReadonlyArray<Record<string, unknown>>
  readonly localStorage: ReadonlyArray<OriginEntries>
  readonly sessionStorage: ReadonlyArray<OriginEntries>
}

/** Why a page was restored, as the answer after it says. */
export type RestoreReason = "crash" | "hibernation" | "failover"

/** What a log or an answer may say about a saved page: counts, never values. */
export const summary = (saved: SavedPage) =>
  `${saved.cookies.length} cookies, ${count(saved.localStorage)} localStorage and ${count(saved.sessionStorage)} sessionStorage entries`

const count = (all: ReadonlyArray<OriginEntries>) => all.reduce((n, o) => n + o.entries.length, 0)

/** A page with nothing but its URL. */
export const atUrl = (url: string): SavedPage => ({ url, cookies: [], localStorage: [], sessionStorage: [] })

/** Whether a URL is worth going back to (a fresh page already shows about:blank). */
export const isRestorable = (url: string | undefined): url is string =>
  url !== undefined && url !== "" && url !== "about:blank"

const storageExpression = `(() => {
  const read = (s) => { try { return Object.entries(s) } catch { return [] } }
  return { url: location.href, origin: location.origin, local: read(localStorage), session: read(sessionStorage) }
})()`

interface Read {
  readonly url: string
  readonly origin: string
  readonly local: ReadonlyArray<[string, string]>
  readonly session: ReadonlyArray<[string, string]>
}

const ofOrigin = (origin: string, entries: ReadonlyArray<readonly [string, string]>): ReadonlyArray<OriginEntries> =>
  entries.length > 0 && origin !== "null" ? [{ origin, entries }] : []

/**
 * Reads the page `sessionId` shows: its URL and its origin's storage from the page (bounded, so a busy page costs at
 * most `timeoutMs`), the browser's cookies from the browser target. `storage: false` keeps to cookies and `url`, and
 * the storage saved before.
 */
export const capture = (
  cdp: CdpConnection.Connection,
  sessionId: string,
  fallback: {
    readonly url: string
    readonly storage: boolean
    readonly timeoutMs?: number
    /** What was saved before: its storage stands when the page cannot be read (crashed, busy, behind a dialog). */
    readonly previous?: SavedPage | undefined
  }
): Effect.Effect<SavedPage, CdpClosed> =>
  Effect.gen(function* () {
    const { cookies } = yield* cdp.send("Storage.getCookies", {})
    const read = fallback.storage
      ? yield* Session.evaluateOn<Read>(cdp, sessionId, storageExpression).pipe(
          Effect.timeoutOption(fallback.timeoutMs ?? 1_000),
          Effect.orElseSucceed(() => undefined),
          Effect.map((o) => (o === undefined || o._tag === "None" ? undefined : o.value))
        )
      : undefined
    return {
      url: read?.url ?? fallback.url,
      cookies: cookies as unknown as ReadonlyArray<Record<string, unknown>>,
      localStorage: read === undefined ? (fallback.previous?.localStorage ?? []) : ofOrigin(read.origin, read.local),
      sessionStorage:
        read === undefined ? (fallback.previous?.sessionStorage ?? []) : ofOrigin(read.origin, read.session)
    }
  })

const SameSite = Schema.Literals(["Strict", "Lax", "None"])
const isSameSite = Schema.is(SameSite)

/** A partitioned cookie's partition (CHIPS: the top-level site it was set under), as CDP reports it. */
export const partitionOf = (key: unknown): Protocol.Network.CookiePartitionKey | undefined => {
  if (typeof key !== "object" || key === null) return undefined
  const { topLevelSite, hasCrossSiteAncestor } = key as Record<string, unknown>
  return typeof topLevelSite === "string" && topLevelSite !== ""
    ? { topLevelSite, hasCrossSiteAncestor: hasCrossSiteAncestor === true }
    : undefined
}

/** A saved cookie as CDP sets it (a partitioned one in its partition); undefined when it lacks what a cookie needs. */
export const cookieParam = (cookie: Record<string, unknown>): Protocol.Network.CookieParam | undefined => {
  const { name, value, domain, path, expires, httpOnly, secure, sameSite, partitionKey } = cookie
  const partition = partitionOf(partitionKey)
  if (typeof name !== "string" || typeof value !== "string" || typeof domain !== "string" || domain === "")
    return undefined
  return {
    name,
    value,
    domain,
    path: typeof path === "string" ? path : "/",
    // -1 (or none) is a session cookie: it has no expiry to set.
    ...(typeof expires === "number" && expires > 0 ? { expires } : {}),
    ...(httpOnly === true ? { httpOnly: true } : {}),
    ...(secure === true ? { secure: true } : {}),
    ...(isSameSite(sameSite) ? { sameSite } : {}),
    ...(partition === undefined ? {} : { partitionKey: partition })
  }
}

/** The script that puts the saved storage in place in the top frame of its origin, before any script of the page. */
const seedScript = (saved: SavedPage) => {
  type Entries = OriginEntries["entries"]
  const byOrigin = new Map<string, { local: Entries; session: Entries }>()
  for (const { origin, entries } of saved.localStorage) byOrigin.set(origin, { local: entries, session: [] })
  for (const { origin, entries } of saved.sessionStorage)
    byOrigin.set(origin, { local: byOrigin.get(origin)?.local ?? [], session: entries })
  if (byOrigin.size === 0) return undefined
  return `(() => {
  if (window !== window.top) return
  const saved = ${JSON.stringify(Object.fromEntries(byOrigin))}[location.origin]
  if (saved === undefined) return
  try { for (const [k, v] of saved.local) localStorage.setItem(k, v) } catch {}
  try { for (const [k, v] of saved.session) sessionStorage.setItem(k, v) } catch {}
})()`
}

/**
 * Puts `saved` into the page `sessionId` shows (a new page at about:blank) and opens its URL: the cookies first
 * (`cookies: false` leaves the browser's own, as after a crashed tab whose browser lives), the storage by a script
 * removed once the page has loaded, so the page's first request carries the cookies and its first script sees the
 * storage. Cookies the browser refuses are left out; the rest go in.
 */
export const restore = (
  cdp: CdpConnection.Connection,
  sessionId: string,
  saved: SavedPage,
  options: { readonly cookies: boolean }
): Effect.Effect<void, CdpClosed> =>
  Effect.gen(function* () {
    const cookies = options.cookies ? saved.cookies.flatMap((c) => cookieParam(c) ?? []) : []
    if (cookies.length > 0) {
      yield* cdp
        .send("Storage.setCookies", { cookies })
        .pipe(
          Effect.catch(() =>
            Effect.forEach(cookies, (cookie) =>
              cdp.send("Storage.setCookies", { cookies: [cookie] }).pipe(Effect.ignore)
            )
          )
        )
    }
    if (!isRestorable(saved.url)) return
    const source = seedScript(saved)
    if (source === undefined) return yield* Session.navigateOn(cdp, sessionId, saved.url)
    yield* cdp.send("Page.enable", {}, sessionId)
    const { identifier } = yield* cdp.send("Page.addScriptToEvaluateOnNewDocument", { source }, sessionId)
    yield* Session.navigateOn(cdp, sessionId, saved.url).pipe(
      Effect.ensuring(
        cdp.send("Page.removeScriptToEvaluateOnNewDocument", { identifier }, sessionId).pipe(Effect.ignore)
      )
    )
  })
