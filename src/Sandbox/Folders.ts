/**
 * The session's own folders on disk: where its downloads go (made when a browser starts; when it goes, a folder with
 * files stays for the agent, whose answers name its files by path) and the copies of uploaded files a browser running
 * as another user can read. Owns both paths.
 */
import { chown, mkdir, mkdtemp, readdir, rm, rmdir } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Layer, Ref } from "effect"
import { BrowserUnavailable } from "../Errors/Browser.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as Files from "./Files.ts"
import type { RunningBrowser } from "./Provider/Browser.ts"
import * as Profile from "./Provider/LocalChromium/Profile.ts"
import * as LocalChromium from "./Provider/LocalChromium.ts"

/** This process's pid namespace as a number, where it can be read: download folders are named within it. */
const namespace = /\d+/.exec(Profile.pidNamespace)?.[0]

/**
 * A download folder is named for the browser it serves (`session-<pid namespace>-<pid>-…`): an empty one whose browser
 * is gone was left by a service that was killed before it could remove it, and the next start does (`reapEmpty`).
 */
const folderPrefix = (pid: number | null) =>
  pid === null || namespace === undefined ? "session-" : `session-${namespace}-${pid}-`

/** Where download folders go when the browser's own user cannot reach the configured root. */
export const sharedRoot = join("/tmp", "switchyard-downloads")

/** Removes the empty download folders under `root` whose browser (of this pid namespace) is gone. */
export const reapEmpty = async (root: string): Promise<ReadonlyArray<string>> => {
  const reaped: Array<string> = []
  for (const name of await readdir(root).catch(() => [] as Array<string>)) {
    const owner = /^session-(\d+)-(\d+)-/.exec(name)
    if (owner === null || owner[1] !== namespace || Profile.running(Number(owner[2]))) continue
    // rmdir removes only an empty folder: one with downloads stays for the agent.
    const path = join(root, name)
    const removed = await rmdir(path).then(
      () => true,
      () => false
    )
    if (removed) reaped.push(path)
  }
  return reaped
}

export interface DownloadSettings {
  /** Each session's downloads go to a folder of its own under this one. */
  readonly root: string
  /** A download growing past this many bytes is cancelled. */
  readonly maxBytes: number
}

export class Folders extends Context.Service<
  Folders,
  {
    /**
     * The download folder of the session's browser, made on its start and kept while it runs. A browser running as another
     * user gets the folder as its own, under /tmp when that user cannot get through to the configured root (a private
     * TMPDIR), as its profile does.
     */
    readonly downloads: (
      settings: DownloadSettings,
      running: RunningBrowser
    ) => Effect.Effect<string, BrowserUnavailable>
    /** Paths of `files` the browser can open itself (copies its own user can read, when it runs as another). */
    readonly readable: (
      running: RunningBrowser,
      files: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<string>, SwitchyardError>
    /** The browser is gone: an empty download folder goes (one with files stays for the agent), the copies go. */
    readonly clear: Effect.Effect<void>
  }
>()("switchyard/Sandbox/Folders") {
  static readonly layer = Layer.effect(
    Folders,
    Effect.gen(function* () {
      const made = yield* Ref.make<{ readonly downloads?: string; readonly uploads?: string }>({})

      const downloads = Effect.fn("Folders.downloads")(function* (settings: DownloadSettings, running: RunningBrowser) {
        const kept = (yield* Ref.get(made)).downloads
        if (kept !== undefined) return kept
        const dir = yield* Effect.tryPromise(async () => {
          const user = running.user
          const root =
            user !== undefined && LocalChromium.reachable(join(settings.root, "session")) !== undefined
              ? sharedRoot
              : settings.root
          await mkdir(root, { recursive: true })
          const dir = await mkdtemp(join(root, folderPrefix(running.pid)))
          if (user !== undefined) await chown(dir, user.uid, user.gid)
          return dir
        }).pipe(
          Effect.mapError(
            (cause) =>
              new BrowserUnavailable({ message: `cannot make the download folder under ${settings.root}`, cause })
          )
        )
        yield* Ref.update(made, (m) => ({ ...m, downloads: dir }))
        return dir
      })

      /** The copies of uploaded files the browser's own user reads, made on first need and gone with the browser: in
       * its own temp directory where it has one, so that a crash leaves none behind either. */
      const uploads = (user: { readonly uid: number; readonly gid: number }, running: RunningBrowser) =>
        Effect.gen(function* () {
          const kept = (yield* Ref.get(made)).uploads
          if (kept !== undefined) return kept
          const dir = yield* Effect.tryPromise(async () => {
            const root =
              running.tempDir ?? (LocalChromium.reachable(join(tmpdir(), "uploads")) === undefined ? tmpdir() : "/tmp")
            const dir = await mkdtemp(join(root, "switchyard-uploads-"))
            await chown(dir, user.uid, user.gid)
            return dir
          }).pipe(
            Effect.mapError(
              (cause) => new BrowserUnavailable({ message: "cannot make the session's upload folder", cause })
            )
          )
          yield* Ref.update(made, (m) => ({ ...m, uploads: dir }))
          return dir
        })

      const readable = Effect.fn("Folders.readable")(function* (running: RunningBrowser, files: ReadonlyArray<string>) {
        const user = running.user
        // A browser running as this process's user reads the files where they are.
        if (user === undefined) return files
        return yield* Files.copiesFor(files, user, yield* uploads(user, running))
      })

      const clear = Effect.gen(function* () {
        const { downloads: folder, uploads: copies } = yield* Ref.getAndSet(made, {})
        // A session that downloaded nothing leaves no folder behind; one with files keeps them for the agent.
        if (folder !== undefined) yield* Effect.promise(() => rmdir(folder).catch(() => undefined))
        if (copies !== undefined) yield* Effect.promise(() => rm(copies, { recursive: true, force: true }))
      }).pipe(Effect.withSpan("Folders.clear"))

      return Folders.of({ downloads, readable, clear })
    })
  )
}
