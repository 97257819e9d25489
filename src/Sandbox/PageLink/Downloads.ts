/**
 * Downloads into the session's folder: the browser saves each under its guid, and once complete it is renamed to the
 * name the site suggested (made unique); one that grows past the size cap is cancelled with a typed error.
 */
import { existsSync } from "node:fs"
import { rename } from "node:fs/promises"
import { basename, extname, join } from "node:path"
import { Effect, Option, Ref } from "effect"
import type { Connection } from "../../Cdp/Connection.ts"
import type * as Protocol from "../../Cdp/Protocol.ts"
import { DownloadTooLarge } from "../../Errors/Page.ts"
import { type ErrorInfo, toErrorInfo } from "../../Errors.ts"

export interface DownloadOptions {
  /** The session's download folder (it exists). */
  readonly dir: string
  /** A download growing past this many bytes is cancelled. */
  readonly maxBytes: number
}

/** One download as the agent sees it. */
export interface Download {
  readonly name: string
  readonly url: string
  readonly bytes: number
  readonly state: "in_progress" | "completed" | "canceled"
  /** Where the file is, once completed. */
  readonly path?: string
  /** Why it was cancelled, when the service cancelled it. */
  readonly error?: ErrorInfo
}

export interface Downloads {
  /** Every download of the session, oldest first. */
  readonly list: Effect.Effect<ReadonlyArray<Download>>
  /** Downloads that began since `mark` (a count from `count`). */
  readonly since: (mark: number) => Effect.Effect<ReadonlyArray<Download>>
  readonly count: Effect.Effect<number>
  /**
   * Takes in one browser-level event; answers the download it finished (completed or cancelled), if any.
   * `cdp` is the connection the event came on (to cancel an oversized download).
   */
  readonly observe: (cdp: Connection, event: Protocol.Event) => Effect.Effect<Option.Option<Download>>
  /** Has the browser save downloads into the folder and report them on `cdp` (again after a client changed it). */
  readonly claim: (cdp: Connection) => Effect.Effect<void>
}

interface Entry extends Download {
  readonly guid: string
}

/** A file name of the site's suggestion that is not taken yet in `dir`: `cv.pdf`, then `cv (1).pdf`, … */
const uniqueName = (dir: string, suggested: string) => {
  const safe = basename(suggested.replaceAll("\\", "/")).replace(/^\.+/, "") || "download"
  const ext = extname(safe)
  const stem = safe.slice(0, safe.length - ext.length)
  for (let n = 0; ; n++) {
    const name = n === 0 ? safe : `${stem} (${n})${ext}`
    if (!existsSync(join(dir, name))) return name
  }
}

export const make = (options: DownloadOptions): Effect.Effect<Downloads> =>
  Effect.gen(function* () {
    const entries = yield* Ref.make<ReadonlyArray<Entry>>([])
    const update = (guid: string, f: (e: Entry) => Entry) =>
      Ref.modify(entries, (all): [Entry | undefined, ReadonlyArray<Entry>] => {
        const next = all.map((e) => (e.guid === guid ? f(e) : e))
        return [next.find((e) => e.guid === guid), next]
      })
    const shown = ({ guid: _guid, ...download }: Entry): Download => download

    const observe = (cdp: Connection, event: Protocol.Event): Effect.Effect<Option.Option<Download>> =>
      Effect.gen(function* () {
        if (event.method === "Browser.downloadWillBegin") {
          const { guid, url, suggestedFilename } = event.params
          yield* Ref.update(entries, (all) =>
            all.some((e) => e.guid === guid)
              ? all
              : [...all, { guid, name: suggestedFilename || "download", url, bytes: 0, state: "in_progress" as const }]
          )
          return Option.none()
        }
        if (event.method !== "Browser.downloadProgress") return Option.none()
        const { guid, receivedBytes, state } = event.params
        const known = (yield* Ref.get(entries)).find((e) => e.guid === guid)
        if (known === undefined || known.state !== "in_progress") return Option.none()
        if (state === "inProgress" && receivedBytes > options.maxBytes) {
          const error = new DownloadTooLarge({
            maxBytes: options.maxBytes,
            message: `the download ${known.name} passed the ${options.maxBytes}-byte limit and was cancelled (downloads.maxBytes)`
          })
          yield* cdp.send("Browser.cancelDownload", { guid }).pipe(Effect.ignore)
          const done = yield* update(guid, (e) => ({
            ...e,
            bytes: receivedBytes,
            state: "canceled",
            error: toErrorInfo(error)
          }))
          return Option.fromNullishOr(done).pipe(Option.map(shown))
        }
        if (state === "inProgress") {
          yield* update(guid, (e) => ({ ...e, bytes: receivedBytes }))
          return Option.none()
        }
        if (state === "canceled") {
          const done = yield* update(guid, (e) => ({ ...e, bytes: receivedBytes, state: "canceled" }))
          return Option.fromNullishOr(done).pipe(Option.map(shown))
        }
        const name = uniqueName(options.dir, known.name)
        const path = join(options.dir, name)
        const moved = yield* Effect.tryPromise(() => rename(join(options.dir, guid), path)).pipe(
          Effect.as(true),
          Effect.orElseSucceed(() => false)
        )
        const done = yield* update(guid, (e) => ({
          ...e,
          name: moved ? name : e.name,
          bytes: receivedBytes,
          state: "completed",
          path: moved ? path : join(options.dir, guid)
        }))
        return Option.fromNullishOr(done).pipe(Option.map(shown))
      })

    return {
      list: Ref.get(entries).pipe(Effect.map((all) => all.map(shown))),
      count: Ref.get(entries).pipe(Effect.map((all) => all.length)),
      since: (mark) => Ref.get(entries).pipe(Effect.map((all) => all.slice(mark).map(shown))),
      observe,
      claim: (cdp) =>
        cdp
          .send("Browser.setDownloadBehavior", {
            behavior: "allowAndName",
            downloadPath: options.dir,
            eventsEnabled: true
          })
          .pipe(Effect.ignore)
    } satisfies Downloads
  })
