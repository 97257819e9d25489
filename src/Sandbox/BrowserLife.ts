/**
 * The session browser's life: started on first use, checked before each call, relaunched once with its URL restored;
 * a closed page gives way to the previous tab, and the last one (or a crashed or hung one) is replaced at the last URL.
 */
import { chown, mkdir, mkdtemp, rm, rmdir } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Fiber, Option, Ref, Scope } from "effect"
import * as CdpHttp from "../Cdp/Http.ts"
import { Egress } from "../Egress/Egress.ts"
import { BrowserUnavailable } from "../Errors/Browser.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { EngineSwitch } from "./EngineSwitch.ts"
import * as Files from "./Files.ts"
import type * as Limits from "./Limits.ts"
import { restored } from "./PageEvent.ts"
import type { DialogPolicy } from "./PageLink/Dialogs.ts"
import { described, type Fate } from "./PageLink/Targets.ts"
import * as PageLink from "./PageLink.ts"
import { BrowserProvider, type RunningBrowser } from "./Provider/Browser.ts"
import * as LocalChromium from "./Provider/LocalChromium.ts"
import * as SavedPage from "./SavedPage.ts"
import { type LiveBrowser, pageOf, type SessionState } from "./SessionState.ts"
import type { Tabs } from "./Tabs.ts"

export interface DownloadSettings {
  /** Each session's downloads go to a folder of its own under this one. */
  readonly root: string
  /** A download growing past this many bytes is cancelled. */
  readonly maxBytes: number
}

