import { Effect } from "effect"
import * as LocalChromium from "/work/wt/egress/src/Sandbox/Provider/LocalChromium.ts"
import * as Connection from "/work/wt/egress/src/Cdp/Connection.ts"
import * as CdpHttp from "/work/wt/egress/src/Cdp/Http.ts"
import * as SavedPage from "/work/wt/egress/src/Sandbox/SavedPage.ts"
import * as Session from "/work/wt/egress/src/Cdp/Session.ts"

const program = Effect.scoped(Effect.gen(function* () {
  const b = yield* LocalChromium.make({}).acquire
  const cdp = yield* Connection.connect(b.wsEndpoint)
  const page = (yield* CdpHttp.listTargets(b.httpEndpoint)).find((t) => t.type === "page")!
  const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId: page.id, flatten: true })
  yield* Session.navigateOn(cdp, sessionId, "data:text/html,<p>x</p>")
  const times: number[] = []
  for (let i = 0; i < 60; i++) {
    const t = performance.now()
    yield* SavedPage.capture(cdp, sessionId, { url: "x", storage: true })
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  console.log("capture median", times[30].toFixed(2), "p95", times[57].toFixed(2))
  const ck: number[] = []
  for (let i = 0; i < 60; i++) {
    const t = performance.now()
    yield* cdp.send("Storage.getCookies", {})
    ck.push(performance.now() - t)
  }
  ck.sort((a, b) => a - b)
  console.log("getCookies median", ck[30].toFixed(2))
  const ev: number[] = []
  for (let i = 0; i < 60; i++) {
    const t = performance.now()
    yield* Session.evaluateOn(cdp, sessionId, "1")
    ev.push(performance.now() - t)
  }
  ev.sort((a, b) => a - b)
  console.log("evaluate(1) median", ev[30].toFixed(2))
}))
await Effect.runPromise(program)
