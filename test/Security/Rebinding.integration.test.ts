/**
 * DNS rebinding on a real session stack (Router → Cascade → Sandbox → real Chromium through the session's egress):
 * a name this test controls answers the allowed loopback address, then the denied one. The check made before the
 * browser goes and the connection the proxy makes each resolve the name; only the addresses the proxy connects to
 * count, so the name cannot pass at check time and land on the denied server at connect time.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Router } from "../../src/Cascade/Router.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import * as SessionStack from "../../src/Server/SessionStack.ts"
import { startSites } from "./Support.ts"

const pages = (): Record<string, string> => ({
  "/rebind": `<title>rebind</title><p>from the allowed app</p><a href="/rebind-again">Again</a>`,
  "/rebind-again": "<title>again</title><p>again from the allowed app</p>"
})

/** `rebind.test` answers what `next` says, one answer per lookup; the test scripts it. */
const answers: Array<string> = []
const lookups: Array<string> = []
const resolve = async (host: string): Promise<ReadonlyArray<string>> => {
  if (host !== "rebind.test") throw new Error(`ENOTFOUND ${host}`)
  const address = answers.length > 1 ? answers.shift()! : (answers[0] ?? "127.0.0.1")
  lookups.push(address)
  return [address]
}

const sites = Effect.acquireRelease(
  Effect.promise(() => startSites(pages)),
  (s) => Effect.promise(s.close)
)

const session = Layer.build(
  SessionStack.layer({
    browser: LocalChromium.layer(),
    sandbox: { idleTimeoutMs: null },
    egress: { privateNetworks: true, config: { deny: ["127.0.0.2"] }, resolve }
  })
).pipe(Effect.map((context) => Context.get(context, Router)))

describe("DNS rebinding", () => {
  it.live(
    "a name that resolved to the allowed address, then to the denied one, is refused where it connects",
    () =>
      Effect.gen(function* () {
        const s = yield* sites
        const router = yield* session
        const url = (path: string) => `http://rebind.test:${s.port}${path}`

        // Every lookup answers the allowed app: the page opens through the proxy, by a name only it can resolve.
        answers.splice(0, answers.length, "127.0.0.1")
        const first = yield* router.call("browser.navigate", { url: url("/rebind") })
        assert.isTrue(first.ok, JSON.stringify(first.error))
        assert.include(s.allowed.hits, "GET /rebind")

        // The check before the browser goes sees the allowed address; every later lookup the denied one.
        answers.splice(0, answers.length, "127.0.0.1", "127.0.0.2")
        const rebound = yield* router.call("browser.navigate", { url: url("/rebind-again") })
        assert.isFalse(rebound.ok)
        assert.strictEqual(rebound.error?.type, "rejected_by_policy")
        assert.include(rebound.error?.message, "rule deny:127.0.0.2")
        assert.includeMembers(lookups, ["127.0.0.1", "127.0.0.2"])

        // A link the agent clicks on the allowed page, once the name answers the denied address.
        answers.splice(0, answers.length, "127.0.0.1")
        assert.isTrue((yield* router.call("browser.navigate", { url: url("/rebind") })).ok)
        answers.splice(0, answers.length, "127.0.0.2")
        const clicked = yield* router.call("browser.act", { instruction: 'click "Again"' })
        assert.strictEqual(clicked.error?.type, "rejected_by_policy")

        assert.deepStrictEqual(s.denied.hits, [])
      }).pipe(Effect.scoped),
    60_000
  )
})
