import { spawn } from "node:child_process"
import { existsSync, readFileSync, statSync } from "node:fs"
import { type AddressInfo, createConnection, createServer } from "node:net"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Redacted } from "effect"
import * as CdpHttp from "../../../src/Cdp/Http.ts"
import * as Session from "../../../src/Cdp/Session.ts"
import { BrowserProvider } from "../../../src/Sandbox/Provider/Browser.ts"
import { missingTools } from "../../../src/Sandbox/Provider/Vnc/Tools.ts"
import { make, Vnc, type VncProcesses } from "../../../src/Sandbox/Provider/Vnc.ts"
import * as SiteServer from "../../fixtures/SiteServer.ts"
import * as NoVncViewer from "../../support/NoVncViewer.ts"
import { ownChildren, vncProcessNames } from "../../support/OwnProcesses.ts"
import { isAlive, processesMatching, sharedMemoryOf } from "../../support/Processes.ts"
import { waitFor } from "../../support/Wait.ts"

const missing = missingTools()
const skipped =
  missing.length === 0
    ? undefined
    : `needs ${missing.map((m) => m.tool).join(", ")}: apt-get install ${missing.map((m) => m.package).join(" ")} (bin/test does it as root)`
/** Tests that need the real stack say why they were skipped, in their name. */
const named = (name: string) => (skipped === undefined ? name : `${name} [skipped: ${skipped}]`)

const allGone = (pids: VncProcesses) => Object.values(pids).every((pid) => !isAlive(pid))

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.once("error", () => resolve(true))
  })

