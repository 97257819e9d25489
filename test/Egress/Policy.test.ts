/**
 * The egress decision over tables (no traffic): address-class defaults on stdio and off loopback, deny over allow
 * over the classes, host patterns, ports and origins, subresources, and the configuration keys that feed it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Address from "../../src/Egress/Address.ts"
import * as Policy from "../../src/Egress/Policy.ts"
import * as Config from "../../src/Server/Config.ts"

const addresses = (...texts: ReadonlyArray<string>) => texts.map((t) => Address.parse(t)!)

const rule = (
  policy: Policy.Policy,
  host: string,
  resolved: ReadonlyArray<string>,
  target: Partial<Policy.Target> = {}
): string => {
  const full: Policy.Target = { scheme: "http", host, port: 80, kind: "document", ...target }
  const before = Policy.decide(policy, full, [])
  if (!before.allowed) return before.rule
  const after = Policy.decide(policy, full, addresses(...resolved))
  return after.allowed ? "allowed" : after.rule
}

const stdio = Policy.make({}, { privateNetworks: true })
const network = Policy.make({}, { privateNetworks: false })

describe("Policy", () => {
  it("on stdio allows loopback and private ranges, never metadata, multicast or reserved", () => {
    assert.strictEqual(rule(stdio, "127.0.0.1", ["127.0.0.1"]), "allowed")
    assert.strictEqual(rule(stdio, "localhost", ["127.0.0.1", "::1"]), "allowed")
    assert.strictEqual(rule(stdio, "10.0.0.5", ["10.0.0.5"]), "allowed")
    assert.strictEqual(rule(stdio, "169.254.169.254", ["169.254.169.254"]), "class:metadata")
    assert.strictEqual(rule(stdio, "::ffff:a9fe:a9fe", ["::ffff:a9fe:a9fe"]), "class:metadata")
    assert.strictEqual(rule(stdio, "fd00:ec2::254", ["fd00:ec2::254"]), "class:metadata")
    assert.strictEqual(rule(stdio, "100.100.100.200", ["100.100.100.200"]), "class:metadata")
    assert.strictEqual(rule(stdio, "224.0.0.1", ["224.0.0.1"]), "class:multicast")
    assert.strictEqual(rule(stdio, "240.0.0.1", ["240.0.0.1"]), "class:reserved")
    assert.strictEqual(rule(stdio, "example.com", ["93.184.215.14"]), "allowed")
  })

  it("refuses metadata names before they are resolved", () => {
    assert.strictEqual(rule(stdio, "metadata.google.internal", []), "class:metadata")
    assert.strictEqual(rule(stdio, "metadata", []), "class:metadata")
  })

  it("off loopback refuses every local class, however it is wrapped", () => {
    assert.strictEqual(rule(network, "127.0.0.1", ["127.0.0.1"]), "class:loopback")
    assert.strictEqual(rule(network, "localhost", ["127.0.0.1", "::1"]), "class:loopback")
    assert.strictEqual(rule(network, "0.0.0.0", ["0.0.0.0"]), "class:unspecified")
    assert.strictEqual(rule(network, "intranet.test", ["::ffff:10.0.0.1"]), "class:private")
    assert.strictEqual(rule(network, "nat64.test", ["64:ff9b::c0a8:1"]), "class:private")
    assert.strictEqual(rule(network, "cgnat.test", ["100.64.1.1"]), "class:cgnat")
    assert.strictEqual(rule(network, "ula.test", ["fd12::1"]), "class:unique-local")
    assert.strictEqual(rule(network, "fe80::1", ["fe80::1"]), "class:link-local")
    assert.strictEqual(rule(network, "bench.test", ["198.18.0.1"]), "class:benchmarking")
    assert.strictEqual(
      rule(network, "example.com", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]),
      "allowed"
    )
    // One bad address among several is enough: the proxy would connect only to checked ones, but it refuses.
    assert.strictEqual(rule(network, "mixed.test", ["93.184.215.14", "10.0.0.1"]), "class:private")
  })

  it("a deny entry wins over an allow entry and over the class defaults", () => {
    const policy = Policy.make(
      { allow: ["10.1.2.3", "*.corp.example"], deny: ["10.0.0.0/8", "127.0.0.2"] },
      { privateNetworks: true }
    )
    assert.strictEqual(rule(policy, "10.1.2.3", ["10.1.2.3"]), "deny:10.0.0.0/8")
    assert.strictEqual(rule(policy, "app.corp.example", ["10.9.9.9"]), "deny:10.0.0.0/8")
    assert.strictEqual(rule(policy, "127.0.0.2", ["127.0.0.2"]), "deny:127.0.0.2")
    assert.strictEqual(rule(policy, "rebind.test", ["::ffff:127.0.0.2"]), "deny:127.0.0.2")
    assert.strictEqual(rule(policy, "127.0.0.1", ["127.0.0.1"]), "allowed")
  })

  it("the unspecified address is the local machine for every deny entry, in every spelling", () => {
    const policy = Policy.make({ deny: ["127.0.0.1/32", "127.0.0.0/8:9222", "[::1]:9222"] }, { privateNetworks: true })
    const spellings = [
      "0.0.0.0",
      "0",
      "0x0",
      "00",
      "0.0",
      "0.0.0",
      "0.0.0.0.",
      "0.1.2.3",
      "::",
      "[::]",
      "0:0:0:0:0:0:0:0",
      "[::ffff:0.0.0.0]",
      "::ffff:0:0",
      "::ffff:0:0.0.0.0",
      "64:ff9b::0.0.0.0"
    ]
    for (const host of spellings) {
      const address = Address.format(Address.parse(host)!)
      assert.notStrictEqual(rule(policy, host, [address]), "allowed", host)
      // The browser's own DevTools port and the service's own port are refused through it as through 127.0.0.1.
      const other = Policy.make({ deny: ["127.0.0.0/8:9222", "[::1]:9222"] }, { privateNetworks: true })
      assert.match(rule(other, host, [address], { port: 9222 }), /^deny:/, host)
      assert.strictEqual(rule(other, host, [address], { port: 9223 }), "allowed", host)
    }
    // A name that resolves to it is the local machine too.
    assert.strictEqual(rule(policy, "zero.test", ["0.0.0.0"]), "deny:127.0.0.1/32")
    assert.strictEqual(rule(policy, "10.0.0.1", ["10.0.0.1"]), "allowed")
  })

  it("an allow entry wins over the class defaults, for every address it must cover", () => {
    const policy = Policy.make(
      {
        allow: [
          "*.corp.example",
          "172.16.0.0/12",
          "127.0.0.1:3000",
          "https://intranet.example",
          "metadata.google.internal"
        ]
      },
      { privateNetworks: false }
    )
    assert.strictEqual(rule(policy, "app.corp.example", ["10.0.0.5"]), "allowed")
    assert.strictEqual(rule(policy, "a.b.corp.example", ["10.0.0.5"]), "allowed")
    assert.strictEqual(rule(policy, "corp.example", ["10.0.0.5"]), "class:private")
    assert.strictEqual(rule(policy, "evilcorp.example", ["10.0.0.5"]), "class:private")
    assert.strictEqual(rule(policy, "db.test", ["172.20.0.2"]), "allowed")
    assert.strictEqual(rule(policy, "db.test", ["172.20.0.2", "10.0.0.1"]), "class:private")
    assert.strictEqual(rule(policy, "127.0.0.1", ["127.0.0.1"], { port: 3000 }), "allowed")
    assert.strictEqual(rule(policy, "127.0.0.1", ["127.0.0.1"], { port: 3001 }), "class:loopback")
    assert.strictEqual(rule(policy, "intranet.example", ["10.0.0.7"], { scheme: "https", port: 443 }), "allowed")
    assert.strictEqual(rule(policy, "intranet.example", ["10.0.0.7"], { scheme: "http", port: 80 }), "class:private")
    // A tunnel's scheme is unknown: host and port decide.
    const tunnel = { host: "intranet.example", port: 443, kind: "document" } as const
    assert.isTrue(Policy.decide(policy, tunnel, addresses("10.0.0.7")).allowed)
    // Allowed by name, a metadata name passes its name check, but its address yields only to an allowed network.
    assert.strictEqual(rule(policy, "metadata.google.internal", ["169.254.169.254"]), "class:metadata")
    const imds = Policy.make({ allow: ["169.254.169.254"] }, { privateNetworks: false })
    assert.strictEqual(rule(imds, "169.254.169.254", ["169.254.169.254"]), "allowed")
  })

  it("refuses schemes it does not list", () => {
    assert.strictEqual(rule(stdio, "", [], { scheme: "file" }), "scheme:file")
    assert.strictEqual(rule(stdio, "example.com", ["93.184.215.14"], { scheme: "ftp" }), "scheme:ftp")
    assert.strictEqual(rule(stdio, "example.com", ["93.184.215.14"], { scheme: "wss" }), "allowed")
  })

  it("with subresources off, a known subresource passes the local classes but never metadata or the deny list", () => {
    const policy = Policy.make({ subresources: false, deny: ["10.0.0.9"] }, { privateNetworks: false })
    const sub = { kind: "subresource" } as const
    assert.strictEqual(rule(policy, "127.0.0.1", ["127.0.0.1"], sub), "allowed")
    assert.strictEqual(rule(policy, "127.0.0.1", ["127.0.0.1"]), "class:loopback")
    assert.strictEqual(rule(policy, "169.254.169.254", ["169.254.169.254"], sub), "class:metadata")
    assert.strictEqual(rule(policy, "10.0.0.9", ["10.0.0.9"], sub), "deny:10.0.0.9")
    assert.strictEqual(rule(network, "127.0.0.1", ["127.0.0.1"], sub), "class:loopback")
  })

  it("parses networks, addresses with ports, host patterns and origins, and refuses the rest", () => {
    assert.deepStrictEqual(Policy.parseEntry("*.corp.example:8443"), {
      kind: "host",
      source: "*.corp.example:8443",
      pattern: "*.corp.example",
      port: 8443
    })
    assert.deepStrictEqual(Policy.parseEntry("https://App.Example"), {
      kind: "host",
      source: "https://App.Example",
      pattern: "app.example",
      scheme: "https",
      port: 443
    })
    assert.strictEqual(Policy.parseEntry("[::1]:3000")?.kind, "network")
    assert.strictEqual(Policy.parseEntry("[::1]:3000")?.port, 3000)
    assert.strictEqual(Policy.parseEntry("fd00::/8")?.kind, "network")
    // A network with a port: the service's own port on every loopback address.
    assert.strictEqual(Policy.parseEntry("127.0.0.0/8:8931")?.port, 8931)
    assert.strictEqual(Policy.parseEntry("[::1/128]:8931")?.kind, "network")
    const own = Policy.make({ deny: ["127.0.0.0/8:8931"] }, { privateNetworks: true })
    assert.strictEqual(rule(own, "localhost", ["127.0.0.1"], { port: 8931 }), "deny:127.0.0.0/8:8931")
    assert.strictEqual(rule(own, "127.0.0.9", ["127.0.0.9"], { port: 8931 }), "deny:127.0.0.0/8:8931")
    assert.strictEqual(rule(own, "127.0.0.1", ["127.0.0.1"], { port: 8932 }), "allowed")
    assert.strictEqual(Policy.parseEntry("http://[::1]:8080")?.port, 8080)
    for (const bad of ["", "10/8", "http://", "a b", "*.", "corp.*", "host:99999", "http://x:0", "*.x/8"])
      assert.isUndefined(Policy.parseEntry(bad), bad)
  })

  it("the service configuration reads egress from the file keys and the environment, naming a bad entry", () =>
    Effect.gen(function* () {
      const fromEnv = yield* Config.resolve({
        env: {
          SWITCHYARD_EGRESS_ALLOW: "10.0.0.0/8, *.corp.example",
          SWITCHYARD_EGRESS_DENY: "127.0.0.2",
          SWITCHYARD_EGRESS_SUBRESOURCES: "off"
        }
      })
      assert.deepStrictEqual(fromEnv.egress, {
        allow: ["10.0.0.0/8", "*.corp.example"],
        deny: ["127.0.0.2"],
        subresources: false
      })
      const bad = yield* Effect.flip(Config.resolve({ env: { SWITCHYARD_EGRESS_DENY: "127.0.0.2,10/8" } }))
      assert.include(bad.message, '"10/8"')
      const flags = yield* Config.resolve({
        env: { SWITCHYARD_FALLBACK: "on" },
        flags: { egress: { deny: "metadata.internal" } }
      })
      assert.deepStrictEqual(flags.egress, { allow: [], deny: ["metadata.internal"], subresources: true })
      assert.isTrue(Schema.is(Policy.EgressConfig)({ allow: ["https://intranet.example:8443"] }))
    }).pipe(Effect.runPromise))
})
