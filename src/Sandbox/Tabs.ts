/**
 * The session's tabs: a tab its page opens (a `target=_blank` link, `window.open`) becomes the page the session works
 * on; closing the active tab falls back to the one active before it; agents list, switch and close tabs by id or index.
 * Owns which tab is active, the tabs seen and their order of use, and the list the state block shows.
 */
import { Context, Effect, Layer, Option, Ref, Schedule } from "effect"
import { InvalidInput } from "../Errors/Page.ts"
import type { SwitchyardError } from "../Errors.ts"
import { EngineSwitch } from "./EngineSwitch.ts"
import type { PageEvent, Tab } from "./PageEvent.ts"
import { PageEvents } from "./PageEvents.ts"
import type { PageTarget } from "./PageLink.ts"
import type { LiveBrowser } from "./SessionState.ts"
import { Tracking } from "./Tracking.ts"

/** A tab as an agent names it: its id (or a unique start of it), or its index. */
export type TabRef = string | number

export class Tabs extends Context.Service<
  Tabs,
  {
    /**
     * Brings the session's tabs up to date after a call: a tab the page opened becomes active (the newest, once it
     * loaded), a closed active tab gives way to the previous one; the list and what happened are kept.
     */
    readonly sync: (live: LiveBrowser) => Effect.Effect<LiveBrowser>
    /** Updates the tab list the state block shows, once the active page's location was read. */
    readonly list: (live: LiveBrowser) => Effect.Effect<void>
    /** Makes `ref` the active tab. */
    readonly switchTo: (live: LiveBrowser, ref: TabRef) => Effect.Effect<LiveBrowser, SwitchyardError>
    /** Closes `ref` (the active tab when absent); the previous tab, or a new blank one, becomes active. */
    readonly close: (live: LiveBrowser, ref: TabRef | undefined) => Effect.Effect<LiveBrowser, SwitchyardError>
    /** The tab active before `live`'s, still open, when its page is gone: what a closed page falls back to. */
    readonly fallback: (live: LiveBrowser, why: string) => Effect.Effect<Option.Option<LiveBrowser>>
    /** A new browser's first page is the active tab; no tab seen before it. */
    readonly reset: (targetId: string) => Effect.Effect<void>
    /** A new page takes the place of the active one (crashed, hung, or the last one closed) and becomes active. */
    readonly replace: (live: LiveBrowser) => Effect.Effect<LiveBrowser, SwitchyardError>
    /** The active tab's target id, once a browser started. */
    readonly active: Effect.Effect<string | undefined>
    /** The tabs as the last call left them, for every answer's state. */
    readonly listed: Effect.Effect<ReadonlyArray<Tab>>
  }
>()("switchyard/Sandbox/Tabs") {
  static readonly layer = Layer.effect(
    Tabs,
    Effect.gen(function* () {
      return yield* make({ engines: yield* EngineSwitch, tracking: yield* Tracking, events: yield* PageEvents })
    })
  )
}

/** The session's tabs, as they are kept between calls. */
interface TabBook {
  /** The page the session works on. */
  readonly active: string | undefined
  /** Every tab the session has seen: a page not in it is new (opened by the page, or by a person). */
  readonly seen: ReadonlySet<string>
  /** Tabs in the order they were active, the current one last: where closing the active tab falls back to. */
  readonly recent: ReadonlyArray<string>
  /** The tabs as the last call left them, for every answer's state. */
  readonly list: ReadonlyArray<Tab>
}

/** How long a tab the page just opened is given to leave `about:blank` and load before the answer describes it. */
const openedLoadMs = 3_000

const tabOf = (page: PageTarget, index: number, active: string): Tab => ({
  id: page.targetId,
  index,
  url: page.url,
  title: page.title,
  active: page.targetId === active
})

/** Waits, bounded, for a page's document to finish loading. */
const untilLoaded = (live: LiveBrowser, targetId: string) =>
  live.link
    .run(targetId, (cdp, sessionId) =>
      cdp.send(
        "Runtime.evaluate",
        {
          expression:
            "document.readyState === 'complete' || new Promise((r) => addEventListener('load', () => r(true), { once: true }))",
          awaitPromise: true
        },
        sessionId
      )
    )
    .pipe(Effect.timeoutOption(openedLoadMs), Effect.ignore)

