/**
 * Keeps file: out of every frame, popup and navigation, which no proxy sees: Fetch interception on the browser
 * target (`Fetch.enable` with a `file:*` pattern, sent without a session) pauses every file: request of every page,
 * frame and popup, and the guard fails it (`net::ERR_BLOCKED_BY_CLIENT`) unless the policy lists the scheme.
 *
 * Chromium already refuses a redirect to a non-http(s) scheme (`ERR_UNSAFE_REDIRECT`) and a file: frame or popup
 * opened by web content ("Not allowed to load local resource"); what it allows is a navigation the browser starts
 * (an engine's goto, a model-chosen URL, `Target.createTarget`) and frames inside a file: page: the guard stops those.
 * data:, blob: and about: make content inside the browser without a connection; chrome: and devtools: pages are
 * unreachable from web content. Interception lasts as long as the CDP connection that enabled it: enable it again on
 * every reconnect.
 */
import { Effect, PubSub } from "effect"
import type * as Connection from "../Cdp/Connection.ts"
import { defaultRedactor } from "../Logging/Redact.ts"
import type { Policy } from "./Policy.ts"
import type { Block } from "./Proxy.ts"

/** Schemes that reach the machine's own files without a network connection, so without the proxy. */
export const localSchemes = ["file"]

/**
 * Enables the interception on `link` (a browser-level connection) and fails each paused request, recording it as a
 * block. Runs until the scope closes, which disables it again (a paused request nobody answers would hang).
 */
export const guard = (link: Connection.Connection, policy: Policy, onBlock: (block: Block) => void) =>
  Effect.gen(function* () {
    const schemes = localSchemes.filter((s) => !policy.schemes.includes(s))
    if (schemes.length === 0) return
    const events = yield* link.events
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          const event = yield* PubSub.take(events)
          if (event.method !== "Fetch.requestPaused" || event.sessionId !== undefined) return
          const { requestId, request } = event.params
          const url = request.url
          const scheme = url.slice(0, Math.max(0, url.indexOf(":"))).toLowerCase()
          onBlock({
            url: defaultRedactor.url(url),
            host: "",
            port: 0,
            rule: `scheme:${scheme}`,
            reason: `${scheme}: is not an allowed scheme (the browser may not open local files)`,
            via: "scheme",
            at: Date.now()
          })
          yield* link.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }).pipe(Effect.ignore)
        })
      )
    )
    yield* Effect.acquireRelease(
      link.send("Fetch.enable", {
        patterns: schemes.map((s) => ({ urlPattern: `${s}:*`, requestStage: "Request" as const }))
      }),
      () => link.send("Fetch.disable").pipe(Effect.ignore, Effect.timeoutOption(1_000))
    )
  })
