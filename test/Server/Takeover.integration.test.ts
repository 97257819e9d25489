/**
 * A person's takeover as people do it, on the running service: the agent hands over (or the cascade does), a person
 * opens what they were given in a second Chromium's noVNC and types and clicks on its canvas, someone resumes by the
 * printed route, and from then on the person's keys reach nothing. The operator's commands read the same takeover.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import * as CdpHttp from "../../src/Cdp/Http.ts"
import * as Session from "../../src/Cdp/Session.ts"
import { missingTools } from "../../src/Sandbox/Provider/Vnc/Tools.ts"
import { descendants, tracker } from "../Chaos/Descendants.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { main } from "../support/McpClient.ts"
import * as NoVncViewer from "../support/NoVncViewer.ts"
import { serviceEnv, startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopServices)

const missing = missingTools()
const skipped = missing.length > 0 ? `needs ${missing.map((m) => m.tool).join(", ")}` : undefined
const named = (name: string) => (skipped === undefined ? name : `${name} [skipped: ${skipped}]`)

/** `switchyard <args>` as the operator runs it, on the service's log root. */
const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.promise(
    () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [main, ...args],
          { env: serviceEnv({ ...process.env, ...env }), timeout: 30_000 },
          (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
        )
      )
  )

/** Every file under `dir`, as text. */
const everything = (dir: string): string =>
  (readdirSync(dir, { recursive: true, encoding: "utf8" }) as Array<string>)
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, "latin1"))
    .join("\n")

/** The session page as CDP sees it, to find where its elements are on the remote screen. */
const pageOf = (wsEndpoint: string) =>
  Effect.gen(function* () {
    const pages = yield* CdpHttp.listTargets(`http://${new URL(wsEndpoint).host}`)
    return { wsEndpoint, targetId: pages.find((t) => t.type === "page")!.id }
  })

interface HandedOff {
  readonly session: string
  readonly link: string
  readonly url: string
  readonly resume: { readonly tool: string; readonly http?: string; readonly cli?: string }
  readonly next: string
}

const structured = (result: unknown) =>
  (result as { structuredContent: { result: unknown; state: { engine: string | null } } }).structuredContent

