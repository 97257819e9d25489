import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as CdpConnection from "../../src/Cdp/Connection.ts"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import * as Session from "../../src/Cdp/Session.ts"
import type { EngineSpec } from "../../src/Engine/EngineSpec.ts"
import { ActionFailed } from "../../src/Errors/Page.ts"
import { HumanInControl } from "../../src/Errors/Service.ts"
import type { SwitchyardError } from "../../src/Errors.ts"
import { BrowserProvider } from "../../src/Sandbox/Provider/Browser.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { Sandbox, type SandboxOptions } from "../../src/Sandbox/Sandbox.ts"
import { Occupant } from "../../src/Takeover/Occupant.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import * as ProbeEngine from "../support/ProbeEngine.ts"
import { isAlive } from "../support/Processes.ts"
import { waitFor } from "../support/Wait.ts"

/** A local Chromium provider that counts launches. */
const countingProvider = (counter: { launches: number }, options: LocalChromium.LocalChromiumOptions = {}) => {
  const local = LocalChromium.make(options)
  return Layer.succeed(
    BrowserProvider,
    BrowserProvider.of({
      ...local,
      acquire: Effect.sync(() => counter.launches++).pipe(Effect.andThen(local.acquire))
    })
  )
}

const sandbox = (
  options: SandboxOptions = {},
  counter = { launches: 0 },
  chromium?: LocalChromium.LocalChromiumOptions
) =>
  Layer.build(Sandbox.layer(options).pipe(Layer.provide(countingProvider(counter, chromium)))).pipe(
    Effect.map((context) => Context.get(context, Sandbox))
  )

/** Probes with different names are different engines to the Sandbox, so using them in turn switches. */
const probeIds: Record<string, EngineSpec["id"]> = {
  probe: { kind: "playwright" },
  a: { kind: "playwright", mode: "dom" },
  b: { kind: "playwright", mode: "cua" },
  person: { kind: "human" }
}

const probe = (log: ProbeEngine.ProbeLog, name = "probe"): EngineSpec => ({
  id: probeIds[name]!,
  capabilities: ProbeEngine.capabilities,
  layer: ProbeEngine.layer(log, name)
})

