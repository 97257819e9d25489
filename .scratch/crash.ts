import { readFileSync } from "node:fs"
import { Effect, PubSub } from "effect"
import * as LocalChromium from "/work/wt/egress/src/Sandbox/Provider/LocalChromium.ts"
import * as Connection from "/work/wt/egress/src/Cdp/Connection.ts"
import * as CdpHttp from "/work/wt/egress/src/Cdp/Http.ts"
import { descendants } from "/work/wt/egress/test/Chaos/Descendants.ts"

const program = Effect.scoped(Effect.gen(function* () {
  const b = yield* LocalChromium.make({}).acquire
  const cdp = yield* Connection.connect(b.wsEndpoint)
  const events = yield* cdp.events
  const t0 = { t: 0 }
  yield* PubSub.take(events).pipe(Effect.tap((e) => Effect.sync(() => { if (/crash|Destroyed|detached|Detached|Inspector/i.test(e.method)) console.log(Date.now() - t0.t, e.method, JSON.stringify(e.params).slice(0, 100), e.sessionId ?? "") })), Effect.forever, Effect.forkScoped)
  yield* cdp.send("Target.setDiscoverTargets", { discover: true })
  const page = (yield* CdpHttp.listTargets(b.httpEndpoint)).find((t) => t.type === "page")!
  const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId: page.id, flatten: true })
  yield* cdp.send("Page.enable", {}, sessionId)
  yield* cdp.send("Inspector.enable", {}, sessionId)
  yield* cdp.send("Page.navigate", { url: "data:text/html,<p>hi</p>" }, sessionId)
  yield* Effect.sleep("500 millis")
  const renderers = descendants(b.pid!).filter((p) => readFileSync(`/proc/${p.pid}/cmdline`, "utf8").includes("--type=renderer"))
  console.log("renderers", renderers.map((r) => r.pid))
  t0.t = Date.now()
  for (const r of renderers) process.kill(r.pid, "SIGKILL")
  yield* Effect.sleep("7 seconds")
}))
await Effect.runPromise(program)