/** The security types x11vnc offers over websockify (RFB 3.8): 2 is VNC password authentication, 1 is none. */
const securityTypes = (websocketPort: number) =>
  new Promise<Array<number>>((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${websocketPort}/websockify`, ["binary"])
    socket.binaryType = "arraybuffer"
    let greeted = false
    socket.addEventListener("message", (event) => {
      const bytes = new Uint8Array(event.data as ArrayBuffer)
      if (!greeted) {
        greeted = true
        socket.send(new TextEncoder().encode("RFB 003.008\n"))
        return
      }
      socket.close()
      resolve(Array.from(bytes.slice(1, 1 + bytes[0]!)))
    })
    socket.addEventListener("error", () => reject(new Error("RFB WebSocket failed")))
  })

afterEach(async () => {
  // Whatever a test started (stack, browsers) is gone once its scope closed, passed or failed.
  const left = await waitFor(() => ownChildren(vncProcessNames).length === 0, 5_000)
  assert.isTrue(left, `processes left running: ${JSON.stringify(ownChildren(vncProcessNames))}`)
})

describe("Vnc", () => {
  it.live.skipIf(skipped)(
    named("starts Xvfb, a password-only loopback x11vnc and websockify with noVNC; the scope stops them all"),
    () =>
      Effect.gen(function* () {
        const stacks = yield* Effect.scoped(
          Effect.gen(function* () {
            const [a, b] = yield* Effect.all([make(), make({ stopTimeoutMs: 300 })], { concurrency: 2 })
            assert.match(a.display, /^:\d+$/)
            assert.notStrictEqual(a.display, b.display, "each session gets its own display")
            assert.notStrictEqual(a.websocketPort, b.websocketPort)
            assert.isTrue(yield* a.alive)

            // The page a person opens: no password, no query a log would redact; it connects at once.
            assert.strictEqual(a.url, `http://127.0.0.1:${a.websocketPort}/`)
            const index = yield* Effect.promise(() => fetch(a.url).then((r) => r.text()))
            assert.include(index, "vnc.html#autoconnect=true&resize=scale")
            const page = yield* Effect.promise(() =>
              fetch(`${a.url}vnc.html`).then(async (r) => ({ ok: r.ok, text: await r.text() }))
            )
            assert.isTrue(page.ok)
            assert.include(page.text, "noVNC")
            assert.deepStrictEqual(yield* Effect.promise(() => securityTypes(a.websocketPort)), [2], "password only")

            // Each takeover gets a password of its own, carried in the link's fragment (never sent to a server).
            const first = yield* a.admit
            const second = yield* a.admit
            const password = Redacted.value(second.password)
            assert.strictEqual(password.length, 8)
            assert.notStrictEqual(Redacted.value(first.password), password)
            assert.strictEqual(String(second.link), "<redacted>")
            assert.strictEqual(Redacted.value(second.link), `${a.url}#password=${password}`)

            // x11vnc reads the password from a private file, again on each connection: it is on no command line.
            const x11vnc = processesMatching(`-rfbport ${a.vncPort}`)
            assert.lengthOf(x11vnc, 1)
            assert.notInclude(x11vnc[0]!.cmdline, password)
            assert.include(x11vnc[0]!.cmdline, "-localhost")
            const file = /read:(\S+)/.exec(x11vnc[0]!.cmdline)?.[1]
            assert.isDefined(file)
            assert.strictEqual(statSync(file!).mode & 0o777, 0o600)
            assert.strictEqual(statSync(dirname(file!)).mode & 0o777, 0o700)
            assert.strictEqual(readFileSync(file!, "utf8").trim(), password)
            // The takeover's end leaves a password nobody was told.
            yield* a.dismiss
            assert.notStrictEqual(readFileSync(file!, "utf8").trim(), password)

            // A process that ignores SIGTERM (a stopped one cannot even see it) is killed within the bound.
            process.kill(b.pids.x11vnc, "SIGSTOP")
            return { a, b, dir: dirname(file!), closing: Date.now() }
          })
        )
        assert.isBelow(Date.now() - stacks.closing, 2_500, "stopping is bounded")
        assert.isFalse(existsSync(stacks.dir), "the stack's private directory is gone with it")
        for (const stack of [stacks.a, stacks.b]) {
          assert.isTrue(allGone(stack.pids), `left running: ${JSON.stringify(stack.pids)}`)
          assert.isTrue(yield* Effect.promise(() => refused(stack.websocketPort)))
          assert.isTrue(yield* Effect.promise(() => refused(stack.vncPort)))
        }
      }),
    30_000
  )

  it.live.skipIf(skipped)(
    named("each takeover's password lets its person in, also one given within a second of the last"),
    () =>
      Effect.gen(function* () {
        const vnc = yield* make()
        // x11vnc rereads its password file only when it looks changed: takeovers in quick succession, each tried.
        for (let i = 1; i <= 4; i++) {
          const access = yield* vnc.admit
          assert.strictEqual(
            yield* Effect.scoped(NoVncViewer.attempt(Redacted.value(access.link))),
            "connected",
            `takeover ${i}`
          )
          yield* vnc.dismiss
        }
      }),
    60_000
  )

  it.live.skipIf(skipped)(
    named("runs the session's Chromium headed on the display; a person clicks and types in it through noVNC"),
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const vnc = yield* make()
        const provider = yield* Layer.build(Vnc.layerLocalChromium().pipe(Layer.provide(Layer.succeed(Vnc, vnc))))
        const browser = yield* Context.get(provider, BrowserProvider).acquire
        const version = yield* CdpHttp.version(browser.httpEndpoint)
        assert.notInclude((version as unknown as Record<string, string>)["User-Agent"], "Headless")
        const page = (yield* CdpHttp.listTargets(browser.httpEndpoint)).find((t) => t.type === "page")!
        const target = { wsEndpoint: browser.wsEndpoint, targetId: page.id }
        yield* Session.navigate(browser.wsEndpoint, page.id, site.url("/forms.html"))
        const size = yield* Session.evaluate<string>(browser.wsEndpoint, page.id, 'screen.width + "x" + screen.height')
        assert.strictEqual(size, "1280x800", "the browser is on the VNC display")
        // Tabs and address bar take under 100 px; Chromium's "unsupported command-line flag" bar would add ~55 more.
        const chrome = yield* Session.evaluate<number>(browser.wsEndpoint, page.id, "outerHeight - innerHeight")
        assert.isBelow(chrome, 100, "no warning bar between the person and the page")

        const access = yield* vnc.admit
        const person = yield* NoVncViewer.open(Redacted.value(access.link))
        assert.isBelow(person.scale, 1, "noVNC scales the screen down to the viewer's window")
        yield* person.click(yield* NoVncViewer.screenPoint(target, "#agree"))
        yield* person.click(yield* NoVncViewer.screenPoint(target, "#search"))
        yield* person.type("Lovelace")
        yield* person.press("Enter")

        const seen = yield* NoVncViewer.until<[boolean, string, string]>(
          target,
          `[document.getElementById("agree").checked, document.getElementById("search").value,
            document.getElementById("search-result").textContent]`,
          ([, , result]) => result !== ""
        )
        assert.deepStrictEqual(seen, [true, "Lovelace", "Searched for Lovelace"])

        // The takeover ends: the person's connection is closed, what they type no longer reaches the page, and the
        // link they used lets nobody in again.
        yield* vnc.dismiss
        yield* Effect.promise(() => waitFor(() => Effect.runPromise(person.connected.pipe(Effect.map((c) => !c)))))
        assert.isFalse(yield* person.connected)
        yield* person.type(" and more")
        yield* person.press("Enter")
        yield* Effect.sleep("500 millis")
        assert.strictEqual(
          yield* Session.evaluate<string>(browser.wsEndpoint, page.id, 'document.getElementById("search").value'),
          "Lovelace"
        )
        assert.match(yield* NoVncViewer.attempt(Redacted.value(access.link)), /^refused/)
      }),
    30_000
  )

  it.live("names a missing tool and its apt package, and starts nothing", () =>
    Effect.gen(function* () {
      const error = yield* make({
        executables: { x11vnc: "/nonexistent/x11vnc" },
        webRoot: "/nonexistent/novnc"
      }).pipe(Effect.scoped, Effect.flip)
      assert.strictEqual(error._tag, "NotConfigured")
      assert.deepInclude(error, { type: "not_configured", retryable: false, engine: "human" })
      assert.include(error.message, "/nonexistent/x11vnc")
      assert.include(error.message, "noVNC (/nonexistent/novnc/vnc.html)")
      // Other tools may be missing on this machine too: each is named with its package.
      assert.match(error.message, /apt-get install [\w ]*\bx11vnc\b[\w ]*\bnovnc$/)
      assert.lengthOf(ownChildren(vncProcessNames), 0)
    })
  )

  it.live.skipIf(skipped)(named("a start that fails midway stops what it had already started, and says why"), () =>
    Effect.gen(function* () {
      const exit = yield* make({ executables: { websockify: "/bin/false" } }).pipe(Effect.scoped, Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      assert.strictEqual(error?._tag, "Fail")
      const failure = error?._tag === "Fail" ? error.error : undefined
      assert.deepInclude(failure, { _tag: "BrowserLaunchFailed", executable: "/bin/false" })
      assert.include(failure?.message, "websockify did not start: exited (code 1) before it was ready")
      // Xvfb and x11vnc had started: they are stopped already, not at some later cleanup.
      assert.lengthOf(ownChildren(vncProcessNames), 0)

      // A port someone else holds: websockify says so, and that is what the error carries.
      const holder = createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve)))
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.close()))
      const taken = (holder.address() as AddressInfo).port
      const busy = yield* make({ websocketPort: taken }).pipe(Effect.scoped, Effect.flip)
      assert.deepInclude(busy, { _tag: "BrowserLaunchFailed", retryable: true })
      assert.match(busy.message, /websockify did not start: exited .* Address already in use/)
      assert.lengthOf(ownChildren(vncProcessNames), 0)
    })
  )

  it.live.skipIf(skipped)(
    named("SIGKILL of the owning process leaves no Xvfb, x11vnc or websockify (nor its per-client process)"),
    () =>
      Effect.gen(function* () {
        const owner = spawn(process.execPath, [join(import.meta.dirname, "..", "..", "support", "VncOwner.ts")], {
          stdio: ["ignore", "pipe", "inherit"]
        })
        const exited = new Promise((resolve) => owner.once("exit", resolve))
        yield* Effect.addFinalizer(() => Effect.sync(() => owner.kill("SIGKILL")))
        const ready = yield* Effect.promise(
          () =>
            new Promise<{ pids: VncProcesses; websocketPort: number; vncPort: number }>((resolve, reject) => {
              createInterface({ input: owner.stdout! }).on("line", (line) => {
                if (line.startsWith("READY ")) resolve(JSON.parse(line.slice(6)))
              })
              owner.once("exit", (code) => reject(new Error(`the owner exited (${code}) before its stack was ready`)))
            })
        )
        const listener = `127.0.0.1:${ready.websocketPort}`
        assert.isTrue(Object.values(ready.pids).every(isAlive))
        assert.isAtLeast(processesMatching(listener).length, 2, "websockify and its per-client process")

        owner.kill("SIGKILL")
        yield* Effect.promise(() => exited)
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => allGone(ready.pids) && processesMatching(listener).length === 0)),
          `left running: ${JSON.stringify(processesMatching(listener))} of ${JSON.stringify(ready.pids)}`
        )
        assert.isTrue(yield* Effect.promise(() => refused(ready.vncPort)))
        // Killed processes cannot clean up: anything they kept in System V shared memory would stay for good.
        assert.deepStrictEqual(sharedMemoryOf(Object.values(ready.pids)), [], "shared-memory segments left behind")
      }),
    30_000
  )
})
