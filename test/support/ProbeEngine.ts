/**
 * A minimal engine over a raw CDP socket that records when clients connect and disconnect, so tests can see how
 * many clients a browser had at once. It drives the real browser; it only lacks the instruction features.
 */
import { Effect, Layer } from "effect"
import * as CdpConnection from "../../src/Cdp/Connection.ts"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import * as Page from "../../src/Engine/PageState.ts"
import { Unsupported } from "../../src/Errors/Engine.ts"

export interface ProbeLog {
  connected: number
  maxConnected: number
  connects: number
  events: Array<string>
  /** Makes the connected client report a dead connection, as a dropped CDP socket would. */
  sever: () => void
}

export const makeLog = (): ProbeLog => ({ connected: 0, maxConnected: 0, connects: 0, events: [], sever: () => {} })

const unsupported = (action: string) =>
  Effect.fail(new Unsupported({ action, message: `probe engine has no ${action}` }))

export const capabilities = {
  instructions: "none",
  actions: false,
  extract: "page-facts",
  observe: false,
  vision: false
} as const

export const layer = (log: ProbeLog, name = "probe") =>
  Layer.effect(
    Engine,
    Effect.gen(function* () {
      const session = yield* BrowserSession
      let open = true
      yield* Effect.acquireRelease(
        Effect.gen(function* () {
          // Yield once between "connecting" and "connected" so overlapping connects would show.
          log.events.push(`${name}:connecting`)
          yield* Effect.yieldNow
          log.connected++
          log.connects++
          log.maxConnected = Math.max(log.maxConnected, log.connected)
          log.events.push(`${name}:connected`)
        }),
        () =>
          Effect.sync(() => {
            open = false
            log.connected--
            log.events.push(`${name}:disconnected`)
          })
      )
      const cdp = yield* CdpConnection.connect(session.wsEndpoint)
      log.sever = () => {
        open = false
      }
      return Engine.of({
        kind: "playwright",
        capabilities,
        navigate: (url) =>
          Session.navigate(session.wsEndpoint, session.targetId, url).pipe(
            Effect.andThen(Page.capture(session)),
            Effect.map((s) => ({ url: s.url, title: s.title, status: 200 }))
          ),
        act: () => unsupported("act"),
        extract: () => unsupported("extract"),
        observe: () => unsupported("observe"),
        screenshot: () => unsupported("screenshot"),
        pageState: () => Page.capture(session),
        connected: () =>
          open
            ? cdp.send("Browser.getVersion").pipe(
                Effect.as(true),
                Effect.orElseSucceed(() => false)
              )
            : Effect.succeed(false)
      })
    })
  )
