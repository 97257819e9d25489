/**
 * The URL a tool opens (`browser.navigate`), checked before the browser sees it, against the session's egress policy
 * (Egress/Policy.ts) — the same decision the egress proxy makes for every request the browser sends, so a refused
 * URL is answered at once and names the same rule. Schemes beyond http and https (file:, data:, …) only when
 * configured; a name is resolved here for the early answer, while the proxy checks again at connect time.
 */
import { lookup } from "node:dns/promises"
import { Effect } from "effect"
import * as Address from "../Egress/Address.ts"
import * as Egress from "../Egress/Policy.ts"
import { InvalidInput } from "../Errors/Page.ts"
import { PolicyRejected } from "../Errors/Service.ts"

/** What `browser.navigate` opens by default. */
export const defaultSchemes: ReadonlyArray<string> = ["http", "https"]

/** The policy of a session that has no egress configuration: the stdio defaults. */
export const defaultPolicy = Egress.make({}, { privateNetworks: true, schemes: defaultSchemes })

const networkSchemes: Record<string, number> = { http: 80, ws: 80, https: 443, wss: 443 }

/** Names to addresses, as the egress proxy resolves them; default the system's resolver. */
export type Resolver = (host: string) => Promise<ReadonlyArray<string>>

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)

const addressesOf = (host: string, resolve: Resolver) =>
  Effect.gen(function* () {
    const literal = Address.parse(host)
    if (literal !== undefined) return [literal]
    const texts = Address.isLoopbackName(host)
      ? ["127.0.0.1", "::1"]
      : yield* Effect.tryPromise(() => resolve(host)).pipe(
          // A name that does not resolve reaches nothing: the browser will report it.
          Effect.orElseSucceed(() => [] as Array<string>)
        )
    return texts.flatMap((t) => {
      const a = Address.parse(t)
      return a === undefined ? [] : [a]
    })
  })

export const check = (url: string, policy: Egress.Policy, resolve: Resolver = systemResolver) =>
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
    const defaultPort = networkSchemes[scheme]
    const target: Egress.Target = {
      scheme,
      host: parsed.hostname
        .replace(/^\[|\]$/g, "")
        .replace(/\.$/, "")
        .toLowerCase(),
      port: Number(parsed.port || defaultPort || 0),
      kind: "document"
    }
    const refuse = (decision: Egress.Decision) =>
      decision.allowed
        ? Effect.void
        : Effect.fail(
            new PolicyRejected({
              field: "url",
              action: "browser.navigate",
              message:
                decision.rule.startsWith("scheme:") && policy.schemes.length > 0
                  ? `${scheme}: URLs are not allowed here (rule ${decision.rule}; allowed: ${policy.schemes.join(", ")}; configure urls.schemes to change)`
                  : `${parsed.host} was blocked by the egress policy (rule ${decision.rule}): ${decision.reason}`
            })
          )
    yield* refuse(Egress.decide(policy, target, []))
    // Only network schemes reach an address; the others were allowed by name.
    if (defaultPort === undefined || target.host === "") return
    const addresses = yield* addressesOf(target.host, resolve)
    if (addresses.length === 0) return
    yield* refuse(Egress.decide(policy, target, addresses))
  })
