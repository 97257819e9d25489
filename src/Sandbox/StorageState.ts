/**
 * A browser's logged-in state read from and put into the session's browser over the Sandbox's own connection: every
 * cookie (HttpOnly ones too) from the browser, each open tab's localStorage and sessionStorage by origin; put back
 * by setting the cookies and, per origin, loading a blank page of that origin in the active tab (answered by the
 * browser itself, never sent) to fill its storage, then returning the tab to where it was.
 */
import { Effect, PubSub } from "effect"
import { evaluateOn, navigateOn } from "../Cdp/Session.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { Cookie, OriginStorage, StorageState } from "../Store/StorageStates.ts"
import type { OnPage } from "./Sandbox.ts"
import { partitionOf } from "./SavedPage.ts"

/** Storage of more origins than this is not put back (each takes a load of the active tab). */
const maxOrigins = 20
const seedPath = "/__switchyard-storage__"

/** The cookies of the browser, as it reports them. */
export const cookies = (page: OnPage) =>
  page
    .browser((cdp) => cdp.send("Storage.getCookies", {}))
    .pipe(Effect.map(({ cookies }) => cookies as unknown as ReadonlyArray<Cookie>))

/** Sets cookies (name, value, and a url or a domain); expired ones delete. */
export const setCookies = (page: OnPage, list: ReadonlyArray<Partial<Cookie> & { readonly url?: string }>) =>
  page.browser((cdp) =>
    cdp.send("Storage.setCookies", {
      cookies: list.map((c) => ({
        name: c.name ?? "",
        value: c.value ?? "",
        ...(c.url === undefined ? {} : { url: c.url }),
        ...(c.domain === undefined ? {} : { domain: c.domain }),
        path: c.path ?? "/",
        ...(c.secure === undefined ? {} : { secure: c.secure }),
        ...(c.httpOnly === undefined ? {} : { httpOnly: c.httpOnly }),
        ...(c.sameSite === undefined ? {} : { sameSite: c.sameSite as "Strict" | "Lax" | "None" }),
        ...(partitionOf(c.partitionKey) === undefined ? {} : { partitionKey: partitionOf(c.partitionKey)! }),
        ...(c.session === true || c.expires === undefined || c.expires <= 0 ? {} : { expires: c.expires })
      }))
    })
  )

export const clearCookies = (page: OnPage) => page.browser((cdp) => cdp.send("Storage.clearCookies", {}))

interface TabStorage {
  readonly origin: string
  readonly url: string
  readonly local: ReadonlyArray<readonly [string, string]>
  readonly session: ReadonlyArray<readonly [string, string]>
}

const readTab = (page: OnPage, targetId: string) =>
  page
    .runOn(targetId)((cdp, sessionId) =>
      evaluateOn<TabStorage>(
        cdp,
        sessionId,
        "({ origin: location.origin, url: location.href, local: Object.entries(localStorage), session: Object.entries(sessionStorage) })"
      )
    )
    .pipe(
      Effect.timeoutOption(2_000),
      Effect.map((read) => (read._tag === "Some" ? [read.value] : [])),
      Effect.orElseSucceed((): ReadonlyArray<TabStorage> => [])
    )

/** Everything a later session needs to start logged in: the cookies, and the storage of every open tab's origin. */
export const capture = (page: OnPage): Effect.Effect<StorageState, SwitchyardError> =>
  Effect.gen(function* () {
    const all = yield* cookies(page)
    const active = yield* readTab(page, page.targetId)
    const others = yield* Effect.forEach(
      page.tabs.filter((t) => t !== page.targetId),
      (t) => readTab(page, t)
    )
    const byOrigin = new Map<string, OriginStorage>()
    for (const tab of [...active, ...others.flat()]) {
      if (!/^https?:/.test(tab.origin) || byOrigin.has(tab.origin)) continue
      if (tab.local.length === 0 && tab.session.length === 0) continue
      byOrigin.set(tab.origin, { origin: tab.origin, localStorage: tab.local, sessionStorage: tab.session })
    }
    const url = active[0]?.url
    return {
      cookies: all,
      origins: [...byOrigin.values()],
      ...(url !== undefined && /^https?:/.test(url) ? { url } : {})
    }
  })

/** Loads a blank page of `origin` in the tab (answered by the browser from here), and fills its storage there. */
const seed = (page: OnPage, storage: OriginStorage) =>
  page.run((cdp, sessionId) =>
    Effect.scoped(
      Effect.gen(function* () {
        const events = yield* cdp.events
        yield* cdp.send(
          "Fetch.enable",
          { patterns: [{ urlPattern: `${storage.origin}${seedPath}*`, requestStage: "Request" }] },
          sessionId
        )
        yield* Effect.addFinalizer(() => cdp.send("Fetch.disable", {}, sessionId).pipe(Effect.ignore))
        const answer = PubSub.take(events).pipe(
          Effect.repeat({
            until: (event) => event.method === "Fetch.requestPaused" && event.sessionId === sessionId
          }),
          Effect.flatMap((event) =>
            event.method === "Fetch.requestPaused"
              ? cdp.send(
                  "Fetch.fulfillRequest",
                  {
                    requestId: event.params.requestId,
                    responseCode: 200,
                    responseHeaders: [{ name: "content-type", value: "text/html; charset=utf-8" }],
                    body: Buffer.from("<!doctype html><title></title>").toString("base64")
                  },
                  sessionId
                )
              : Effect.void
          )
        )
        yield* Effect.all([answer, navigateOn(cdp, sessionId, `${storage.origin}${seedPath}`)], {
          concurrency: 2,
          discard: true
        })
        const fill = `(() => { for (const [k, v] of ${JSON.stringify(storage.localStorage)}) localStorage.setItem(k, v); for (const [k, v] of ${JSON.stringify(storage.sessionStorage)}) sessionStorage.setItem(k, v); return true })()`
        yield* evaluateOn(cdp, sessionId, fill)
      })
    )
  )

/**
 * Puts a saved state into the session's browser: its cookies, then each origin's storage (in the active tab, which
 * returns to the page it was on, reloaded with them; a blank tab stays blank).
 */
export const apply = (
  page: OnPage,
  state: StorageState
): Effect.Effect<{ readonly cookies: number; readonly origins: number }, SwitchyardError> =>
  Effect.gen(function* () {
    if (state.cookies.length > 0) yield* setCookies(page, state.cookies)
    const origins = state.origins
      .filter((o) => o.localStorage.length + o.sessionStorage.length > 0)
      .slice(0, maxOrigins)
    if (origins.length === 0) return { cookies: state.cookies.length, origins: 0 }
    const before = yield* page
      .run((cdp, sessionId) => evaluateOn<string>(cdp, sessionId, "location.href"))
      .pipe(Effect.timeoutOption(2_000))
    let filled = 0
    for (const origin of origins) {
      const done = yield* seed(page, origin).pipe(Effect.timeout(10_000), Effect.result)
      if (done._tag === "Success") filled++
    }
    const back = before._tag === "Some" && /^https?:/.test(before.value) ? before.value : "about:blank"
    yield* page.run((cdp, sessionId) => navigateOn(cdp, sessionId, back)).pipe(Effect.timeout(30_000), Effect.ignore)
    return { cookies: state.cookies.length, origins: filled }
  })
