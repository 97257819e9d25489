/**
 * A session that starts from a saved storage state: put into its browser before its first call and again into a
 * browser started afresh, and held to that one state for the session's later calls.
 */
import { Effect, Option, Ref } from "effect"
import { Unsupported } from "../../Errors/Engine.ts"
import { InvalidInput } from "../../Errors/Page.ts"
import type { Sandbox } from "../../Sandbox/Sandbox.ts"
import * as StorageState from "../../Sandbox/StorageState.ts"
import type { StorageStates } from "../../Store/StorageStates.ts"

export const make = (sandbox: Sandbox["Service"], storage: Option.Option<StorageStates["Service"]>) =>
  Effect.gen(function* () {
    /** The storage state put into the session's browser, and which browser (its endpoint) got it. */
    const stateIn = yield* Ref.make<{ readonly name: string; readonly browser: string | null } | undefined>(undefined)

    /**
     * A session that starts from a saved state gets it before its first call, and again in a browser started
     * afresh (after a close or a crash); a later call cannot swap it for another (browser.storage loads one).
     */
    const startFrom = (wanted: string | undefined, named: boolean) =>
      Effect.gen(function* () {
        if (wanted === undefined) return
        const browser = (yield* sandbox.status).wsEndpoint
        const given = yield* Ref.get(stateIn)
        if (given !== undefined && browser !== null && given.browser === browser) {
          if (named && given.name !== wanted) {
            return yield* new InvalidInput({
              field: "storageState",
              message: `this session started from the storage state ${JSON.stringify(given.name)}; storageState applies to a session's first call: load another with browser.storage {"action": "load", "name": ${JSON.stringify(wanted)}}`
            })
          }
          return
        }
        if (Option.isNone(storage)) {
          return yield* new Unsupported({ message: "this service keeps no storage states (storageState)" })
        }
        const { state } = yield* storage.value.load(wanted)
        yield* sandbox.onPage((page) => StorageState.apply(page, state))
        yield* Ref.set(stateIn, { name: wanted, browser: (yield* sandbox.status).wsEndpoint })
      })

    return startFrom
  })
