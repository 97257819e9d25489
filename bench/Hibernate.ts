/**
 * Hibernation's cost: two sessions signed in to a site of our own (an HttpOnly cookie, localStorage and
 * sessionStorage) share a browser cap of one, so each call on one hibernates the other (its page saved, its browser
 * closed) and restores its own (a browser taken, cookies and storage set, the page opened). Timed per call against the
 * same call on a session that stays open (cap of two), interleaved; the page's state checked after every restore.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import * as Service from "./Service.ts"
import * as Stats from "./Stats.ts"

export interface HibernateResult {
  readonly runs: number
  /** A call on a session whose browser another took: the other hibernated, this one restored, the call answered. */
  readonly swap: Stats.Summary
  /** The same call on a session that kept its browser. */
  readonly open: Stats.Summary
  /** Restored calls whose page showed the cookie and both storages. */
  readonly whole: number
}

const site = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<Server>((resolve) => {
        const server = createServer((req, res) => {
          if (req.url === "/login") {
            res.writeHead(200, { "content-type": "text/html", "set-cookie": "sid=bench; HttpOnly; Path=/" })
            return res.end(`<title>in</title><script>
              localStorage.setItem("ls", "kept"); sessionStorage.setItem("ss", "kept")</script>`)
          }
          const cookie = (req.headers.cookie ?? "").includes("sid=bench")
          res.writeHead(200, { "content-type": "text/html" }).end(`<title>app</title><script>
            document.title = [${cookie}, localStorage.getItem("ls"), sessionStorage.getItem("ss")].join(" ")
          </script>`)
        })
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
  ),
  (server) =>
    Effect.sync(() => {
      server.closeAllConnections()
      server.close()
    })
)

export const run = (options: { readonly runs: number }) =>
  Effect.gen(function* () {
    const server = yield* site
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const signIn = (service: Service.Service, session: string) =>
      Effect.promise(async () => {
        await Service.call(service, "browser.navigate", { url: `${origin}/login`, session })
        await Service.call(service, "browser.navigate", { url: `${origin}/app`, session })
      })
    const extract = (service: Service.Service, session: string) =>
      Stats.time(() => Service.call(service, "browser.extract", { session }))
    const swapping = yield* Service.start({ SWITCHYARD_MAX_BROWSERS: "1", SWITCHYARD_QUEUE: "0" })
    const steady = yield* Service.start({ SWITCHYARD_MAX_BROWSERS: "2" })
    for (const service of [swapping, steady]) {
      yield* signIn(service, "a")
      yield* signIn(service, "b")
    }
    const samples = { swap: [] as Array<number>, open: [] as Array<number> }
    let whole = 0
    for (let i = 0; i < options.runs; i++) {
      for (const session of ["a", "b"]) {
        const swap = yield* Effect.promise(() => extract(swapping, session))
        samples.swap.push(swap.ms)
        const title = (swap.value.state as { title?: string }).title
        if (title === "true kept kept") whole++
        samples.open.push((yield* Effect.promise(() => extract(steady, session))).ms)
      }
    }
    return {
      runs: samples.swap.length,
      swap: Stats.summarize(samples.swap),
      open: Stats.summarize(samples.open),
      whole
    } satisfies HibernateResult
  }).pipe(Effect.scoped)
