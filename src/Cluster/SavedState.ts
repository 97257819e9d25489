/**
 * A session's page state kept in the store — URL, cookies, localStorage and sessionStorage — saved after each call
 * that may have changed it and restored into a new browser when the one holding the session is gone (the process or
 * the machine died), by the Sessions' own restore. A live page cannot move between processes; this is what moves
 * instead. Values never reach a log: only counts do.
 */

import { Clock, Context, Effect, Layer, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type BrowserContext, chromium } from "playwright-core"
import { StepFailed } from "../Errors/Service.ts"
import type { SavedPage as SavedPageShape } from "../Sandbox/SavedPage.ts"

/** The saved page, restored by the Sessions (`Sandbox/SavedPage.ts`): cookies and storage before the first request. */
export type SavedPage = SavedPageShape

/** What a log may say about a saved page. */
export const summary = (saved: SavedPage) =>
  `${saved.cookies.length} cookies, ${saved.localStorage.reduce((n, o) => n + o.entries.length, 0)} localStorage and ${saved.sessionStorage.reduce((n, o) => n + o.entries.length, 0)} sessionStorage entries (values redacted)`

const failed = (step: string) => (cause: unknown) =>
  new StepFailed({
    step,
    retryable: true,
    message: `${step}: ${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}`
  })

/** Runs `f` on the browser's default context over a connection of its own, closed (never the browser) after. */
const onContext = <A>(wsEndpoint: string, step: string, f: (context: BrowserContext) => Promise<A>) =>
  Effect.tryPromise({
    try: async () => {
      const browser = await chromium.connectOverCDP(wsEndpoint, { timeout: 30_000 })
      try {
        const context = browser.contexts()[0]
        if (context === undefined) throw new Error("the browser has no context")
        return await f(context)
      } finally {
        await browser.close()
      }
    },
    catch: failed(step)
  })

const pageAt = (context: BrowserContext, url: string) =>
  context.pages().find((p) => p.url() === url) ?? context.pages().find((p) => p.url() !== "about:blank")

/** Reads the page's state from the browser the session runs in. */
export const capture = (wsEndpoint: string, url: string): Effect.Effect<SavedPage, StepFailed> =>
  onContext(wsEndpoint, "save page state", async (context) => {
    // Cookies from the context; the page's own origin's storage read in the page (a context attached over CDP does
    // not report localStorage reliably).
    const cookies = await context.cookies()
    const page = pageAt(context, url)
    const storage = page
      ? await page.evaluate(() => ({
          origin: location.origin,
          local: Object.entries(localStorage) as Array<[string, string]>,
          session: Object.entries(sessionStorage) as Array<[string, string]>
        }))
      : undefined
    return {
      url: page?.url() ?? url,
      cookies: cookies as unknown as ReadonlyArray<Record<string, unknown>>,
      localStorage: storage && storage.local.length > 0 ? [{ origin: storage.origin, entries: storage.local }] : [],
      sessionStorage:
        storage && storage.session.length > 0 ? [{ origin: storage.origin, entries: storage.session }] : []
    }
  })

/** Saved pages by session name, in the store. */
export class SavedStates extends Context.Service<
  SavedStates,
  {
    readonly save: (session: string, saved: SavedPage) => Effect.Effect<void>
    readonly load: (session: string) => Effect.Effect<Option.Option<SavedPage>>
    readonly drop: (session: string) => Effect.Effect<void>
  }
>()("switchyard/SavedStates") {
  static readonly layer = Layer.effect(
    SavedStates,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return SavedStates.of({
        save: (session, saved) =>
          Clock.currentTimeMillis.pipe(
            Effect.flatMap(
              (now) => sql`INSERT INTO session_state (session, url, state, updated_at)
              VALUES (${session}, ${saved.url}, ${JSON.stringify(saved)}, ${new Date(now).toISOString()})
              ON CONFLICT (session) DO UPDATE SET url = excluded.url, state = excluded.state,
              updated_at = excluded.updated_at`
            ),
            Effect.asVoid,
            Effect.orDie
          ),
        load: (session) =>
          sql<{ state: string }>`SELECT state FROM session_state WHERE session = ${session}`.pipe(
            Effect.map((rows) =>
              rows[0] === undefined ? Option.none() : Option.some(JSON.parse(rows[0].state) as SavedPage)
            ),
            Effect.orDie
          ),
        drop: (session) => sql`DELETE FROM session_state WHERE session = ${session}`.pipe(Effect.asVoid, Effect.orDie)
      })
    })
  )
}
