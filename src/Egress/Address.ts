/**
 * IP addresses as the network sees them: every spelling a URL, a resolver or a config entry may use (IPv4 dotted,
 * decimal, octal, hex and short forms; IPv6 with zone, embedded IPv4 and brackets) parsed to one number, then
 * classified (loopback, private, link-local, cloud metadata, CGNAT, …), with IPv4 hidden inside IPv6 unwrapped.
 */

export interface Address {
  readonly version: 4 | 6
  /** The address as an unsigned number: 32 bits for IPv4, 128 for IPv6. */
  readonly value: bigint
}

/** Why an address is special; `public` is everything else. */
export type AddressClass =
  | "metadata"
  | "loopback"
  | "unspecified"
  | "private"
  | "unique-local"
  | "link-local"
  | "cgnat"
  | "benchmarking"
  | "documentation"
  | "reserved"
  | "broadcast"
  | "multicast"
  | "public"

/** One IPv4 part as `inet_aton` reads it: `0x` hex, leading-zero octal, else decimal. */
const part = (text: string): bigint | undefined => {
  if (/^0x[0-9a-f]*$/i.test(text)) return text.length === 2 ? 0n : BigInt(text)
  if (/^0[0-7]*$/.test(text)) return BigInt(`0o${text.slice(1) || "0"}`)
  if (/^[1-9][0-9]*$/.test(text)) return BigInt(text)
  return undefined
}

/**
 * IPv4 the way browsers and `inet_aton` accept it: one to four parts, each decimal, octal or hex, the last filling
 * the remaining bytes (`127.1`, `0x7f.1`, `2130706433`, `0177.0.0.1`), with one trailing dot allowed.
 */
export const parseIPv4 = (text: string): bigint | undefined => {
  const parts = (text.endsWith(".") ? text.slice(0, -1) : text).split(".")
  if (parts.length > 4 || parts.some((p) => p === "")) return undefined
  const values = parts.map(part)
  if (values.some((v) => v === undefined)) return undefined
  const numbers = values as Array<bigint>
  const last = numbers.pop() ?? 0n
  if (numbers.some((v) => v > 255n) || last >= 1n << BigInt(8 * (4 - numbers.length))) return undefined
  return numbers.reduce((acc, v, i) => acc | (v << BigInt(24 - 8 * i)), last)
}

const dottedQuad = (text: string): bigint | undefined => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (m === null) return undefined
  const bytes = m.slice(1).map(Number)
  return bytes.every((b) => b <= 255) ? bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n) : undefined
}

/** IPv6 text (RFC 4291 forms, `::` compression, a dotted IPv4 tail, a `%zone` suffix), without brackets. */
export const parseIPv6 = (text: string): bigint | undefined => {
  const bare = text.replace(/%[^%]*$/, "")
  const halves = bare.split("::")
  // A dotted IPv4 part may only end the address.
  if (halves.length > 2 || (halves.length === 2 && (halves[0] ?? "").includes("."))) return undefined
  const groups = (half: string): Array<bigint> | undefined => {
    if (half === "") return []
    const out: Array<bigint> = []
    const pieces = half.split(":")
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = dottedQuad(piece)
        if (v4 === undefined) return undefined
        out.push(v4 >> 16n, v4 & 0xffffn)
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) out.push(BigInt(`0x${piece}`))
      else return undefined
    }
    return out
  }
  const head = groups(halves[0] ?? "")
  const tail = halves.length === 2 ? groups(halves[1] ?? "") : []
  if (head === undefined || tail === undefined) return undefined
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  const all = [...head, ...Array<bigint>(Math.max(0, missing)).fill(0n), ...tail]
  return all.reduce((acc, g) => (acc << 16n) | g, 0n)
}