describe("Sandbox", () => {
  it.live("starts no browser until the first call, then exactly one for many concurrent first calls", () =>
    Effect.gen(function* () {
      const counter = { launches: 0 }
      const sb = yield* sandbox({}, counter)
      const before = yield* sb.status
      assert.strictEqual(before.active, false)
      assert.strictEqual(before.browserPid, null)
      assert.strictEqual(counter.launches, 0)

      const log = ProbeEngine.makeLog()
      const pids = yield* Effect.forEach(
        Array.from({ length: 5 }, () => sb.use(probe(log), () => sb.status.pipe(Effect.map((s) => s.browserPid)))),
        (e) => e,
        { concurrency: "unbounded" }
      )
      assert.strictEqual(counter.launches, 1)
      assert.strictEqual(new Set(pids).size, 1)
      const after = yield* sb.status
      assert.strictEqual(after.active, true)
      assert.isTrue(after.wsEndpoint?.startsWith("ws://127.0.0.1:"))
      assert.isTrue(isAlive(after.browserPid!))
      assert.strictEqual(log.connects, 1, "the same engine is reused across calls")
    })
  )

  it.live("serializes two concurrent connects of different engines: never two clients at once", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox()
      const log = ProbeEngine.makeLog()
      const a = probe(log, "a")
      const b = probe(log, "b")
      yield* Effect.forEach([a, b, a, b], (spec) => sb.use(spec, (engine) => engine.pageState()), {
        concurrency: "unbounded"
      })
      assert.strictEqual(log.maxConnected, 1)
      assert.isAtLeast(log.connects, 2)
      const history = yield* sb.history
      assert.isTrue(history.length >= 1 && history.every((h) => h.success))
    })
  )

  it.effect("fails an acquire that waits past its timeout with lease_timeout and leaks no permit", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox({ leaseTimeoutMs: 30_000 })
      const log = ProbeEngine.makeLog()
      const hold = yield* Deferred.make<void>()
      const entered = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(
        sb.use(probe(log), () => Deferred.succeed(entered, undefined).pipe(Effect.andThen(Deferred.await(hold))))
      )
      yield* Deferred.await(entered)
      const waiter = yield* Effect.forkChild(sb.use(probe(log), () => Effect.succeed("ran")))
      yield* TestClock.adjust("29 seconds")
      assert.isUndefined(waiter.pollUnsafe())
      yield* TestClock.adjust("2 seconds")
      const exit = yield* Fiber.await(waiter)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      assert.strictEqual(error?._tag, "Fail")
      assert.deepInclude(error?._tag === "Fail" ? error.error : {}, { type: "lease_timeout", retryable: true })

      yield* Deferred.succeed(hold, undefined)
      yield* Fiber.join(holder)
      // The timed-out waiter took no permit with it: the next call gets the lease at once.
      const next = yield* Effect.forkChild(sb.use(probe(log), () => Effect.succeed("after")))
      assert.strictEqual(yield* Fiber.join(next), "after")
    })
  )

  it.effect("closes the browser after 5 idle minutes; every call resets the timer", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox()
      const log = ProbeEngine.makeLog()
      yield* sb.use(probe(log), (e) => e.pageState())
      const pid = (yield* sb.status).browserPid!
      yield* TestClock.adjust("4 minutes")
      yield* sb.use(probe(log), (e) => e.pageState())
      yield* TestClock.adjust("4 minutes")
      assert.strictEqual((yield* sb.status).active, true, "the second call reset the idle timer")
      assert.strictEqual((yield* sb.status).idleMs, 4 * 60_000)
      yield* TestClock.adjust("1 minute")
      // The shutdown runs on its own fiber and waits for the real browser to exit.
      assert.isTrue(yield* Effect.promise(() => waitFor(() => !isAlive(pid))), "Chromium exited")
      const status = yield* sb.status
      assert.strictEqual(status.active, false)
      assert.strictEqual(status.engine, null)
      assert.strictEqual(log.connected, 0, "the engine client was disconnected first")
      // The next call starts a fresh browser lazily.
      yield* sb.use(probe(log), (e) => e.pageState())
      assert.notStrictEqual((yield* sb.status).browserPid, pid)
    })
  )

  it.live("relaunches a killed Chromium once and restores the last URL before answering", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const counter = { launches: 0 }
      const sb = yield* sandbox({}, counter)
      const log = ProbeEngine.makeLog()
      const url = site.url("/plain.html")
      yield* sb.use(probe(log), (e) => e.navigate(url))
      const pid = (yield* sb.status).browserPid!
      process.kill(pid, "SIGKILL")
      assert.isTrue(yield* Effect.promise(() => waitFor(() => !isAlive(pid))), "Chromium exited")
      const state = yield* sb.use(probe(log), (e) => e.pageState())
      assert.strictEqual(state.url, url)
      assert.strictEqual(counter.launches, 2)
      const status = yield* sb.status
      assert.notStrictEqual(status.browserPid, pid)
      assert.isTrue(isAlive(status.browserPid!))
    })
  )

  it.live("reports a killed Chromium as browser_unavailable when relaunch is disabled", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox({ relaunch: false })
      const log = ProbeEngine.makeLog()
      yield* sb.use(probe(log), (e) => e.pageState())
      const pid = (yield* sb.status).browserPid!
      process.kill(pid, "SIGKILL")
      assert.isTrue(yield* Effect.promise(() => waitFor(() => !isAlive(pid))), "Chromium exited")
      const error = yield* Effect.flip(sb.use(probe(log), (e) => e.pageState()))
      assert.strictEqual(error.type, "browser_unavailable")
      assert.isFalse(error.retryable)
      assert.match(error.message, /relaunch is disabled/)
      assert.strictEqual((yield* sb.status).lastError?.type, "browser_unavailable")
    })
  )

  it.live("reconnects a fresh client when the engine's CDP socket dies but the browser lives", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox()
      const log = ProbeEngine.makeLog()
      yield* sb.use(probe(log), (e) => e.pageState())
      const pid = (yield* sb.status).browserPid
      log.sever()
      yield* sb.use(probe(log), (e) => e.pageState())
      assert.strictEqual(log.connects, 2, "a fresh client was connected")
      assert.strictEqual(log.connected, 1, "the dead client was released")
      assert.strictEqual((yield* sb.status).browserPid, pid, "the browser was not restarted")
    })
  )

  it.effect("a call stopped by a timeout drops its engine client before the next call runs", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox()
      const log = ProbeEngine.makeLog()
      const stuck = yield* Effect.forkChild(sb.use(probe(log), () => Effect.never).pipe(Effect.timeout("5 seconds")))
      yield* Effect.promise(() => waitFor(() => log.connected === 1))
      yield* TestClock.adjust("5 seconds")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(stuck)))
      assert.strictEqual(log.connected, 0, "the timed-out call's client was disconnected")
      yield* sb.use(probe(log), (e) => e.pageState())
      assert.strictEqual(log.connects, 2, "the next call got a fresh client")
    })
  )

  it.live("forceRelease interrupts the call holding the lease and frees it", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox()
      const log = ProbeEngine.makeLog()
      const entered = yield* Deferred.make<void>()
      const stuck = yield* Effect.forkChild(
        sb.use(probe(log), () => Deferred.succeed(entered, undefined).pipe(Effect.andThen(Effect.never)))
      )
      yield* Deferred.await(entered)
      yield* sb.forceRelease
      // The stopped call still answers, with a typed error.
      const error = yield* Effect.flip(Fiber.join(stuck))
      assert.strictEqual(error.type, "session_closed")
      const state = yield* sb.use(probe(log), (e) => e.pageState())
      assert.strictEqual(state.url, "about:blank")
    })
  )

  it.live("close is idempotent and stops the browser and its profile; the next call starts again", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox()
      const log = ProbeEngine.makeLog()
      yield* sb.use(probe(log), (e) => e.pageState())
      const { browserPid, wsEndpoint } = yield* sb.status
      yield* sb.close
      yield* sb.close
      assert.isFalse(isAlive(browserPid!))
      assert.strictEqual((yield* sb.status).active, false)
      const origin = `http://${new URL(wsEndpoint!).host}`
      assert.strictEqual((yield* Effect.exit(CdpHttp.version(origin, 500)))._tag, "Failure")
      yield* sb.use(probe(log), (e) => e.pageState())
      assert.strictEqual((yield* sb.status).active, true)
    })
  )

  it.live("a call retried while the session shuts down gets session_closed and starts no browser", () =>
    Effect.gen(function* () {
      const counter = { launches: 0 }
      const scope = yield* Scope.make()
      const sb = yield* sandbox({}, counter).pipe(Scope.provide(scope))
      const log = ProbeEngine.makeLog()
      const entered = yield* Deferred.make<void>()
      // The stopped call is tried again at once, as the cascade retries a session_closed.
      const call = yield* Effect.forkChild(
        sb
          .use(probe(log), () => Deferred.succeed(entered, undefined).pipe(Effect.andThen(Effect.never)))
          .pipe(Effect.catch(() => sb.use(probe(log), (e) => e.pageState())))
      )
      yield* Deferred.await(entered)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual((yield* Effect.flip(Fiber.join(call))).type, "session_closed")
      assert.strictEqual(counter.launches, 1, "no browser was started after the shutdown")
      assert.strictEqual((yield* sb.status).active, false)
    })
  )

  it.live("a missing Chromium binary is a clear, non-retryable browser_launch_failed", () =>
    Effect.gen(function* () {
      const sb = yield* sandbox({}, { launches: 0 }, { executablePath: "/nonexistent/chromium" })
      const error = yield* Effect.flip(sb.use(probe(ProbeEngine.makeLog()), (e) => e.pageState()))
      assert.strictEqual(error.type, "browser_launch_failed")
      assert.isFalse(error.retryable)
      assert.include(error.message, "/nonexistent/chromium")
      assert.strictEqual((yield* sb.status).active, false)
    })
  )

  it.live("while a person holds the browser, automation calls are refused at once, waiting ones too", () =>
    Effect.gen(function* () {
      const arrived = yield* Deferred.make<SwitchyardError>()
      const occupied = new HumanInControl({ engine: "human", message: "a person has the browser" })
      const occupant = Layer.succeed(
        Occupant,
        Occupant.of({
          current: Deferred.isDone(arrived).pipe(Effect.map((done) => (done ? Option.some(occupied) : Option.none()))),
          arrival: Deferred.await(arrived)
        })
      )
      const sb = Context.get(
        yield* Layer.build(
          Sandbox.layer().pipe(Layer.provide(countingProvider({ launches: 0 })), Layer.provide(occupant))
        ),
        Sandbox
      )
      const log = ProbeEngine.makeLog()
      const release = yield* Deferred.make<void>()
      const holding = yield* Effect.forkChild(sb.use(probe(log), () => Deferred.await(release)))
      yield* Effect.promise(() => waitFor(() => log.connected === 1))
      const waiting = yield* Effect.forkChild(Effect.flip(sb.use(probe(log), (e) => e.pageState())))
      yield* Deferred.succeed(arrived, occupied)
      const refused = yield* Fiber.join(waiting).pipe(Effect.timeoutOption(5_000))
      assert.strictEqual(
        Option.getOrUndefined(refused)?.type,
        "human_in_control",
        "refused without waiting for the lease"
      )
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holding)
      const later = yield* Effect.flip(sb.use(probe(log), (e) => e.pageState()))
      assert.strictEqual(later.type, "human_in_control")
      const person = probe(log, "person")
      const seen = yield* sb.use(person, (e) => e.pageState())
      assert.isString(seen.url, "the person's own engine is let through")
      assert.isNull((yield* sb.status).lastError, "a refused call is not a browser error")
    })
  )

  describe("the session's page", () => {
    const pages = (sb: Sandbox["Service"]) =>
      Effect.gen(function* () {
        const status = yield* sb.status
        const http = `http://${new URL(status.wsEndpoint!).host}`
        return {
          http,
          ws: status.wsEndpoint!,
          pages: (yield* CdpHttp.listTargets(http)).filter((t) => t.type === "page")
        }
      })
    /** A sandbox whose page shows `path` of the fixture site, and its pages as the browser lists them then. */
    const onPage = (path: string) =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const sb = yield* sandbox()
        const log = ProbeEngine.makeLog()
        const url = site.url(path)
        yield* sb.use(probe(log), (e) => e.navigate(url))
        return { sb, log, url, before: yield* pages(sb) }
      })
    /** Crashes a page's renderer (the command itself gets no answer). */
    const crash = (ws: string, targetId: string) =>
      Session.withTarget(ws, targetId, (cdp, sessionId) =>
        cdp.send("Page.crash", {}, sessionId).pipe(Effect.timeoutOption(500), Effect.ignore)
      )

    it.live("a closed tab is replaced by a new page at the last URL before the next call", () =>
      Effect.gen(function* () {
        const { sb, log, url, before } = yield* onPage("/plain.html")
        assert.strictEqual(before.pages.length, 1)
        yield* Effect.scoped(
          CdpConnection.connect(before.ws).pipe(
            Effect.flatMap((cdp) => cdp.send("Target.closeTarget", { targetId: before.pages[0]!.id }))
          )
        )
        assert.isTrue(
          yield* Effect.promise(() => waitFor(async () => (await Effect.runPromise(pages(sb))).pages.length === 0)),
          "the tab is closed"
        )
        const state = yield* sb.use(probe(log), (e) => e.pageState())
        assert.strictEqual(state.url, url, "the agent's page is back")
        const after = yield* pages(sb)
        assert.strictEqual(after.pages.length, 1)
        assert.notStrictEqual(after.pages[0]!.id, before.pages[0]!.id)
        assert.strictEqual(log.connects, 2, "the client bound to the closed page was replaced")
      })
    )

    it.live("a page that moves by itself between two reads is reported where it went by the second", () =>
      Effect.gen(function* () {
        const { sb, log, url, before } = yield* onPage("/plain.html")
        yield* sb.use(probe(log), (e) => e.pageState())
        const active = (view: {
          readonly tabs: ReadonlyArray<{ readonly active: boolean; readonly url: string; readonly title: string }>
        }) => view.tabs.find((t) => t.active)
        assert.strictEqual(active(yield* sb.page)?.url, url)
        // The page's own script moves it, with no call of the service in between.
        yield* Session.withTarget(before.ws, before.pages[0]!.id, (cdp, sessionId) =>
          cdp.send(
            "Runtime.evaluate",
            { expression: `history.pushState({}, "", "moved.html"); document.title = "Moved"` },
            sessionId
          )
        )
        assert.isTrue(
          yield* Effect.promise(() =>
            waitFor(async () => (await Effect.runPromise(pages(sb))).pages.some((p) => p.title === "Moved"))
          ),
          "the browser knows the new title"
        )
        yield* sb.use(probe(log), (e) => e.pageState())
        const after = active(yield* sb.page)
        assert.strictEqual(after?.url, url.replace("plain.html", "moved.html"))
        assert.strictEqual(after?.title, "Moved")
      })
    )

    it.live("a crashed renderer is replaced by a new page at the last URL before the next call", () =>
      Effect.gen(function* () {
        const { sb, log, url, before } = yield* onPage("/plain.html")
        yield* crash(before.ws, before.pages[0]!.id)
        const state = yield* sb.use(probe(log), (e) => e.pageState())
        assert.strictEqual(state.url, url)
        const after = yield* pages(sb)
        assert.deepStrictEqual(
          after.pages.map((p) => p.url),
          [url],
          "the crashed page was closed and one page shows the last URL"
        )
        assert.notStrictEqual(after.pages[0]!.id, before.pages[0]!.id)
      })
    )

    it.live("a call running when its page crashes ends at once with cdp_closed instead of waiting", () =>
      Effect.gen(function* () {
        const { sb, log, url, before } = yield* onPage("/plain.html")
        const stuck = yield* Effect.forkChild(sb.use(probe(log), () => Effect.never))
        yield* Effect.promise(() => waitFor(() => log.connected === 1))
        yield* crash(before.ws, before.pages[0]!.id)
        const exit = yield* Fiber.await(stuck).pipe(Effect.timeoutOption(10_000))
        assert.isTrue(exit._tag === "Some" && Exit.isFailure(exit.value), "the call ended")
        const error = exit._tag === "Some" && Exit.isFailure(exit.value) ? exit.value.cause.reasons[0] : undefined
        assert.strictEqual(error?._tag === "Fail" ? (error.error as { type: string }).type : undefined, "cdp_closed")
        const state = yield* sb.use(probe(log), (e) => e.pageState())
        assert.strictEqual(state.url, url, "the next call works on a new page")
      })
    )

    it.live("after a failed call, a page whose main thread hangs is replaced by a new page at its URL", () =>
      Effect.gen(function* () {
        const { sb, log, url, before } = yield* onPage("/hang.html")
        const failed = yield* sb
          .use(probe(log), () =>
            Session.evaluate(
              before.ws,
              before.pages[0]!.id,
              "setTimeout(() => document.getElementById('freeze').click())"
            ).pipe(Effect.andThen(Effect.fail(new ActionFailed({ sideEffect: "possible", message: "the page froze" }))))
          )
          .pipe(Effect.flip)
        assert.strictEqual(failed.type, "action_failed")
        const state = yield* sb.use(probe(log), (e) => e.pageState())
        assert.strictEqual(state.url, url)
        // Chromium takes a moment to drop a closed page whose main thread hangs.
        const gone = yield* Effect.promise(() =>
          waitFor(async () => !(await Effect.runPromise(pages(sb))).pages.some((p) => p.id === before.pages[0]!.id))
        )
        assert.isTrue(gone, "the hung page was closed")
        const after = yield* pages(sb)
        assert.deepStrictEqual(
          after.pages.map((p) => p.url),
          [url]
        )
        const answers = yield* Session.evaluate<number>(after.ws, after.pages[0]!.id, "1 + 1").pipe(
          Effect.timeoutOption(2_000)
        )
        assert.deepStrictEqual(answers._tag === "Some" ? answers.value : "no answer", 2, "the new page answers")
      })
    )

    it.live("a confirm() the page opens ends the call at once and waits for the agent's answer", () =>
      Effect.gen(function* () {
        const { sb, log, before } = yield* onPage("/plain.html")
        const {
          ws,
          pages: [page]
        } = before
        // Runtime.evaluate returns only when the dialog is answered: the call must not wait for that.
        const answered = yield* Effect.forkChild(
          Session.evaluate<boolean>(ws, page!.id, "confirm('Delete everything?')").pipe(Effect.timeoutOption(10_000))
        )
        const cut = yield* sb.use(probe(log), () => Effect.never).pipe(Effect.flip, Effect.timeout(5_000))
        assert.strictEqual(cut.type, "dialog_open")
        assert.strictEqual(Option.getOrThrow(yield* sb.openDialog).message, "Delete everything?")
        yield* sb.answerDialog({ accept: false })
        assert.deepStrictEqual(yield* Fiber.join(answered), Option.some(false))
        assert.isTrue(Option.isNone(yield* sb.openDialog))
      })
    )
  })
})