describe("a person takes over", () => {
  it.live.skipIf(skipped)(
    named(
      "over MCP on HTTP: the handoff's link lets the person in; the printed route resumes; their keys then reach nothing"
    ),
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const logs = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
        const env = { SWITCHYARD_HUMAN: "on", SWITCHYARD_LOG_DIR: logs }
        const service = startService(env, ["--http", "--port", "0"])
        const endpoint = yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (\S+)/))
        const client = new Client({ name: "agent", version: "1" })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(endpoint)))),
          () => Effect.promise(() => client.close())
        )
        const call = (name: string, args: Record<string, unknown> = {}) =>
          Effect.promise(() => client.callTool({ name, arguments: args }))
        yield* call("browser_navigate", { url: site.url("/forms.html") })

        const handed = yield* call("browser_handoff", { reason: "a judgement call" })
        const takeover = structured(handed).result as HandedOff
        const base = endpoint.replace(/\/mcp$/, "")
        // The session is this MCP client's own, named in the answer with every way to resume it.
        assert.match(takeover.session, /^mcp-[0-9a-f-]{36}$/)
        assert.match(takeover.url, /^http:\/\/127\.0\.0\.1:\d+\/$/)
        assert.match(takeover.link, new RegExp(`^${takeover.url}#password=[A-Za-z0-9]{8}$`))
        assert.deepStrictEqual(takeover.resume, {
          tool: `browser.resume {"session":"${takeover.session}"}`,
          http: `POST ${base}/sessions/${takeover.session}/resume`,
          cli: `switchyard resume ${takeover.session} --url ${base}`
        })
        for (const way of Object.values(takeover.resume)) assert.include(takeover.next, way)
        const password = takeover.link.slice(takeover.link.indexOf("=") + 1)

        // The operator reads the same takeover: the page in the log (not redacted), the password by command.
        yield* Effect.promise(() => service.stderrLine(/a person is needed on session/))
        assert.include(service.stderr(), `open ${takeover.url} (\`switchyard takeover show ${takeover.session}\``)
        const shown = yield* cli(["takeover", "show", takeover.session], env)
        assert.strictEqual(shown.code, 0, shown.stderr)
        assert.include(shown.stdout, `link      ${takeover.link}`)
        assert.include(shown.stdout, `password  ${password}`)
        assert.include(shown.stdout, takeover.resume.cli!)
        const listed = yield* cli(["takeover", "list"], env)
        assert.include(listed.stdout, takeover.session)
        assert.notInclude(listed.stdout, password)
        const status = yield* cli(["status"], env)
        assert.match(status.stdout, /takeover {5}on; VNC tools: Xvfb, x11vnc, websockify and noVNC found/)
        assert.include(status.stdout, `${takeover.session} since`)

        // The person opens the link alone: no prompt, the session's page, and what they type lands in it.
        const state = structured(yield* call("browser_status")).result as { wsEndpoint: string }
        const page = yield* pageOf(state.wsEndpoint)
        const person = yield* NoVncViewer.open(takeover.link)
        // Everything the service runs now (browser, Xvfb, x11vnc, websockify and its process for this viewer).
        const running = tracker(service.child.pid!)
        running.sample()
        yield* person.click(yield* NoVncViewer.screenPoint(page, "#email"))
        yield* person.type("person@example.com")
        yield* person.click(yield* NoVncViewer.screenPoint(page, "#submit"))
        yield* NoVncViewer.until<string>(page, `document.getElementById("status").textContent`, (s) => s !== "")
        const meanwhile = yield* call("browser_act", { instruction: 'fill "Email" with "agent@example.com"' })
        assert.isTrue(meanwhile.isError)
        assert.include(JSON.stringify(meanwhile.content), "human_in_control")

        // Done: the route the answer printed.
        const [method, route] = takeover.resume.http!.split(" ") as [string, string]
        const resumed = yield* Effect.promise(() =>
          fetch(route, { method }).then(async (r) => [r.status, await r.json()])
        )
        assert.strictEqual(resumed[0], 200, JSON.stringify(resumed[1]))
        assert.deepInclude(resumed[1] as object, { ok: true, session: takeover.session, result: { resumed: true } })

        // The person's connection is over: keys typed now never reach the page the agent drives.
        assert.isTrue(yield* Effect.promise(() => waitFor(() => Effect.runPromise(person.connected).then((c) => !c))))
        yield* person.type("typed-after-resume")
        yield* Effect.sleep("500 millis")
        const email = yield* Session.evaluate<string>(
          page.wsEndpoint,
          page.targetId,
          'document.getElementById("email").value'
        )
        assert.strictEqual(email, "person@example.com")
        assert.match(yield* NoVncViewer.attempt(takeover.link), /^refused/, "the link died with the takeover")
        const read = yield* call("browser_extract", { instruction: "the form fields" })
        assert.include(JSON.stringify(structured(read).result), "person@example.com")
        assert.strictEqual(structured(read).state.engine, "playwright")
        assert.notInclude((yield* cli(["takeover", "list"], env)).stdout, takeover.session)

        // The password reached no log, no file left behind, no line on stderr.
        assert.notInclude(service.stderr(), password)
        assert.notInclude(everything(logs), password)
        // The system log names the page as it is, unredacted, so the operator can open it.
        assert.include(everything(join(logs, "system")), `open ${takeover.url} (`)

        // Stopped as a supervisor stops it: nothing it started outlives it.
        running.sample()
        const names = running.seen().map((p) => p.name)
        for (const name of ["Xvfb", "x11vnc", "websockify"]) assert.include(names, name)
        service.child.kill("SIGTERM")
        yield* Effect.promise(() => service.exited)
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => running.survivors().length === 0, 10_000)),
          `left running after SIGTERM: ${JSON.stringify(running.survivors())}`
        )
      }),
    150_000
  )

  it.live.skipIf(skipped)(
    named(
      "the cascade hands a human check to a person: the agent reads the link from browser.status, the operator types the password"
    ),
    () =>
      Effect.gen(function* () {
        const site = yield* SiteServer.start
        const logs = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
        const env = { SWITCHYARD_HUMAN: "on", SWITCHYARD_LOG_DIR: logs }
        const service = startService(env)
        yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/verify.html") }))
        // Not on the page, and the page asks for a human: the cascade asks a person, and the call waits for them.
        const waiting = service.call("browser.act", { instruction: 'click "Continue"' })
        const takeover = yield* Effect.promise(async () => {
          const deadline = Date.now() + 120_000
          while (Date.now() < deadline) {
            const status = (await service.call("browser.status")).result as { result: { takeover?: HandedOff } }
            if (status.result.takeover !== undefined) return status.result.takeover
            await new Promise((r) => setTimeout(r, 100))
          }
          throw new Error("no takeover began")
        })
        assert.strictEqual(takeover.session, "default")
        assert.strictEqual(takeover.resume.tool, 'browser.resume {"session":"default"}')
        assert.isUndefined(takeover.resume.http, "no HTTP here: the tool is the way back")

        // The operator's way in: the page from the log, and the password `switchyard takeover show` gives.
        const shown = yield* cli(["takeover", "show"], env)
        const password = /password {2}(\S+)/.exec(shown.stdout)?.[1]
        assert.isDefined(password, shown.stdout + shown.stderr)
        const status = yield* Effect.promise(() => service.call("browser.status"))
        const page = yield* pageOf((status.result as { result: { wsEndpoint: string } }).result.wsEndpoint)
        const person = yield* NoVncViewer.open(takeover.url, { password: password! })
        yield* person.click(yield* NoVncViewer.screenPoint(page, "#captcha"))
        yield* person.type("k7q2x")
        yield* person.click(yield* NoVncViewer.screenPoint(page, "#verify"))
        yield* NoVncViewer.until<string>(page, `document.getElementById("status").textContent`, (s) => s === "Verified")

        const resumed = yield* Effect.promise(() => service.call("browser.resume"))
        assert.deepStrictEqual((resumed.result as { result: object }).result, { resumed: true })
        const done = yield* Effect.promise(() => waiting)
        assert.deepInclude((done.result as { result: object }).result, {
          success: true,
          description: 'a person did: click "Continue"'
        })
        assert.isFalse(yield* person.connected)
        assert.notInclude(everything(logs), password!)
      }),
    150_000
  )

  it.live.skipIf(skipped)(
    named("POST /resume resumes the one session held, names them when several are, and never starts a display"),
    () =>
      Effect.gen(function* () {
        const logs = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
        const service = startService({ SWITCHYARD_HUMAN: "on", SWITCHYARD_LOG_DIR: logs }, ["--http", "--port", "0"])
        const base = (yield* Effect.promise(() => service.stderrLine(/MCP over HTTP at (\S+)/))).replace(/\/mcp$/, "")
        const post = (path: string) =>
          Effect.promise(() =>
            fetch(`${base}${path}`, { method: "POST" }).then(async (r) => ({
              status: r.status,
              body: (await r.json()) as {
                ok: boolean
                session?: string
                held?: Array<string>
                error?: { message: string }
              }
            }))
          )
        const displays = () => descendants(service.child.pid!).filter((p) => /^(Xvfb|x11vnc|chrom)/.test(p.name))

        const none = yield* post("/resume")
        assert.strictEqual(none.status, 409)
        assert.deepStrictEqual(none.body.held, [])
        assert.include(none.body.error?.message, "no person holds a session")
        const unknown = yield* post("/sessions/nobody/resume")
        assert.strictEqual(unknown.status, 409)
        assert.include(unknown.body.error?.message, 'no person holds session "nobody"')
        assert.deepStrictEqual(displays(), [], "resuming nothing started no display and no browser")

        // Two sessions held: the plain route names them; each resumes by its own route.
        const client = new Client({ name: "agent", version: "1" })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))),
          () => Effect.promise(() => client.close())
        )
        const call = (session: string, name: string, args: object = {}) =>
          Effect.promise(() => client.callTool({ name, arguments: { session, ...args } }))
        for (const session of ["desk-a", "desk-b"]) yield* call(session, "browser_handoff", { reason: "sign in" })
        const several = yield* post("/resume")
        assert.strictEqual(several.status, 409)
        assert.deepStrictEqual(several.body.held, ["desk-a", "desk-b"])
        assert.include(several.body.error?.message, "POST /sessions/<name>/resume")
        const one = yield* post("/sessions/desk-a/resume")
        assert.strictEqual(one.status, 200)
        const last = yield* post("/resume")
        assert.strictEqual(last.status, 200, "the one still held")
        assert.deepInclude(last.body, { ok: true, session: "desk-b" })
        assert.strictEqual((yield* post("/resume")).status, 409)
        // A session closed while a person holds it is held no more.
        yield* call("desk-c", "browser_handoff", { reason: "sign in" })
        yield* call("desk-c", "browser_close")
        const closed = yield* post("/resume")
        assert.strictEqual(closed.status, 409)
        assert.deepStrictEqual(closed.body.held, [])
      }),
    120_000
  )

  it.live("switchyard status names the VNC tools missing and the packages that bring them", () =>
    Effect.gen(function* () {
      const logs = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      const status = yield* cli(["status"], { SWITCHYARD_HUMAN: "on", SWITCHYARD_LOG_DIR: logs, PATH: "/nonexistent" })
      assert.match(
        status.stdout,
        /human {11}cannot start: missing Xvfb, x11vnc, websockify \(apt-get install xvfb x11vnc websockify\)/
      )
      assert.match(status.stdout, /takeover {5}on; VNC tools: missing Xvfb, x11vnc, websockify/)
      assert.include(status.stdout, "held         no session is held by a person")
    })
  )
})
