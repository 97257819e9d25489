/**
 * `switchyard cache list|clear [--site]`: the replay level's kept resolutions in the store the service uses (the
 * embedded file, or PostgreSQL with DATABASE_URL), listed or forgotten, one site or every site.
 */
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"

// Loaded when the command runs, so the service's start does not load them.
const ReplayReport = () => Effect.promise(() => import("../Cascade/Replay/Report.ts"))

/** Where the store is, for `status` and `cache`. */
export const storeFlag = Flag.String("store").pipe(
  Flag.optional,
  Flag.withDescription(
    "Embedded store file (SWITCHYARD_STORE; default ~/.switchyard/store.db); DATABASE_URL selects PostgreSQL"
  )
)

const cacheFlags = {
  store: storeFlag,
  site: Flag.String("site").pipe(
    Flag.optional,
    Flag.withDescription("One site: its origin (https://jobs.example.com) or its host name (any port and scheme)")
  )
}

/** The store the service keeps its resolutions in, as `status` finds it. */
const cacheStore = (flags: { readonly store: Option.Option<string> }) =>
  Effect.promise(() => import("../Store/Location.ts")).pipe(
    Effect.map((Location) => Location.fromEnv(process.env, Option.getOrUndefined(flags.store)))
  )

const cacheList = Command.make("list", cacheFlags, (flags) =>
  Effect.all([cacheStore(flags), ReplayReport()]).pipe(
    Effect.flatMap(([location, Report]) => Report.list(location, Option.getOrUndefined(flags.site))),
    Effect.flatMap((text) => Console.log(text))
  )
).pipe(Command.withDescription("The resolutions the replay level keeps: site, route, instruction, target, hits"))

const cacheClear = Command.make("clear", cacheFlags, (flags) =>
  Effect.all([cacheStore(flags), ReplayReport()]).pipe(
    Effect.flatMap(([location, Report]) => Report.clear(location, Option.getOrUndefined(flags.site))),
    Effect.flatMap((text) => Console.log(text))
  )
).pipe(Command.withDescription("Forget the kept resolutions (and their counts) of one site, or of every site"))

export const cache = Command.make("cache").pipe(
  Command.withDescription(
    "The replay level's kept resolutions: list them, or clear them (SWITCHYARD_REPLAY=off turns replay off)"
  ),
  Command.withSubcommands([cacheList, cacheClear])
)
