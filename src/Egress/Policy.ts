/**
 * The egress policy: which schemes, hosts and addresses the browser may reach, as one decision function that names
 * the rule behind every refusal. A deny entry wins over an allow entry, and an allow entry over the address classes
 * (a metadata address only yields to an allowed network, never to a host name, which could be made to resolve to it).
 */
import { Schema } from "effect"
import * as Address from "./Address.ts"

/** One configured entry: a network (CIDR or one address, optionally with a port) or a host pattern / origin. */
export type Entry =
  | { readonly kind: "network"; readonly source: string; readonly network: Address.Cidr; readonly port?: number }
  | {
      readonly kind: "host"
      readonly source: string
      readonly pattern: string
      readonly scheme?: string
      readonly port?: number
    }

const defaultPorts: Record<string, number> = { http: 80, ws: 80, https: 443, wss: 443 }
const hostPattern = /^(\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*)$/

const withPort = (entry: Entry, port: number | undefined): Entry => (port === undefined ? entry : { ...entry, port })

const hostEntry = (source: string, host: string, port?: number, scheme?: string): Entry | undefined => {
  const network = Address.parseCidr(host.replace(/^\[(.*)\]$/, "$1"))
  if (network !== undefined) return withPort({ kind: "network", source, network }, port)
  const pattern = host.replace(/\.$/, "")
  if (!hostPattern.test(pattern) || host === "*.") return undefined
  return withPort({ kind: "host", source, pattern, ...(scheme === undefined ? {} : { scheme }) }, port)
}

const portOf = (text: string | undefined) => {
  if (text === undefined) return undefined
  const port = Number(text)
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : Number.NaN
}

/**
 * `10.0.0.0/8`, `fd00::/8`, `169.254.169.254`, `[::1]:3000`, `127.0.0.1:8080`, `127.0.0.0/8:8931`, `[::1/128]:8931`,
 * `intranet.example`, `*.corp.example`, `*.corp.example:8443`, or an origin `https://app.corp.example[:port]`.
 */
export const parseEntry = (text: string): Entry | undefined => {
  const source = text.trim()
  const lower = source.toLowerCase()
  if (lower === "") return undefined
  const origin = /^([a-z][a-z0-9+.-]*):\/\/(\[[^\]]+\]|[^:/[\]]+)(?::(\d+))?\/?$/.exec(lower)
  const bracketed = /^(\[[^\]]+\])(?::(\d+))?$/.exec(lower)
  const hostPort = /^([^:[\]]+):(\d+)$/.exec(lower)
  const [host, portText, scheme] = origin
    ? [origin[2], origin[3], origin[1]]
    : bracketed
      ? [bracketed[1], bracketed[2], undefined]
      : hostPort
        ? [hostPort[1], hostPort[2], undefined]
        : [lower, undefined, undefined]
  const port = portOf(portText) ?? (scheme === undefined ? undefined : defaultPorts[scheme])
  if (host === undefined || Number.isNaN(port) || (origin && port === undefined)) return undefined
  return hostEntry(source, host, port, scheme)
}

/** One allow/deny entry, surrounding spaces ignored; an entry that is none of the forms is an error naming it. */
export const EntryText = Schema.Trim.check(
  Schema.makeFilter((text: string) =>
    parseEntry(text) === undefined
      ? `"${text}" is not a network (10.0.0.0/8), an address, a host pattern (*.corp.example) or an origin`
      : undefined
  )
)

/** The `egress` configuration keys (`SWITCHYARD_EGRESS_ALLOW` / `SWITCHYARD_EGRESS_DENY`, comma-separated). */
export const EgressConfig = Schema.Struct({
  /** Exceptions to the address classes refused by default (an intranet app, a metadata proxy you run). */
  allow: Schema.optional(Schema.Array(EntryText)),
  /** Always refused, whatever else says. */
  deny: Schema.optional(Schema.Array(EntryText)),
  /** Check requests for images, scripts and fetches like documents (default true); false lets a request known to
   * be a subresource pass the loopback/private classes, never metadata, the deny list or the schemes. */
  subresources: Schema.optional(Schema.Boolean)
})
export type EgressConfig = typeof EgressConfig.Type

/** A comma-separated list from the environment, as config entries. */
export const list = (text: string | undefined) =>
  text === undefined || text.trim() === ""
    ? undefined
    : text
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")

export interface Policy {
  /** Schemes a document may use; a tunnel (CONNECT) is https, wss or ws and is judged by host and port alone. */
  readonly schemes: ReadonlyArray<string>
  readonly allow: ReadonlyArray<Entry>
  readonly deny: ReadonlyArray<Entry>
  /** Loopback, private, link-local, CGNAT, ULA and benchmarking addresses: allowed on stdio, refused when the
   * service listens beyond loopback (the service passes which). */
  readonly privateNetworks: boolean
  readonly subresources: boolean
}

