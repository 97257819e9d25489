import { createServer } from "node:http"
import { Effect } from "effect"
import * as LocalChromium from "/work/wt/egress/src/Sandbox/Provider/LocalChromium.ts"
import * as Connection from "/work/wt/egress/src/Cdp/Connection.ts"
import * as CdpHttp from "/work/wt/egress/src/Cdp/Http.ts"

const seen: string[] = []
const server = createServer((req, res) => {
  seen.push(`${req.url} cookie=${req.headers.cookie ?? ""}`)
  res.writeHead(200, { "content-type": "text/html" }).end(`<script>document.title = JSON.stringify({l: localStorage.getItem("k"), s: sessionStorage.getItem("k"), c: document.cookie})</script>`)
})
await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
const port = (server.address() as any).port
const origin = `http://127.0.0.1:${port}`
const program = Effect.scoped(Effect.gen(function* () {
  const b = yield* LocalChromium.make({}).acquire
  const cdp = yield* Connection.connect(b.wsEndpoint)
  const page = (yield* CdpHttp.listTargets(b.httpEndpoint)).find((t) => t.type === "page")!
  const { sessionId } = yield* cdp.send("Target.attachToTarget", { targetId: page.id, flatten: true })
  yield* cdp.send("Storage.setCookies", { cookies: [{ name: "sid", value: "secret", domain: "127.0.0.1", path: "/", httpOnly: true }, { name: "plain", value: "p", url: origin }] } as any)
  yield* cdp.send("Page.enable", {}, sessionId)
  const source = `(() => { if (window !== window.top || location.origin !== ${JSON.stringify(origin)}) return; try { localStorage.setItem("k", "local-v"); sessionStorage.setItem("k", "session-v") } catch {} })()`
  const { identifier } = yield* cdp.send("Page.addScriptToEvaluateOnNewDocument", { source } as any, sessionId)
  console.log("script", identifier)
  yield* cdp.send("Page.enable", {}, sessionId)
  yield* cdp.send("Page.navigate", { url: `${origin}/first` }, sessionId)
  yield* Effect.sleep("1500 millis")
  const title = yield* cdp.send("Runtime.evaluate", { expression: "document.title", returnByValue: true }, sessionId)
  console.log("title", title.result.value)
  console.log("seen", seen)
  yield* cdp.send("Page.removeScriptToEvaluateOnNewDocument", { identifier } as any, sessionId)
  yield* cdp.send("Runtime.evaluate", { expression: "localStorage.setItem('k','changed'); sessionStorage.setItem('k','changed2'); location.reload()" }, sessionId)
  yield* Effect.sleep("1000 millis")
  const t2 = yield* cdp.send("Runtime.evaluate", { expression: "document.title", returnByValue: true }, sessionId)
  console.log("after reload", t2.result.value)
}))
await Effect.runPromise(program)
server.close()
