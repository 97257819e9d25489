/**
 * The address classifier over a table of spellings (no traffic): every way a URL, a resolver or a config entry can
 * write a loopback, private or metadata address lands in the class the network would deliver it to.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Address from "../../src/Egress/Address.ts"

/** [as written, class, canonical text] */
const spellings: ReadonlyArray<readonly [string, Address.AddressClass, string]> = [
  ["127.0.0.1", "loopback", "127.0.0.1"],
  ["127.1", "loopback", "127.0.0.1"],
  ["0x7f.1", "loopback", "127.0.0.1"],
  ["2130706433", "loopback", "127.0.0.1"],
  ["0177.0.0.1", "loopback", "127.0.0.1"],
  ["0x7f000001", "loopback", "127.0.0.1"],
  ["017700000001", "loopback", "127.0.0.1"],
  ["0x7F.0.0.1", "loopback", "127.0.0.1"],
  ["127.0.0.1.", "loopback", "127.0.0.1"],
  ["127.255.255.254", "loopback", "127.255.255.254"],
  ["0", "unspecified", "0.0.0.0"],
  ["0.0.0.0", "unspecified", "0.0.0.0"],
  ["10.1.2.3", "private", "10.1.2.3"],
  ["012.1.2.3", "private", "10.1.2.3"],
  ["172.16.0.1", "private", "172.16.0.1"],
  ["172.31.255.255", "private", "172.31.255.255"],
  ["172.32.0.1", "public", "172.32.0.1"],
  ["192.168.1.1", "private", "192.168.1.1"],
  ["3232235777", "private", "192.168.1.1"],
  ["169.254.169.254", "metadata", "169.254.169.254"],
  ["0xa9fea9fe", "metadata", "169.254.169.254"],
  ["2852039166", "metadata", "169.254.169.254"],
  ["0251.0376.0251.0376", "metadata", "169.254.169.254"],
  ["169.254.43518", "metadata", "169.254.169.254"],
  ["0xa9.0xfe.0xa9.0xfe", "metadata", "169.254.169.254"],
  ["169.254.170.2", "metadata", "169.254.170.2"],
  ["100.100.100.200", "metadata", "100.100.100.200"],
  ["168.63.129.16", "metadata", "168.63.129.16"],
  ["169.254.1.1", "link-local", "169.254.1.1"],
  ["100.64.0.1", "cgnat", "100.64.0.1"],
  ["100.127.255.255", "cgnat", "100.127.255.255"],
  ["100.128.0.1", "public", "100.128.0.1"],
  ["198.18.0.1", "benchmarking", "198.18.0.1"],
  ["198.19.255.255", "benchmarking", "198.19.255.255"],
  ["192.0.2.1", "documentation", "192.0.2.1"],
  ["198.51.100.7", "documentation", "198.51.100.7"],
  ["203.0.113.9", "documentation", "203.0.113.9"],
  ["255.255.255.255", "broadcast", "255.255.255.255"],
  ["224.0.0.1", "multicast", "224.0.0.1"],
  ["239.255.255.250", "multicast", "239.255.255.250"],
  ["240.0.0.1", "reserved", "240.0.0.1"],
  ["192.0.0.8", "reserved", "192.0.0.8"],
  ["8.8.8.8", "public", "8.8.8.8"],
  ["134744072", "public", "8.8.8.8"],
  ["::1", "loopback", "::1"],
  ["[::1]", "loopback", "::1"],
  ["0:0:0:0:0:0:0:1", "loopback", "::1"],
  ["::", "unspecified", "::"],
  ["::ffff:127.0.0.1", "loopback", "::ffff:7f00:1"],
  ["[::ffff:127.0.0.1]", "loopback", "::ffff:7f00:1"],
  ["::ffff:7f00:1", "loopback", "::ffff:7f00:1"],
  ["[::ffff:169.254.169.254]", "metadata", "::ffff:a9fe:a9fe"],
  ["::ffff:a9fe:a9fe", "metadata", "::ffff:a9fe:a9fe"],
  ["::ffff:0:10.0.0.1", "private", "::ffff:0:a00:1"],
  ["::127.0.0.1", "loopback", "::7f00:1"],
  ["::ffff:192.168.0.1", "private", "::ffff:c0a8:1"],
  ["64:ff9b::a9fe:a9fe", "metadata", "64:ff9b::a9fe:a9fe"],
  ["64:ff9b::127.0.0.1", "loopback", "64:ff9b::7f00:1"],
  ["64:ff9b:1::a00:1", "private", "64:ff9b:1::a00:1"],
  ["64:ff9b::808:808", "public", "64:ff9b::808:808"],
  ["2002:a9fe:a9fe::", "metadata", "2002:a9fe:a9fe::"],
  ["2002:7f00:1::1", "loopback", "2002:7f00:1::1"],
  ["2001:0:0:0:0:0:80ff:fffe", "loopback", "2001::80ff:fffe"],
  ["fc00::1", "unique-local", "fc00::1"],
  ["fd12:3456::1", "unique-local", "fd12:3456::1"],
  ["fd00:ec2::254", "metadata", "fd00:ec2::254"],
  ["fd20:ce::254", "metadata", "fd20:ce::254"],
  ["fe80::1", "link-local", "fe80::1"],
  ["fe80::1%eth0", "link-local", "fe80::1"],
  ["FE80::ABCD", "link-local", "fe80::abcd"],
  ["fec0::1", "private", "fec0::1"],
  ["ff02::1", "multicast", "ff02::1"],
  ["2001:db8::1", "documentation", "2001:db8::1"],
  ["2001:db8:0:0:1:0:0:1", "documentation", "2001:db8::1:0:0:1"],
  ["100::1", "reserved", "100::1"],
  ["2606:4700:4700::1111", "public", "2606:4700:4700::1111"]
]

