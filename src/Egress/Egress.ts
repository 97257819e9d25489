/**
 * A session's egress enforcement as one service: the proxy its browser is launched through (with the flags that
 * force it), the guard for file:, and the record of refused requests that a call reads to answer `rejected_by_policy`
 * and of destinations the proxy could not reach, which a call reads to answer `navigation_failed` with the cause.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import type * as Connection from "../Cdp/Connection.ts"
import type { EngineKind } from "../EngineId.ts"
import type { CdpClosed } from "../Errors/Engine.ts"
import { NavigationFailed } from "../Errors/Page.ts"
import { PolicyRejected } from "../Errors/Service.ts"
import { defaultRedactor } from "../Logging/Redact.ts"
import * as Policy from "./Policy.ts"
import * as EgressProxy from "./Proxy.ts"
import * as Schemes from "./Schemes.ts"

export type Block = EgressProxy.Block
export type Unreached = EgressProxy.Unreached

export interface EgressOptions {
  readonly config?: Policy.EgressConfig
  /** Loopback and private ranges: true on stdio (local apps are common targets), false when the service listens
   * beyond loopback. Cloud metadata is refused either way. */
  readonly privateNetworks: boolean
  /** Schemes a document may use; default http, https, ws, wss. */
  readonly schemes?: ReadonlyArray<string>
  /** The resolver the proxy uses (tests inject one); default the system's. */
  readonly resolve?: EgressProxy.Resolver
  /** How many recent blocks are kept; default 200. */
  readonly keep?: number
}

export class Egress extends Context.Service<
  Egress,
  {
    readonly policy: Policy.Policy
    /** How the proxy resolves names: a check made before the browser goes resolves the same way. */
    readonly resolve: EgressProxy.Resolver
    /** `http://127.0.0.1:<port>` */
    readonly proxyUrl: string
    /** The Chromium flags that route the browser through the proxy (`LocalChromium`'s `egressProxy` adds them). */
    readonly chromiumArgs: ReadonlyArray<string>
    /** Recent blocks, oldest first. */
    readonly blocked: Effect.Effect<ReadonlyArray<Block>>
    /** A position in the record: `since(mark)` gives the blocks after it, e.g. those of one call. */
    readonly mark: Effect.Effect<number>
    readonly since: (mark: number) => Effect.Effect<ReadonlyArray<Block>>
    /** The destinations the proxy could not reach after `mark`, oldest first. */
    readonly unreachedSince: (mark: number) => Effect.Effect<ReadonlyArray<Unreached>>
    /** Refuses one more destination from now on (an entry as in `egress.deny`): the browser's own DevTools port. */
    readonly refuse: (entry: string) => Effect.Effect<void>
    /** Stops file: in the browser over a browser-level CDP connection, for the scope's life (see Schemes.ts). */
    readonly guardSchemes: (link: Connection.Connection) => Effect.Effect<void, CdpClosed, Scope.Scope>
  }
>()("switchyard/Egress") {
  static readonly layer = (options: EgressOptions) => Layer.effect(Egress, make(options))
}

export const make = Effect.fnUntraced(function* (options: EgressOptions) {
  const configured = Policy.make(options.config, {
    privateNetworks: options.privateNetworks,
    ...(options.schemes === undefined ? {} : { schemes: options.schemes })
  })
  // Entries learnt while the session runs; the proxy reads the deny list at each request.
  const learnt: Array<Policy.Entry> = []
  const policy: Policy.Policy = {
    ...configured,
    get deny() {
      return [...configured.deny, ...learnt]
    }
  }
  const keep = options.keep ?? 200
  let sequence = 0
  const kept: Array<{ readonly sequence: number; readonly block: Block }> = []
  const onBlock = (block: Block) => {
    kept.push({ sequence: ++sequence, block })
    if (kept.length > keep) kept.splice(0, kept.length - keep)
  }
  const missed: Array<{ readonly sequence: number; readonly unreached: Unreached }> = []
  const onUnreached = (unreached: Unreached) => {
    missed.push({ sequence: ++sequence, unreached })
    if (missed.length > keep) missed.splice(0, missed.length - keep)
  }
  const resolve = options.resolve ?? EgressProxy.systemResolver
  const proxy = yield* EgressProxy.start({ policy, onBlock, onUnreached, resolve })
  return Egress.of({
    policy,
    resolve,
    proxyUrl: proxy.url,
    chromiumArgs: EgressProxy.chromiumArgs(proxy.url),
    blocked: Effect.sync(() => kept.map((k) => k.block)),
    mark: Effect.sync(() => sequence),
    since: (mark) => Effect.sync(() => kept.filter((k) => k.sequence > mark).map((k) => k.block)),
    unreachedSince: (mark) => Effect.sync(() => missed.filter((m) => m.sequence > mark).map((m) => m.unreached)),
    refuse: (entry) =>
      Effect.sync(() => {
        const parsed = Policy.parseEntry(entry)
        if (parsed !== undefined && !learnt.some((e) => e.source === parsed.source)) learnt.push(parsed)
      }),
    guardSchemes: (link) => Schemes.guard(link, policy, onBlock)
  })
})