export const defaultSchemes = ["http", "https", "ws", "wss"]

export const make = (
  config: EgressConfig = {},
  options: { readonly privateNetworks: boolean; readonly schemes?: ReadonlyArray<string> }
): Policy => {
  const entries = (texts: ReadonlyArray<string> | undefined) =>
    (texts ?? []).flatMap((t) => {
      const entry = parseEntry(t)
      return entry === undefined ? [] : [entry]
    })
  return {
    schemes: options.schemes ?? defaultSchemes,
    allow: entries(config.allow),
    deny: entries(config.deny),
    privateNetworks: options.privateNetworks,
    subresources: config.subresources ?? true
  }
}

/** Where a request goes. `scheme` is absent for a tunnel, whose scheme the proxy cannot see. */
export interface Target {
  readonly scheme?: string
  /** Lower-case, without brackets or a trailing dot. */
  readonly host: string
  readonly port: number
  /** A subresource only when the browser said so (`Sec-Fetch-Dest`); anything else counts as a document. */
  readonly kind: "document" | "subresource"
}

export type Decision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly rule: string; readonly reason: string }

/** Names that reach a cloud metadata service whatever they resolve to. */
export const metadataNames = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal"
])

const always = new Set<Address.AddressClass>(["metadata", "documentation", "reserved", "broadcast", "multicast"])
const local = new Set<Address.AddressClass>([
  "loopback",
  "unspecified",
  "private",
  "unique-local",
  "link-local",
  "cgnat",
  "benchmarking"
])

const family = (scheme: string) => (scheme === "ws" ? "http" : scheme === "wss" ? "https" : scheme)

const nameMatches = (pattern: string, host: string) =>
  pattern === "*" || (pattern.startsWith("*.") ? host.endsWith(pattern.slice(1)) : host === pattern)

/** `every`: an allow entry must cover every address a name resolves to; a deny entry needs only one. */
const matches = (entry: Entry, target: Target, addresses: ReadonlyArray<Address.Address>, every: boolean) => {
  if (entry.port !== undefined && entry.port !== target.port) return false
  if (entry.kind === "host") {
    if (entry.scheme !== undefined && target.scheme !== undefined && family(entry.scheme) !== family(target.scheme))
      return false
    return nameMatches(entry.pattern, target.host)
  }
  // An address counts for every place its traffic goes: the unspecified address is the local machine.
  const reached = addresses.flatMap(Address.destinations)
  const inside = (a: Address.Address) => Address.contains(entry.network, a)
  return every ? reached.length > 0 && reached.every(inside) : reached.some(inside)
}

const refuse = (rule: string, reason: string): Decision => ({ allowed: false, rule, reason })

const howToAllow = "allow it with SWITCHYARD_EGRESS_ALLOW or egress.allow"

/**
 * The decision for a request to `target` whose host is (or resolves to) `addresses`. Called once before resolving
 * with no addresses (names and schemes only, so a refused name is never looked up), then with what the name
 * resolved to, which are the only addresses the proxy will connect to.
 */
export const decide = (policy: Policy, target: Target, addresses: ReadonlyArray<Address.Address>): Decision => {
  if (target.scheme !== undefined && !policy.schemes.includes(target.scheme))
    return refuse(`scheme:${target.scheme}`, `${target.scheme}: is not an allowed scheme`)
  const denied = policy.deny.find((e) => matches(e, target, addresses, false))
  if (denied !== undefined)
    return refuse(`deny:${denied.source}`, `${target.host} matches the deny entry ${denied.source}`)
  const allowed = policy.allow.find((e) => matches(e, target, addresses, true))
  if (allowed === undefined && metadataNames.has(target.host))
    return refuse("class:metadata", `${target.host} is a cloud metadata service (${howToAllow})`)
  const relaxed = allowed !== undefined || (target.kind === "subresource" && !policy.subresources)
  for (const address of addresses) {
    const klass = Address.classify(address)
    // Only a network entry reaches a metadata address: a name can be made to resolve to one.
    const refused =
      klass === "metadata"
        ? allowed?.kind !== "network"
        : !relaxed && (always.has(klass) || (local.has(klass) && !policy.privateNetworks))
    if (refused)
      return refuse(
        `class:${klass}`,
        `${target.host} is ${Address.format(address)}, a ${klass} address${klass === "metadata" ? " (cloud metadata service)" : ""} (${howToAllow})`
      )
  }
  return { allowed: true }
}