export const make = Effect.fnUntraced(function* (options: {
  readonly engines: EngineSwitch["Service"]
  readonly tracking: Tracking["Service"]
  readonly events: PageEvents["Service"]
}) {
  const { engines, tracking } = options
  const state = yield* Ref.make<TabBook>({ active: undefined, seen: new Set(), recent: [], list: [] })

  const note = (event: PageEvent) => options.events.note([event])

  /**
   * The browser's pages that belong to the session (those in the active page's browser context), in the order they
   * opened: the browser lists its targets newest first, so the order the session saw them in is kept.
   */
  const sessionPages = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const pages = yield* live.link.pages
      const order = [...(yield* Ref.get(state)).seen]
      // The active page's context; when it just closed, that of the tabs the session knows.
      const context = (pages.find((p) => p.targetId === live.targetId) ?? pages.find((p) => order.includes(p.targetId)))
        ?.browserContextId
      const mine = context === undefined ? pages : pages.filter((p) => p.browserContextId === context)
      const rank = (p: PageTarget) => {
        const at = order.indexOf(p.targetId)
        return at === -1 ? order.length : at
      }
      return [...mine].reverse().sort((a, b) => rank(a) - rank(b))
    })

  const activate = (live: LiveBrowser, targetId: string, reason: string) =>
    Effect.gen(function* () {
      if (targetId === live.targetId) return live
      // Every engine finds its page by target id when it connects: the next call connects on the new tab.
      yield* engines.disconnect(reason)
      const next: LiveBrowser = { ...live, targetId }
      yield* Ref.update(state, (s) => ({
        ...s,
        active: targetId,
        recent: [...s.recent.filter((id) => id !== targetId), targetId]
      }))
      yield* live.link.follow(targetId)
      yield* live.link.activate(targetId)
      return next
    })

  /** Waits, bounded, for a tab just opened to navigate away from its initial blank page and load. */
  const settle = (live: LiveBrowser, targetId: string) =>
    Effect.gen(function* () {
      const leftBlank = live.link.location(targetId).pipe(
        Effect.map((at) => Option.isSome(at) && at.value.url !== "about:blank" && at.value.url !== ""),
        Effect.repeat({ until: (left) => left, schedule: Schedule.spaced("50 millis") })
      )
      yield* leftBlank.pipe(Effect.timeoutOption(openedLoadMs))
      yield* untilLoaded(live, targetId)
    })

  /**
   * A page with its URL and title as the browser last announced them; a title the browser has not caught up with
   * yet (it shows the URL until then) is read from the page, bounded.
   */
  const announced = (live: LiveBrowser, page: PageTarget) =>
    Effect.gen(function* () {
      const at = yield* live.link.location(page.targetId)
      const known = Option.isSome(at) ? { ...page, ...at.value } : page
      const lagging = known.title === "" || known.url.endsWith(known.title) || known.title === known.url
      // A page behind a dialog would not answer: it keeps the announced title.
      if (!lagging || Option.isSome(yield* live.link.dialog(page.targetId))) return known
      const read = yield* live.link.current(page.targetId)
      return Option.isSome(read) ? { ...known, ...read.value } : known
    })

  const render = (live: LiveBrowser, pages: ReadonlyArray<PageTarget>) =>
    Effect.gen(function* () {
      const lastLocation = yield* tracking.lastLocation
      return yield* Effect.forEach(pages, (page, index) =>
        // The active tab as the page said it when the call ended; others as the browser last announced them.
        page.targetId === live.targetId && lastLocation !== undefined
          ? Effect.succeed(tabOf({ ...page, ...lastLocation }, index, live.targetId))
          : announced(live, page).pipe(Effect.map((p) => tabOf(p, index, live.targetId)))
      )
    })

  const fallback = (live: LiveBrowser, why: string) =>
    Effect.gen(function* () {
      const pages = yield* sessionPages(live).pipe(Effect.orElseSucceed(() => []))
      const open = new Set(pages.map((p) => p.targetId))
      open.delete(live.targetId)
      const { recent } = yield* Ref.get(state)
      const previous =
        [...recent].reverse().find((id) => open.has(id)) ?? pages.findLast((p) => open.has(p.targetId))?.targetId
      if (previous === undefined) return Option.none<LiveBrowser>()
      const next = yield* activate(live, previous, why)
      const at = yield* live.link.location(previous)
      yield* note({
        event: "tab_closed",
        message: `the tab the session worked on ${why}; it works on the previous tab again${Option.isSome(at) ? ` (${at.value.url})` : ""}`,
        tab: live.targetId,
        ...(Option.isSome(at)
          ? {
              active: {
                id: previous,
                index: pages.findIndex((p) => p.targetId === previous),
                ...at.value,
                active: true
              }
            }
          : {})
      })
      return Option.some(next)
    })

  const sync = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const read = yield* Effect.option(sessionPages(live))
      if (Option.isNone(read)) return live
      let pages = read.value
      const { seen } = yield* Ref.get(state)
      const ids = new Set(pages.map((p) => p.targetId))
      const fresh = pages.filter((p) => !seen.has(p.targetId))
      // The first look at the browser adopts what is there without calling it new.
      const opened =
        seen.size === 0
          ? []
          : fresh.filter((p) => p.openerId !== undefined && (seen.has(p.openerId) || ids.has(p.openerId)))
      yield* Effect.forEach(fresh, (p) => live.link.watch(p.targetId), { discard: true })
      yield* Ref.update(state, (s) => ({
        ...s,
        seen: new Set([...s.seen, ...ids]),
        recent: s.recent.length === 0 ? [live.targetId] : s.recent
      }))
      let current = live
      const newest = opened.at(-1)
      if (newest !== undefined) {
        yield* settle(live, newest.targetId)
        current = yield* activate(live, newest.targetId, "the page opened a new tab")
        pages = yield* sessionPages(current).pipe(Effect.orElseSucceed(() => pages))
        const index = pages.findIndex((p) => p.targetId === newest.targetId)
        const tab = tabOf(yield* announced(current, pages[index] ?? newest), index, newest.targetId)
        yield* note({
          event: "tab_opened",
          message: `the page opened a new tab (${tab.url}${tab.title ? `, "${tab.title}"` : ""}); the session now works on it — browser.tabs lists, switches and closes tabs`,
          tab
        })
      } else if (!ids.has(live.targetId)) {
        const back = yield* fallback(live, "was closed")
        if (Option.isSome(back)) current = back.value
      }
      return current
    })

  /** Updates the list the state block shows (after the active page's location was read). */
  const list = (live: LiveBrowser) =>
    sessionPages(live).pipe(
      Effect.flatMap((pages) => render(live, pages)),
      Effect.flatMap((tabs) => Ref.update(state, (s) => ({ ...s, list: tabs }))),
      Effect.ignore
    )

  const find = (live: LiveBrowser, ref: TabRef) =>
    Effect.gen(function* () {
      const pages = yield* sessionPages(live)
      const byIndex = typeof ref === "number" ? pages[ref] : undefined
      const byId =
        typeof ref === "string"
          ? (pages.find((p) => p.targetId === ref) ?? onlyOne(pages.filter((p) => p.targetId.startsWith(ref))))
          : undefined
      const found = byIndex ?? byId
      if (found === undefined) {
        return yield* new InvalidInput({
          field: "tab",
          message: `no tab ${JSON.stringify(ref)}; the tabs are ${pages.map((p, i) => `${i}: ${p.targetId} (${p.url})`).join(", ")}`
        })
      }
      return found
    })

  const replace = (live: LiveBrowser) =>
    Effect.gen(function* () {
      const replaced: LiveBrowser = { ...live, targetId: yield* live.link.openPage }
      yield* Ref.update(state, (s) => ({
        ...s,
        active: replaced.targetId,
        seen: new Set([...s.seen, replaced.targetId]),
        recent: [...s.recent.filter((id) => id !== live.targetId), replaced.targetId]
      }))
      yield* live.link.follow(replaced.targetId)
      return replaced
    })

  return Tabs.of({
    sync: Effect.fn("Tabs.sync")(sync),
    list: Effect.fn("Tabs.list")(list),
    switchTo: Effect.fn("Tabs.switchTo")(function* (live: LiveBrowser, ref: TabRef) {
      const page = yield* find(live, ref)
      const next = yield* activate(live, page.targetId, "the agent switched tabs")
      yield* list(next)
      return next
    }),
    close: Effect.fn("Tabs.close")(function* (live: LiveBrowser, ref: TabRef | undefined) {
      const page = ref === undefined ? undefined : yield* find(live, ref)
      const target = page?.targetId ?? live.targetId
      if (target !== live.targetId) {
        yield* live.link.closePage(target)
        yield* list(live)
        return live
      }
      const back = yield* fallback(live, "was closed by the agent")
      const next = Option.isSome(back)
        ? back.value
        : // The last tab: a blank one takes its place, as a browser always has a page.
          yield* live.link.openPage.pipe(Effect.flatMap((id) => activate(live, id, "the agent closed the last tab")))
      yield* live.link.closePage(target)
      yield* list(next)
      return next
    }),
    fallback: Effect.fn("Tabs.fallback")(fallback),
    reset: (targetId) => Ref.set(state, { active: targetId, seen: new Set<string>(), recent: [targetId], list: [] }),
    replace: Effect.fn("Tabs.replace")(replace),
    active: Ref.get(state).pipe(Effect.map((s) => s.active)),
    listed: Ref.get(state).pipe(Effect.map((s) => s.list))
  })
})

const onlyOne = <A>(all: ReadonlyArray<A>) => (all.length === 1 ? all[0] : undefined)