export interface BrowserLife {
  /** The session's browser, healthy and on a live page: started, kept, or relaunched once; else an error. */
  readonly ensure: Effect.Effect<LiveBrowser, SwitchyardError>
  /**
   * As `ensure`, except that a relaunched browser's page may still be on its way back to the last URL: the second
   * effect waits for it, so an engine can connect meanwhile. Within the caller's scope.
   */
  readonly ensureRestoring: Effect.Effect<readonly [LiveBrowser, Effect.Effect<void>], SwitchyardError, Scope.Scope>
  /** Disconnects the engine and stops the browser; the next `ensure` starts a new one. */
  readonly stop: Effect.Effect<void>
  /** Puts a saved page (URL, cookies, storage) into the live page, the next answer saying why. */
  readonly restore: (
    live: LiveBrowser,
    page: SavedPage.SavedPage,
    reason: SavedPage.RestoreReason
  ) => Effect.Effect<void>
  /** Paths of `files` the live browser can open itself (copies its own user can read, when it runs as another). */
  readonly readable: (
    live: LiveBrowser,
    files: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<string>, SwitchyardError>
}

export const make = Effect.fnUntraced(function* (options: {
  readonly state: Ref.Ref<SessionState>
  readonly engines: EngineSwitch
  /** Watched on every connection of the browser's page link. */
  readonly limits: Limits.Limits
  /** Relaunch a crashed browser once (providers that started it only) before reporting an error. */
  readonly relaunch: boolean
  /** After a failed call, a page that cannot evaluate `1` within this long is replaced (its main thread hangs). */
  readonly hungAfterMs: number
  readonly tabs: Tabs
  /** Who answers the pages' dialogs while automation has the browser. */
  readonly dialogs: DialogPolicy
  /** Where downloads go; absent, the browser's own behaviour stays. */
  readonly downloads: DownloadSettings | undefined
}) {
  const { state, engines, relaunch, hungAfterMs, tabs } = options
  const provider = yield* BrowserProvider
  const egress = yield* Effect.serviceOption(Egress)

  /**
   * The session's download folder, made on the first start and kept across relaunches. A browser running as another
   * user gets the folder as its own, under /tmp when that user cannot get through to the configured root (a private
   * TMPDIR), as its profile does.
   */
  let downloadDir: string | undefined
  const downloadFolder = (settings: DownloadSettings, running: RunningBrowser) =>
    Effect.tryPromise(async () => {
      if (downloadDir !== undefined) return downloadDir
      const user = running.user
      const root =
        user !== undefined && LocalChromium.reachable(join(settings.root, "session")) !== undefined
          ? join("/tmp", "switchyard-downloads")
          : settings.root
      await mkdir(root, { recursive: true })
      const dir = await mkdtemp(join(root, "session-"))
      if (user !== undefined) await chown(dir, user.uid, user.gid)
      downloadDir = dir
      return dir
    }).pipe(
      Effect.mapError(
        (cause) => new BrowserUnavailable({ message: `cannot make the download folder under ${settings.root}`, cause })
      )
    )

  /** The copies of uploaded files the browser's own user reads, made on first need and gone with the browser. */
  let uploadDir: string | undefined
  const uploadFolder = (user: { readonly uid: number; readonly gid: number }) =>
    Effect.tryPromise(async () => {
      if (uploadDir !== undefined) return uploadDir
      const root = LocalChromium.reachable(join(tmpdir(), "uploads")) === undefined ? tmpdir() : "/tmp"
      const dir = await mkdtemp(join(root, "switchyard-uploads-"))
      await chown(dir, user.uid, user.gid)
      uploadDir = dir
      return dir
    }).pipe(
      Effect.mapError((cause) => new BrowserUnavailable({ message: "cannot make the session's upload folder", cause }))
    )

  const readable = (live: LiveBrowser, files: ReadonlyArray<string>) => {
    const user = live.running.user
    // A browser running as this process's user reads the files where they are.
    return user === undefined
      ? Effect.succeed(files)
      : Effect.flatMap(uploadFolder(user), (root) => Files.copiesFor(files, user, root))
  }

  // What a dead browser leaves (its process group, its temp profile) is cleaned up beside the relaunch, within the
  // session's life: the session's scope waits for it.
  const sessionScope = yield* Effect.scope

  /** `behind`: the browser is already dead, and what it left is cleaned up without waiting for it. */
  const stopping = (behind: boolean) =>
    Effect.gen(function* () {
      yield* engines.disconnect("released")
      const current = yield* Ref.modify(state, (s): [LiveBrowser | undefined, SessionState] => [
        s.browser,
        { ...s, browser: undefined }
      ])
      if (current !== undefined) {
        const close = Scope.close(current.scope, Exit.void)
        // Forked uninterruptible, so the session's end waits for it rather than cutting it short.
        yield* behind
          ? Effect.asVoid(Effect.forkIn(close, sessionScope, { uninterruptible: true, startImmediately: true }))
          : close
      }
      // A session that downloaded nothing leaves no folder behind; one with files keeps them for the agent.
      const folder = downloadDir
      if (folder !== undefined) {
        downloadDir = undefined
        yield* Effect.promise(() => rmdir(folder).catch(() => undefined))
      }
      const uploads = uploadDir
      if (uploads !== undefined) {
        uploadDir = undefined
        yield* Effect.promise(() => rm(uploads, { recursive: true, force: true }))
      }
    })
  const stop = stopping(false)

  /** The page a new browser's session works on: its first page, or a new one when it has none. */
  const firstPage = (running: RunningBrowser, link: PageLink.PageLink) =>
    Effect.gen(function* () {
      const page = (yield* CdpHttp.listTargets(running.httpEndpoint)).find((t) => t.type === "page")
      return page === undefined ? yield* link.openPage : page.id
    })

  const start = Effect.gen(function* () {
    yield* Ref.update(state, (s) => ({ ...s, initializing: true }))
    const scope = yield* Scope.make()
    return yield* Effect.gen(function* () {
      // The provider reads the session's egress proxy from here: a browser it started ahead is bound to it.
      const running = yield* (
        Option.isSome(egress) ? Effect.provideService(provider.acquire, Egress, egress.value) : provider.acquire
      ).pipe(Scope.provide(scope))
      // The browser's own DevTools endpoint drives the browser: no page may reach it through the proxy.
      const devtools = new URL(running.httpEndpoint)
      if (Option.isSome(egress) && devtools.port !== "")
        yield* Effect.forEach([`127.0.0.0/8:${devtools.port}`, `[::1]:${devtools.port}`], egress.value.refuse)
      const downloads = options.downloads
      const link = yield* PageLink.make(running.wsEndpoint, {
        // A person in control answers the page's dialogs themselves.
        dialogs: Ref.get(state).pipe(
          Effect.map((s) => (s.engine?.id.kind === "human" ? Option.none() : Option.some(options.dialogs)))
        ),
        ...(downloads === undefined
          ? {}
          : { downloads: { dir: yield* downloadFolder(downloads, running), maxBytes: downloads.maxBytes } }),
        // On each connection: the page limits, and file: refused for every page, frame and popup.
        onConnect: (cdp) =>
          Effect.andThen(
            options.limits.watch(cdp),
            Option.isSome(egress) ? egress.value.guardSchemes(cdp) : Effect.void
          )
      }).pipe(Scope.provide(scope))
      const targetId = yield* firstPage(running, link)
      yield* link.follow(targetId)
      const live: LiveBrowser = { running, scope, link, targetId }
      yield* Ref.update(state, (s) => ({
        ...s,
        browser: live,
        tabs: { seen: new Set<string>(), recent: [targetId], list: [] }
      }))
      // The browser's first pages are the session's tabs, not tabs its page opened.
      return yield* tabs.sync(live)
    }).pipe(
      Effect.onError(() => Scope.close(scope, Exit.void)),
      Effect.ensuring(Ref.update(state, (s) => ({ ...s, initializing: false })))
    )
  })

  /**
   * Brings the page back to where the session last was, with its cookies and storage before its first request (a
   * fresh page shows about:blank). `cookies: false` when the browser lived on and kept its own; `reason` when the
   * next answer is to say so.
   */
  const restore = (live: LiveBrowser, why: string, cookies: boolean, reason?: SavedPage.RestoreReason) =>
    Effect.gen(function* () {
      const { saved, lastLocation } = yield* Ref.get(state)
      const page = saved ?? (lastLocation === undefined ? undefined : SavedPage.atUrl(lastLocation.url))
      if (page === undefined || !SavedPage.isRestorable(page.url)) return
      yield* restoreInto(live, page, { cookies, why, ...(reason === undefined ? {} : { reason }) })
    })

  /** Puts `page` into the live page (bounded), reporting it in the next answer when `reason` is given. */
  const restoreInto = (
    live: LiveBrowser,
    page: SavedPage.SavedPage,
    options: { readonly cookies: boolean; readonly why: string; readonly reason?: SavedPage.RestoreReason }
  ) =>
    pageOf(live)((cdp, sessionId) => SavedPage.restore(cdp, sessionId, page, { cookies: options.cookies })).pipe(
      Effect.timeoutOption(30_000),
      Effect.andThen(
        options.reason === undefined
          ? Effect.void
          : Ref.update(state, (s) => ({ ...s, events: [...s.events, restored(page, options.reason!)] }))
      ),
      Effect.catch((error) => Effect.logWarning(`could not restore the page ${options.why}`, error.message))
    )

  const fateOf = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const seen = yield* live.link.fate(live.targetId)
      if (Option.isSome(seen)) return seen
      // After a failed call, a page whose main thread no longer answers is as lost as a crashed one.
      const { suspect } = yield* Ref.get(state)
      // A page behind a dialog does not answer either, and is not hung: the dialog waits for its answer.
      const blocked = Option.isSome(yield* live.link.dialog(live.targetId))
      if (suspect && !blocked && !(yield* live.link.responsive(live.targetId, hungAfterMs))) {
        return Option.some<Fate>("hung")
      }
      return Option.none<Fate>()
    })