const notAddresses = [
  "example.com",
  "localhost",
  "metadata.google.internal",
  "1.2.3.4.5",
  "256.1.1.1",
  "1.256.1.1",
  "4294967296",
  "08.1.1.1",
  "0x1g.1.1.1",
  "1..1",
  "[127.0.0.1]",
  "::ffff:1.2.3.256",
  "1::2::3",
  "12345::",
  "1.2.3.4::",
  "1:2:3:4:5:6:7:8:9",
  "1:2:3:4:5:6:7",
  "[::1",
  ""
]

describe("Address", () => {
  it.each(spellings)("%s is %s (%s)", (text, klass, canonical) => {
    const address = Address.parse(text)
    assert.isDefined(address)
    assert.strictEqual(Address.classify(address!), klass)
    assert.strictEqual(Address.format(address!), canonical)
  })

  it.each(notAddresses)("%j is not an address", (text) => {
    assert.isUndefined(Address.parse(text))
  })

  it("reads IPv4 spellings as the browser's URL parser does", () => {
    for (const [text, , canonical] of spellings.filter(([t]) => !t.includes(":"))) {
      assert.strictEqual(new URL(`http://${text}/`).hostname, canonical, text)
    }
  })

  it("matches networks, and an IPv4 network covers the IPv4 an IPv6 address wraps", () => {
    const loopback = Address.parseCidr("127.0.0.0/8")!
    const one = Address.parseCidr("127.0.0.2")!
    const ula = Address.parseCidr("fc00::/7")!
    const at = (text: string) => Address.parse(text)!
    assert.isTrue(Address.contains(loopback, at("127.9.9.9")))
    assert.isTrue(Address.contains(loopback, at("::ffff:127.0.0.9")))
    assert.isTrue(Address.contains(one, at("0x7f.0.0.2")))
    assert.isTrue(Address.contains(one, at("64:ff9b::7f00:2")))
    assert.isFalse(Address.contains(one, at("127.0.0.1")))
    assert.isTrue(Address.contains(ula, at("fdff::1")))
    assert.isFalse(Address.contains(ula, at("fe80::1")))
    assert.deepStrictEqual(Address.parseCidr("10.0.0.0/8"), Address.parseCidr("10.9.9.9/8"))
    assert.deepStrictEqual(Address.parseCidr("[::1]"), { version: 6, base: 1n, prefix: 128 })
  })

  it("refuses networks that are ambiguous or malformed", () => {
    for (const text of ["10/8", "0x7f.1/32", "10.0.0.0/33", "::/129", "10.0.0.0/8/8", "example.com/8", "10.0.0.0/x"])
      assert.isUndefined(Address.parseCidr(text), text)
  })

  it("loopback is 127.0.0.0/8, ::1 and localhost, in every spelling, for every rule", () => {
    for (const host of ["127.0.0.1", "127.0.0.3", "127.1", "2130706433", "::1", "[::1]", "::ffff:127.0.0.2"])
      assert.isTrue(Address.isLoopbackHost(host), host)
    for (const host of ["localhost", "LOCALHOST", "localhost.", "app.localhost"])
      assert.isTrue(Address.isLoopbackHost(host), host)
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "localhost.example", "mylocalhost"])
      assert.isFalse(Address.isLoopbackHost(host), host)
  })
})
