import { assert, it, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { chromium } from "playwright-core"
import * as CdpHttp from "../../../src/Cdp/Http.ts"
import { BrowserProvider, type RunningBrowser } from "../../../src/Sandbox/Provider/Browser.ts"
import * as CdpEndpoint from "../../../src/Sandbox/Provider/CdpEndpoint.ts"
import * as LocalChromium from "../../../src/Sandbox/Provider/LocalChromium.ts"
import { freePort } from "../../support/Ports.ts"
import { isAlive } from "../../support/Processes.ts"

/** A Chromium someone else runs: the browser the provider attaches to. */
class Running extends Context.Service<Running, RunningBrowser>()("test/Running") {}

const launched = Layer.effect(Running, LocalChromium.make().acquire)

/** Opens a tab through `wsEndpoint` with Playwright and returns the target ids the launched browser now lists. */
const openTabVia = (wsEndpoint: string, httpEndpoint: string, marker: string) =>
  Effect.acquireUseRelease(
    Effect.promise(() => chromium.connectOverCDP(wsEndpoint)),
    (browser) =>
      Effect.gen(function* () {
        yield* Effect.promise(async () => {
          const context = browser.contexts()[0] ?? (await browser.newContext())
          const page = await context.newPage()
          await page.goto(`about:blank#${marker}`)
        })
        return yield* CdpHttp.listTargets(httpEndpoint)
      }),
    (browser) => Effect.promise(() => browser.close())
  )

layer(launched)("CdpEndpoint", (it) => {
  it.effect("attaches by the browser's ws URL, as is, to that same browser", () =>
    Effect.gen(function* () {
      const running = yield* Running
      const attached = yield* CdpEndpoint.make({ endpoint: running.wsEndpoint }).acquire
      assert.strictEqual(attached.wsEndpoint, running.wsEndpoint)
      assert.strictEqual(attached.httpEndpoint, running.httpEndpoint)
      assert.isNull(attached.pid)
      assert.isTrue(yield* attached.alive)
      const targets = yield* openTabVia(attached.wsEndpoint, running.httpEndpoint, "via-ws")
      assert.isTrue(targets.some((t) => t.url === "about:blank#via-ws"))
    })
  )

  it.effect("resolves an http URL to the full ws URL of the browser running there", () =>
    Effect.gen(function* () {
      const running = yield* Running
      const attached = yield* CdpEndpoint.make({ endpoint: running.httpEndpoint }).acquire
      assert.match(attached.wsEndpoint, /^ws:\/\/127\.0\.0\.1:\d+\/devtools\/browser\/[\w-]+$/)
      assert.strictEqual(attached.wsEndpoint, running.wsEndpoint)
      assert.strictEqual(attached.httpEndpoint, running.httpEndpoint)
      const targets = yield* openTabVia(attached.wsEndpoint, running.httpEndpoint, "via-http")
      assert.isTrue(targets.some((t) => t.url === "about:blank#via-http"))
    })
  )

  it.effect("resolves a ws URL without a path the same way", () =>
    Effect.gen(function* () {
      const running = yield* Running
      const endpoint = running.httpEndpoint.replace(/^http/, "ws")
      const attached = yield* CdpEndpoint.make({ endpoint }).acquire
      assert.strictEqual(attached.wsEndpoint, running.wsEndpoint)
    })
  )

  it.effect("release only detaches: the browser keeps running and answering", () =>
    Effect.gen(function* () {
      const running = yield* Running
      const provider = CdpEndpoint.make({ endpoint: running.wsEndpoint })
      yield* Effect.scoped(provider.acquire)
      assert.isNotNull(running.pid)
      assert.isTrue(isAlive(running.pid!))
      const version = yield* CdpHttp.version(running.httpEndpoint)
      assert.strictEqual(version.webSocketDebuggerUrl, running.wsEndpoint)
      const again = yield* Effect.scoped(provider.acquire)
      assert.isTrue(yield* again.alive)
    })
  )

  it.effect("a ws URL naming another browser than the one running there fails with BrowserUnavailable", () =>
    Effect.gen(function* () {
      const running = yield* Running
      const endpoint = running.wsEndpoint.replace(/[^/]+$/, "00000000-0000-0000-0000-000000000000")
      const error = yield* Effect.flip(CdpEndpoint.make({ endpoint }).acquire)
      assert.strictEqual(error._tag, "BrowserUnavailable")
      assert.include(error.message, endpoint)
      assert.include(error.message, running.wsEndpoint.split("/").pop()!)
    })
  )

  it.effect("a ws URL of one tab is refused without contacting the browser", () =>
    Effect.gen(function* () {
      const running = yield* Running
      const [page] = (yield* CdpHttp.listTargets(running.httpEndpoint)).filter((t) => t.type === "page")
      const endpoint = `${running.httpEndpoint.replace(/^http/, "ws")}/devtools/page/${page!.id}`
      const error = yield* Effect.flip(CdpEndpoint.make({ endpoint }).acquire)
      assert.strictEqual(error._tag, "InvalidEndpoint")
      assert.include(error.message, endpoint)
    })
  )

  it.effect("reads SWITCHYARD_CDP_URL through layerConfig", () =>
    Effect.gen(function* () {
      const running = yield* Running
      const provider = yield* BrowserProvider.pipe(
        Effect.provide(
          CdpEndpoint.layerConfig().pipe(
            Layer.provide(
              ConfigProvider.layer(ConfigProvider.fromUnknown({ SWITCHYARD_CDP_URL: running.httpEndpoint }))
            )
          )
        )
      )
      assert.strictEqual(provider.name, "cdp")
      assert.isFalse(provider.canRelaunch)
      const attached = yield* provider.acquire
      assert.strictEqual(attached.wsEndpoint, running.wsEndpoint)
    })
  )
})

it.effect("layerConfig without SWITCHYARD_CDP_URL fails to build, naming the variable", () =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(
      BrowserProvider.pipe(
        Effect.provide(
          CdpEndpoint.layerConfig().pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
        )
      )
    )
    assert.include(String(error), "SWITCHYARD_CDP_URL")
  })
)

