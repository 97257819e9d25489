/**
 * What a person reads of the replay level: `switchyard cache list|clear [--site]` and the replay line of
 * `switchyard status` (entries kept, hit rate, time saved), read from the store the service keeps them in.
 */
import { existsSync } from "node:fs"
import { Effect } from "effect"
import * as AccessibilityTree from "../../Engine/AccessibilityTree.ts"
import { describe, type StoreOptions } from "../../Store/Location.ts"
import * as Resolutions from "../../Store/Resolutions.ts"

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

const day = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 16)

/** `hits 12 of 15 replays tried, 9 calls with nothing kept: hit rate 50%; time saved 41.2 s`. */
export const summary = (stats: Resolutions.Stats) => {
  const calls = stats.hits + stats.misses + stats.absent
  const rate = calls === 0 ? "no calls yet" : `hit rate ${Math.round((100 * stats.hits) / calls)}%`
  return `${stats.entries} kept on ${stats.sites} sites; ${stats.hits} replayed of ${stats.hits + stats.misses} tried, ${stats.absent} with nothing kept: ${rate}; time saved ${seconds(stats.savedMs)}`
}

/** One line per entry, newest use first: its site, route, instruction and target, and how it has fared. */
export const listing = (entries: ReadonlyArray<Resolutions.Entry>) => {
  if (entries.length === 0) return "no kept resolutions"
  return entries
    .map((e) => {
      const targets = e.resolution.steps
        .map((s) =>
          AccessibilityTree.describeIn({
            role: s.target.role,
            name: s.target.name,
            context: AccessibilityTree.contextOf(s.target.around)
          })
        )
        .join(", ")
      const what = e.resolution.learning === undefined ? targets : "(its target is named on the next call)"
      return [
        `${e.id.slice(0, 12)}  ${e.key.site}${e.key.route}  ${e.key.tool} ${JSON.stringify(e.key.instruction)}`,
        `    ${e.resolution.steps[0]?.method ?? ""} ${what}${e.resolution.destructive ? " (submits: replayed only on the same role, name and context)" : ""}`,
        `    by ${e.resolvedBy} in ${seconds(e.costMs)}; ${e.hits} replays, ${e.misses} misses; used ${day(e.usedAt)}, expires ${day(e.expiresAt)}`
      ].join("\n")
    })
    .join("\n")
}

/** The store's resolutions, opened for one command. */
const opened = (location: StoreOptions) => Resolutions.make({ location })

export const list = (location: StoreOptions, site?: string) =>
  opened(location).pipe(
    Effect.flatMap((store) => store.list(site)),
    Effect.map((entries) => `${describe(location)}\n${listing(entries)}`),
    Effect.scoped
  )

export const clear = (location: StoreOptions, site?: string) =>
  opened(location).pipe(
    Effect.flatMap((store) => store.clear(site)),
    Effect.map(
      (n) => `cleared ${n} kept resolutions${site === undefined ? "" : ` of ${site}`} from ${describe(location)}`
    ),
    Effect.scoped
  )

/** The `replay` line of `switchyard status`: empty when the store has nothing yet. */
export const status = (location: StoreOptions, enabled: boolean) =>
  location.kind === "embedded" && !existsSync(location.file)
    ? Effect.succeed("")
    : opened(location).pipe(
        Effect.flatMap((store) => store.stats()),
        Effect.map((stats) => `\nreplay       ${enabled ? "on" : "off (SWITCHYARD_REPLAY=off)"}: ${summary(stats)}`),
        Effect.catch((error) => Effect.succeed(`\nreplay       not readable (${error.message})`)),
        Effect.scoped
      )