const destination = (url: string) => {
  if (!URL.canParse(url)) return undefined
  const u = new URL(url)
  const port =
    u.port || ({ "http:": "80", "ws:": "80", "https:": "443", "wss:": "443" } as Record<string, string>)[u.protocol]
  return { host: u.hostname.replace(/^\[|\]$/g, "").toLowerCase(), port: Number(port ?? 0), path: u.pathname }
}

/** Whether a block refused (or the proxy could not reach) the document at `url`: the same file, the same host and
 * port for a tunnel, the same host, port and path for plain HTTP. */
const refused = (block: Block | Unreached, url: string) => {
  const d = destination(url)
  if (d === undefined) return false
  if (block.via === "scheme") return defaultRedactor.url(url) === block.url
  if (block.host !== d.host || block.port !== d.port) return false
  return block.via === "connect" || destination(block.url)?.path === d.path
}

/**
 * The `rejected_by_policy` failure for a call that reached for a blocked document, from the call's blocks
 * (`since(mark)`). A call whose page loaded is rejected when its final URL was refused (a blocked plain-HTTP
 * document shows the proxy's 403 at its own URL) or when a top-level document was refused meanwhile (a popup, a
 * link or form that opened elsewhere); one whose navigation failed (a refused tunnel or file: leaves an error page)
 * is rejected when the call saw any block, naming the latest. A blocked image or frame alone rejects nothing.
 */
export const rejection = (
  blocks: ReadonlyArray<Block>,
  navigation: { readonly url?: string | undefined; readonly failed?: boolean },
  action = "browser.navigate"
): PolicyRejected | undefined => {
  const { url } = navigation
  const failed = navigation.failed === true || url === undefined || url.startsWith("chrome-error:")
  const block = failed ? blocks.at(-1) : blocks.findLast((b) => refused(b, url) || b.dest === "document")
  if (block === undefined) return undefined
  return new PolicyRejected({
    action,
    field: "url",
    message: `${block.url} was blocked by the egress policy (rule ${block.rule}): ${block.reason}`
  })
}

/**
 * The `navigation_failed` for a call whose document the proxy could not fetch, from the call's record
 * (`unreachedSince(mark)`), with the network's cause (`ECONNREFUSED 127.0.0.1:4100`). A call whose page loaded failed
 * when its page is the proxy's answer for the URL it shows (plain HTTP shows it at the URL asked for) or a top-level
 * document was not reached meanwhile; one whose navigation failed (`failedUrl`: the URL the browser could not load,
 * as after a refused tunnel) when the proxy missed that URL's host and port, or a top-level document when the URL is
 * unknown. A missed image or frame, or the browser's own background traffic, fails nothing.
 */
export const unreachable = (
  missed: ReadonlyArray<Unreached>,
  navigation: { readonly url?: string | undefined; readonly failed?: boolean; readonly failedUrl?: string | undefined },
  action = "browser.navigate",
  engine?: EngineKind
): NavigationFailed | undefined => {
  const { url, failedUrl } = navigation
  const failed = navigation.failed === true || url === undefined || url.startsWith("chrome-error:")
  const found = failed
    ? failedUrl === undefined
      ? missed.findLast((m) => m.dest === "document")
      : missed.findLast((m) => refused(m, failedUrl))
    : missed.findLast((m) => refused(m, url) || m.dest === "document")
  if (found === undefined) return undefined
  // A tunnel knows only host and port: the URL the browser could not load is the one asked for.
  const at = found.via === "connect" && failedUrl !== undefined ? defaultRedactor.url(failedUrl) : found.url
  return new NavigationFailed({
    ...(engine === undefined ? {} : { engine }),
    action,
    url: at,
    reason: found.cause,
    message: `${at} was not reached: ${found.cause}`
  })
}