/** A host as written in a URL or a config entry (brackets allowed), or undefined when it is a name. */
export const parse = (host: string): Address | undefined => {
  const text = host.trim().toLowerCase()
  if (text.startsWith("[") !== text.endsWith("]")) return undefined
  const inner = text.startsWith("[") ? text.slice(1, -1) : text
  if (inner.includes(":")) {
    const value = parseIPv6(inner)
    return value === undefined ? undefined : { version: 6, value }
  }
  if (text.startsWith("[")) return undefined
  const value = parseIPv4(inner)
  return value === undefined ? undefined : { version: 4, value }
}

const v4Text = (value: bigint) => [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join(".")

/** The canonical text (dotted IPv4; RFC 5952 IPv6 with the longest zero run compressed). */
export const format = (address: Address): string => {
  if (address.version === 4) return v4Text(address.value)
  const groups = Array.from({ length: 8 }, (_, i) => (address.value >> BigInt(112 - 16 * i)) & 0xffffn)
  let best = { at: -1, length: 1 }
  for (let i = 0; i < 8; ) {
    let j = i
    while (j < 8 && groups[j] === 0n) j++
    if (j - i > best.length) best = { at: i, length: j - i }
    i = j === i ? i + 1 : j
  }
  const hex = groups.map((g) => g.toString(16))
  if (best.at < 0) return hex.join(":")
  return `${hex.slice(0, best.at).join(":")}::${hex.slice(best.at + best.length).join(":")}`
}

/** A network: its base address and prefix length. */
export interface Cidr {
  readonly version: 4 | 6
  readonly base: bigint
  readonly prefix: number
}

const width = (version: 4 | 6) => (version === 4 ? 32 : 128)
const mask = (version: 4 | 6, prefix: number) =>
  ((1n << BigInt(width(version))) - 1n) ^ ((1n << BigInt(width(version) - prefix)) - 1n)

/**
 * `10.0.0.0/8`, `fd00::/8`, or one address (`169.254.169.254`, `[::1]`) as a full-length prefix. IPv4 must be
 * dotted-quad here: in a configured network `10/8` would otherwise mean 0.0.0.10.
 */
export const parseCidr = (text: string): Cidr | undefined => {
  const [host = "", prefixText, extra] = text.trim().toLowerCase().split("/")
  if (extra !== undefined) return undefined
  const v4 = dottedQuad(host)
  const address: Address | undefined =
    v4 !== undefined ? { version: 4, value: v4 } : host.includes(":") ? parse(host) : undefined
  if (address === undefined) return undefined
  const prefix =
    prefixText === undefined ? width(address.version) : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1
  if (prefix < 0 || prefix > width(address.version)) return undefined
  return { version: address.version, base: address.value & mask(address.version, prefix), prefix }
}

const cidr = (text: string): Cidr => {
  const parsed = parseCidr(text)
  if (parsed === undefined) throw new Error(`bad built-in network ${text}`)
  return parsed
}

const within = (network: Cidr, address: Address) =>
  network.version === address.version && (address.value & mask(network.version, network.prefix)) === network.base

/**
 * The IPv4 address an IPv6 address carries, when the network would deliver it there or the address is a known
 * wrapper of one: mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`, compatible `::a.b.c.d`, NAT64
 * `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002:AABB:CCDD::/48`, and Teredo's client (`2001::/32`, inverted).
 */
export const embeddedIPv4 = (address: Address): bigint | undefined => {
  if (address.version === 4) return undefined
  const v = address.value
  const low = v & 0xffffffffn
  if (v >> 32n === 0xffffn || v >> 32n === 0xffff0000n) return low
  if (v >> 32n === 0n && v > 1n) return low
  if (v >> 32n === 0x0064ff9b0000000000000000n) return low
  if (v >> 80n === 0x0064ff9b0001n) return low
  if (v >> 112n === 0x2002n) return (v >> 80n) & 0xffffffffn
  if (v >> 96n === 0x20010000n) return low ^ 0xffffffffn
  return undefined
}

const table = (version: 4 | 6, rows: ReadonlyArray<readonly [AddressClass, ReadonlyArray<string>]>) =>
  rows
    .flatMap(([klass, networks]) => networks.map((n) => [klass, cidr(n)] as const))
    .filter(([, n]) => n.version === version)

/** First match wins: the metadata endpoints sit inside link-local, CGNAT, ULA and public space. */
const v4Table = table(4, [
  [
    "metadata",
    // AWS/GCP/Azure/OCI/DigitalOcean IMDS, AWS ECS task and EKS pod identity, Alibaba, Azure wireserver, old OCI.
    ["169.254.169.254", "169.254.170.2", "169.254.170.23", "100.100.100.200", "168.63.129.16", "192.0.0.192"]
  ],
  ["unspecified", ["0.0.0.0/8"]],
  ["loopback", ["127.0.0.0/8"]],
  ["private", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]],
  ["link-local", ["169.254.0.0/16"]],
  ["cgnat", ["100.64.0.0/10"]],
  ["benchmarking", ["198.18.0.0/15"]],
  ["documentation", ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]],
  ["broadcast", ["255.255.255.255"]],
  ["multicast", ["224.0.0.0/4"]],
  ["reserved", ["192.0.0.0/24", "192.88.99.0/24", "240.0.0.0/4"]]
])

