/**
 * Which URLs `browser.navigate` may open: http and https by default (file:, javascript:, data:, chrome: only when
 * configured), and optionally no loopback or private-range hosts, checked after DNS so a name cannot smuggle one in.
 */
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import { Effect } from "effect"
import { InvalidInput } from "../Errors/Page.ts"
import { PolicyRejected } from "../Errors/Service.ts"

export interface UrlPolicy {
  readonly schemes: ReadonlyArray<string>
  readonly privateNetworks: boolean
}

export const defaultUrlPolicy: UrlPolicy = { schemes: ["http", "https"], privateNetworks: true }

const privateV4 = (ip: string) => {
  const [a = 0, b = 0] = ip.split(".").map(Number)
  return (
    a === 10 ||
    a === 127 ||
    a === 0 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127)
  )
}

const privateV6 = (ip: string) => {
  const v = ip.toLowerCase()
  if (v === "::1" || v === "::") return true
  if (v.startsWith("::ffff:")) return privateV4(v.slice(7))
  return /^f[cd]/.test(v) || /^fe[89ab]/.test(v)
}

export const isPrivateAddress = (ip: string) =>
  isIP(ip) === 4 ? privateV4(ip) : isIP(ip) === 6 ? privateV6(ip) : false

const localName = (host: string) =>
  host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || host.endsWith(".internal")

export const check = (url: string, policy: UrlPolicy) =>
  Effect.gen(function* () {
    if (!URL.canParse(url)) {
      return yield* new InvalidInput({
        field: "url",
        action: "browser.navigate",
        message: `"${url.slice(0, 200)}" is not an absolute URL (include the scheme, e.g. https://)`
      })
    }
    const parsed = new URL(url)
    const scheme = parsed.protocol.replace(/:$/, "").toLowerCase()
    if (!policy.schemes.includes(scheme)) {
      return yield* new PolicyRejected({
        field: "url",
        action: "browser.navigate",
        message: `${scheme}: URLs are not allowed here (allowed: ${policy.schemes.join(", ")}; configure urls.schemes to change)`
      })
    }
    if (policy.privateNetworks || !["http", "https", "ws", "wss"].includes(scheme)) return
    const host = parsed.hostname.replace(/^\[|\]$/g, "").toLowerCase()
    const addresses = isIP(host)
      ? [host]
      : localName(host)
        ? ["127.0.0.1"]
        : yield* Effect.tryPromise(() => lookup(host, { all: true })).pipe(
            Effect.map((found) => found.map((a) => a.address)),
            // A name that does not resolve cannot reach a private host either: the browser will report it.
            Effect.orElseSucceed(() => [] as Array<string>)
          )
    const blocked = addresses.find(isPrivateAddress)
    if (blocked !== undefined) {
      return yield* new PolicyRejected({
        field: "url",
        action: "browser.navigate",
        message: `${parsed.host} is a loopback or private-network address (${blocked}), which this service does not open (configure urls.privateNetworks to allow)`
      })
    }
  })