it.effect("malformed endpoints fail with InvalidEndpoint naming the input", () =>
  Effect.gen(function* () {
    for (const endpoint of ["not a url", "ftp://x", "ws://", ""]) {
      const error = yield* Effect.flip(CdpEndpoint.make({ endpoint }).acquire)
      assert.strictEqual(error._tag, "InvalidEndpoint", endpoint)
      if (error._tag !== "InvalidEndpoint") continue
      assert.strictEqual(error.endpoint, endpoint)
      assert.include(error.message, `"${endpoint}"`)
      assert.isFalse(error.retryable)
    }
  })
)

it.effect("an endpoint nothing answers on fails with EndpointUnreachable naming it", () =>
  Effect.gen(function* () {
    const port = yield* freePort
    for (const endpoint of [`http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}/devtools/browser/abc`]) {
      const error = yield* Effect.flip(CdpEndpoint.make({ endpoint, connectTimeoutMs: 2_000 }).acquire)
      assert.strictEqual(error._tag, "EndpointUnreachable", endpoint)
      if (error._tag !== "EndpointUnreachable") continue
      assert.strictEqual(error.endpoint, endpoint)
      assert.include(error.message, endpoint)
      assert.isTrue(error.retryable)
    }
  })
)

it.effect("alive turns false once the attached browser exits, and the provider never relaunches it", () =>
  Effect.gen(function* () {
    const own = yield* Effect.scoped(
      Effect.gen(function* () {
        const running = yield* LocalChromium.make().acquire
        const provider = CdpEndpoint.make({ endpoint: running.wsEndpoint })
        const attached = yield* provider.acquire
        assert.isTrue(yield* attached.alive)
        return { running, attached, provider }
      })
    )
    // The browser's own scope has closed: it is gone, and the attachment notices.
    assert.isFalse(isAlive(own.running.pid!))
    assert.isFalse(yield* own.attached.alive)
    assert.isFalse(own.provider.canRelaunch)
    const error = yield* Effect.flip(own.provider.acquire)
    assert.strictEqual(error._tag, "EndpointUnreachable")
  })
)