  /** The URL the page last crashed or hung at, when it was reopened there. */
  let failedAt: string | undefined

  /** The session's page was closed, crashed or hung: a new page at the last URL replaces it. */
  const keepPage = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const fate = yield* fateOf(live)
      if (Option.isNone(fate)) return live
      const what = described[fate.value]
      // A closed tab (an OAuth popup that closed itself, a tab the person closed) gives way to the one before it.
      if (fate.value === "closed") {
        const previous = yield* tabs.fallback(live, what)
        if (Option.isSome(previous)) return previous.value
      }
      const { lastLocation } = yield* Ref.get(state)
      yield* Effect.logWarning(`the session's page ${what}; opening a new one`, { url: lastLocation?.url })
      yield* engines.disconnect(`the session's page ${what}`)
      const replaced: LiveBrowser = { ...live, targetId: yield* live.link.openPage }
      yield* Ref.update(state, (s) => ({
        ...s,
        browser: replaced,
        tabs: {
          ...s.tabs,
          seen: new Set([...s.tabs.seen, replaced.targetId]),
          recent: [...s.tabs.recent.filter((id) => id !== live.targetId), replaced.targetId]
        }
      }))
      yield* live.link.follow(replaced.targetId)
      if (fate.value !== "closed") yield* live.link.closePage(live.targetId).pipe(Effect.timeout(5_000), Effect.ignore)
      // A page that crashed or hung again right after being reopened there (memory without end, an endless loop)
      // would do it again: it is not reopened a second time.
      const url = lastLocation?.url
      const again = fate.value !== "closed" && url !== undefined && url === failedAt
      failedAt = fate.value !== "closed" ? url : undefined
      // The browser kept its cookies; the tab's own storage (sessionStorage) went with it.
      if (!again)
        yield* restore(replaced, `after the page ${what}`, false, fate.value === "closed" ? undefined : "crash")
      return replaced
    })

  /** `restoring`: the relaunched page's restore runs beside the caller (in its scope), who waits for it. */
  const ensuring = (restoring: boolean) =>
    Effect.gen(function* () {
      const { browser: current, suspect } = yield* Ref.get(state)
      if (current === undefined) return [yield* start, Effect.void] as const
      // After a good call the kept socket is asked (one round trip); after a failed one, the provider's full check.
      if ((!suspect && (yield* current.link.alive)) || (yield* current.running.alive))
        return [yield* keepPage(current), Effect.void] as const
      yield* Effect.logWarning("browser is not responding", { pid: current.running.pid })
      yield* stopping(true)
      if (!(relaunch && provider.canRelaunch)) {
        return yield* new BrowserUnavailable({
          message: relaunch
            ? `the ${provider.name} browser is gone and cannot be relaunched by Switchyard`
            : "the browser died and relaunch is disabled"
        })
      }
      const fresh = yield* start
      const back = restore(fresh, "after relaunch", true, "crash").pipe(
        Effect.andThen(Ref.get(state)),
        Effect.flatMap((s) =>
          Effect.logInfo("browser relaunched", { pid: fresh.running.pid, url: s.lastLocation?.url })
        )
      )
      if (!restoring) {
        yield* back
        return [fresh, Effect.void] as const
      }
      const fiber = yield* Effect.forkScoped(back)
      return [fresh, Fiber.join(fiber)] as const
    })

  const ensure = Effect.scoped(ensuring(false)).pipe(Effect.map(([live]) => live))
  return {
    ensure,
    ensureRestoring: ensuring(true),
    stop,
    readable,
    restore: (live, page, reason) => restoreInto(live, page, { cookies: true, why: `from ${reason}`, reason })
  } satisfies BrowserLife
})
