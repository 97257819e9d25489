/**
 * The egress each session of the service gets from the configuration and the surface: loopback and private ranges
 * allowed on stdio and on a loopback HTTP bind, refused beyond loopback; the service's own HTTP port refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Address from "../../src/Egress/Address.ts"
import * as Policy from "../../src/Egress/Policy.ts"
import * as Config from "../../src/Server/Config.ts"
import { checkHttpOptions } from "../../src/Server/Mcp/Http.ts"
import { egressOf } from "../../src/Server/Service.ts"

const ruleFor = (options: ReturnType<typeof egressOf>, host: string, port: number) => {
  const policy = Policy.make(options.config, { privateNetworks: options.privateNetworks })
  const address = Address.parse(host)!
  const decision = Policy.decide(policy, { scheme: "http", host, port, kind: "document" }, [address])
  return decision.allowed ? "allowed" : decision.rule
}

describe("the service's egress", () => {
  it.effect("stdio allows the local app, a loopback HTTP bind too but never its own port", () =>
    Effect.gen(function* () {
      const config = yield* Config.resolve({ env: {} })
      const stdio = egressOf(config)
      assert.strictEqual(ruleFor(stdio, "127.0.0.1", 3000), "allowed")
      assert.strictEqual(ruleFor(stdio, "169.254.169.254", 80), "class:metadata")
      const http = egressOf(config, { host: "127.0.0.1", port: 8931 })
      assert.strictEqual(ruleFor(http, "127.0.0.1", 3000), "allowed")
      assert.strictEqual(ruleFor(http, "127.0.0.1", 8931), "deny:127.0.0.0/8:8931")
      assert.strictEqual(ruleFor(http, "127.0.0.5", 8931), "deny:127.0.0.0/8:8931")
      assert.strictEqual(ruleFor(http, "::1", 8931), "deny:[::1]:8931")
    })
  )

  it.effect("beyond loopback, local ranges are refused unless configured; a deny wins over the configuration", () =>
    Effect.gen(function* () {
      const open = egressOf(yield* Config.resolve({ env: {} }), { host: "0.0.0.0", port: 8931 })
      assert.strictEqual(ruleFor(open, "127.0.0.1", 3000), "class:loopback")
      assert.strictEqual(ruleFor(open, "10.1.2.3", 80), "class:private")
      const configured = egressOf(
        yield* Config.resolve({
          env: {
            SWITCHYARD_PRIVATE_NETWORKS: "true",
            SWITCHYARD_EGRESS_ALLOW: "10.0.0.0/8",
            SWITCHYARD_EGRESS_DENY: "10.9.0.0/16"
          }
        }),
        { host: "0.0.0.0", port: 8931 }
      )
      assert.strictEqual(ruleFor(configured, "127.0.0.1", 3000), "allowed")
      assert.strictEqual(ruleFor(configured, "10.1.2.3", 80), "allowed")
      assert.strictEqual(ruleFor(configured, "10.9.1.1", 80), "deny:10.9.0.0/16")
      assert.strictEqual(ruleFor(configured, "127.0.0.1", 8931), "deny:127.0.0.0/8:8931")
    })
  )

  it.effect("the token rule and the egress defaults agree on what loopback is", () =>
    Effect.gen(function* () {
      const config = yield* Config.resolve({ env: {} })
      const options = { port: 0, allowedHosts: [], sessionIdleMs: 1, maxSessions: 1, sharedDefaultSession: false }
      const tokenNeeded = (host: string) =>
        Effect.isFailure(checkHttpOptions({ ...config.mcp, ...options, host, token: undefined }))
      for (const host of ["127.0.0.1", "127.0.0.3", "::1", "[::1]", "localhost"]) {
        assert.isFalse(yield* tokenNeeded(host), `${host} needs no token`)
        assert.strictEqual(ruleFor(egressOf(config, { host, port: 8931 }), "10.1.2.3", 80), "allowed", host)
      }
      for (const host of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.2"]) {
        assert.isTrue(yield* tokenNeeded(host), `${host} needs a token`)
        assert.strictEqual(ruleFor(egressOf(config, { host, port: 8931 }), "10.1.2.3", 80), "class:private", host)
      }
      // The unspecified address reaches the service's own port as 127.0.0.1 does.
      const http = egressOf(config, { host: "127.0.0.1", port: 8931 })
      assert.strictEqual(ruleFor(http, "0.0.0.0", 8931), "deny:127.0.0.0/8:8931")
      assert.strictEqual(ruleFor(http, "::", 8931), "deny:127.0.0.0/8:8931")
    })
  )
})