const v6Table = table(6, [
  // AWS IMDS and EKS pod identity over IPv6, GCE metadata over IPv6.
  ["metadata", ["fd00:ec2::254", "fd00:ec2::23", "fd20:ce::254"]],
  ["unspecified", ["::"]],
  ["loopback", ["::1"]],
  ["unique-local", ["fc00::/7"]],
  ["link-local", ["fe80::/10"]],
  ["private", ["fec0::/10"]],
  ["multicast", ["ff00::/8"]],
  ["documentation", ["2001:db8::/32", "3fff::/20"]],
  ["benchmarking", ["2001:2::/48"]],
  ["reserved", ["::/8", "100::/64", "2001::/23"]]
])

const lookup = (rows: ReadonlyArray<readonly [AddressClass, Cidr]>, address: Address): AddressClass =>
  rows.find(([, network]) => within(network, address))?.[0] ?? "public"

/** What an address is, judged by where traffic to it really goes (an IPv4 wrapped in IPv6 by its IPv4 class). */
export const classify = (address: Address): AddressClass => {
  if (address.version === 4) return lookup(v4Table, address)
  const own = lookup(v6Table, address)
  if (own === "metadata" || own === "loopback" || own === "unspecified") return own
  const inner = embeddedIPv4(address)
  return inner === undefined ? own : lookup(v4Table, { version: 4, value: inner })
}

/** Whether `network` holds the address, or the IPv4 address it wraps (so `127.0.0.0/8` covers `::ffff:127.0.0.1`). */
export const contains = (network: Cidr, address: Address): boolean => {
  if (within(network, address)) return true
  const inner = embeddedIPv4(address)
  return inner !== undefined && within(network, { version: 4, value: inner })
}

/** `localhost` and names under it: loopback by definition (RFC 6761), never sent to a resolver. */
export const isLoopbackName = (host: string) => {
  const name = host.trim().toLowerCase().replace(/\.$/, "")
  return name === "localhost" || name.endsWith(".localhost")
}

/**
 * Loopback, the one definition every rule uses (the HTTP token rule, the egress defaults, the docs): an address in
 * 127.0.0.0/8 or ::1 in any spelling (IPv4 loopback carried in IPv6 too), or `localhost` and names under it.
 */
export const isLoopbackHost = (host: string) => {
  if (isLoopbackName(host)) return true
  const address = parse(host)
  return address !== undefined && classify(address) === "loopback"
}

/**
 * Where traffic to an address really goes on this machine: the unspecified address (`0.0.0.0`, `::`, in every
 * spelling, also inside IPv6) is delivered to the local machine, so rules see it as both loopback addresses.
 */
export const destinations = (address: Address): ReadonlyArray<Address> =>
  classify(address) === "unspecified" ? [address, ...localMachine] : [address]

const localMachine: ReadonlyArray<Address> = [
  { version: 4, value: 0x7f000001n },
  { version: 6, value: 1n }
]
