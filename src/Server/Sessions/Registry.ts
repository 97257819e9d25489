/**
 * What the Sessions know of their sessions, as one immutable value held in a `Ref`: opening, hibernating, closing and
 * the lanes each read and change it in one step, so nothing yields between a check and the change it decides.
 */
import { type Deferred, HashMap, Option, type Scope, type Semaphore } from "effect"
import type { Router } from "../../Cascade/Router.ts"
import type { SwitchyardError } from "../../Errors.ts"
import type { Sandbox } from "../../Sandbox/Sandbox.ts"
import type { SavedPage } from "../../Sandbox/SavedPage.ts"

/** An open session: its browser stack, and when a call last used it. */
export interface Live {
  readonly name: string
  readonly scope: Scope.Closeable
  readonly router: Router["Service"]
  readonly sandbox: Sandbox["Service"]
  /** Completed when the session closes: calls still running on it answer `session_closed` rather than never. */
  readonly closed: Deferred.Deferred<void>
  readonly lastUsed: number
}

/** A hibernated session: its page, and when it was last used (hibernated pages past the idle timeout are dropped). */
export interface Hibernated {
  readonly page: SavedPage
  readonly lastUsed: number
}

/** A session's FIFO lane while calls wait or run on it: one permit, taken in arrival order. */
export interface Lane {
  readonly turns: Semaphore.Semaphore
  /** Calls waiting or running on the session. */
  readonly pending: number
}

export interface Registry {
  readonly open: HashMap.HashMap<string, Live>
  /** Sessions being opened: a second call for the same name waits for the first to finish opening it. */
  readonly opening: HashMap.HashMap<string, Deferred.Deferred<Live, SwitchyardError>>
  /** Sessions being hibernated: a call for one waits until its page is saved. */
  readonly hibernating: HashMap.HashMap<string, Deferred.Deferred<void>>
  readonly hibernated: HashMap.HashMap<string, Hibernated>
  readonly lanes: HashMap.HashMap<string, Lane>
  /** Calls waiting for a session slot. */
  readonly waiting: number
  /** Idle sessions being hibernated to give their slot to a waiting call. */
  readonly freeing: number
}

export const empty: Registry = {
  open: HashMap.empty(),
  opening: HashMap.empty(),
  hibernating: HashMap.empty(),
  hibernated: HashMap.empty(),
  lanes: HashMap.empty(),
  waiting: 0,
  freeing: 0
}

/** Hibernated pages kept at most; past it the least recently used is dropped (its session then starts afresh). */
export const maxHibernated = 1_000

/** Calls waiting or running on the session. */
export const pending = (registry: Registry, name: string) =>
  Option.match(HashMap.get(registry.lanes, name), { onNone: () => 0, onSome: (lane) => lane.pending })

/** Whether the session has a browser stack open (or opening), or is hibernated with its page kept. */
export const isOpen = (registry: Registry, name: string) =>
  HashMap.has(registry.open, name) ||
  HashMap.has(registry.opening, name) ||
  HashMap.has(registry.hibernated, name) ||
  HashMap.has(registry.hibernating, name)

/** Browsers held or being opened: a hibernated session holds none. */
export const browsers = (registry: Registry) =>
  HashMap.size(registry.open) + [...HashMap.keys(registry.opening)].filter((n) => !HashMap.has(registry.open, n)).length

/** `live` is still the open session of its name (not closed, hibernated or opened afresh since). */
export const isCurrent = (registry: Registry, live: Live) =>
  Option.exists(HashMap.get(registry.open, live.name), (now) => now.closed === live.closed)

/** Open sessions with no call waiting or running, least recently used first. */
export const idle = (registry: Registry) =>
  HashMap.toValues(registry.open)
    .filter((live) => pending(registry, live.name) === 0)
    .sort((a, b) => a.lastUsed - b.lastUsed)

/** Takes `live` out of the open sessions (when it is still the open one): its current record, if it was. */
export const takeOut = (registry: Registry, live: Live, when: (registry: Registry) => boolean = () => true) =>
  isCurrent(registry, live) && when(registry)
    ? ([
        HashMap.get(registry.open, live.name),
        { ...registry, open: HashMap.remove(registry.open, live.name) }
      ] as const)
    : ([Option.none<Live>(), registry] as const)

/** Records a call's use of the session, unless it was closed meanwhile. */
export const touch = (registry: Registry, live: Live, now: number): Registry =>
  isCurrent(registry, live)
    ? { ...registry, open: HashMap.modify(registry.open, live.name, (open) => ({ ...open, lastUsed: now })) }
    : registry

/** Keeps a hibernated session's page, dropping the least recently used past `maxHibernated`. */
export const keep = (registry: Registry, name: string, kept: Hibernated): Registry => {
  let hibernated = HashMap.set(registry.hibernated, name, kept)
  while (HashMap.size(hibernated) > maxHibernated) {
    const oldest = HashMap.toEntries(hibernated).reduce((a, b) => (b[1].lastUsed < a[1].lastUsed ? b : a))
    hibernated = HashMap.remove(hibernated, oldest[0])
  }
  return { ...registry, hibernated }
}
