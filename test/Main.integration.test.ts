/**
 * The service as users run it: a real `node src/Main.ts serve` process answering JSON-RPC on stdio, with a real
 * Chromium behind it. What happens to that Chromium when the service ends is the point of most of these tests.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Folders from "../src/Sandbox/Folders.ts"
import * as LocalChromium from "../src/Sandbox/Provider/LocalChromium.ts"
import * as SiteServer from "./fixtures/SiteServer.ts"
import { isAlive, processesMatching } from "./support/Processes.ts"
import { type Service, startService, stopServices } from "./support/Service.ts"
import { waitFor } from "./support/Wait.ts"

afterEach(stopServices)

const asRoot = process.getuid?.() === 0

/** A service that has navigated, so its browser runs: with that browser's pid and temp profile. */
const startBrowsing = (env: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const site = yield* SiteServer.start
    const service = startService(env)
    yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/plain.html") }))
    const { browserPid } = yield* Effect.promise(() => browserOf(service))
    return { service, browserPid, profile: readProfile(browserPid), site }
  })

const browserOf = async (service: Service) => {
  const status = (await service.call("browserStatus")).result as { browserPid: number; wsEndpoint: string }
  assert.isNumber(status.browserPid)
  return status
}

describe("switchyard serve", () => {
  it.live("navigates over JSON-RPC and reports the browser in browserStatus", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const service = startService()
      const answer = yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/plain.html") }))
      const { result, state } = answer.result as { result: object; state: { url: string; engine: string } }
      assert.deepInclude(result, { title: "Plain page", url: site.url("/plain.html") })
      assert.deepInclude(state, { url: site.url("/plain.html"), engine: "playwright" })
      const status = yield* Effect.promise(() => browserOf(service))
      assert.isTrue(isAlive(status.browserPid))
      const closed = yield* Effect.promise(() => service.call("browserClose"))
      assert.deepStrictEqual(closed.result, { status: "ok" })
      assert.isTrue(yield* Effect.promise(() => waitFor(() => !isAlive(status.browserPid))))
    })
  )

  it.live(
    "SIGKILL of the service leaves no Chromium behind, warm ones included; the next start reaps its profile and empty download folder",
    () =>
      Effect.gen(function* () {
        const tmp = mkdtempSync(join(tmpdir(), "switchyard-killed-"))
        // As root the browsers run as an unprivileged user, whose profiles can live here only if it can pass through.
        chmodSync(tmp, 0o711)
        const downloads = join(tmp, "downloads")
        const env = { TMPDIR: tmp, SWITCHYARD_WARM_BROWSERS: "2", SWITCHYARD_DOWNLOAD_DIR: downloads }
        const { service, browserPid, profile } = yield* startBrowsing(env)
        // The session's download folder, empty, named for its browser: under the configured root, or the shared one
        // when the browser's own user cannot reach that.
        const folders = () =>
          [downloads, Folders.sharedRoot].flatMap((root) =>
            (existsSync(root) ? readdirSync(root) : []).filter((name) => name.includes(`-${browserPid}-`))
          )
        assert.lengthOf(folders(), 1)
        assert.match(folders()[0]!, new RegExp(`^session-\\d+-${browserPid}-`))
        const browsers = () => processesMatching(`--user-data-dir=${tmp}`).filter((p) => !/--type=/.test(p.cmdline))
        // Started and owned: a profile whose launch was cut short is reaped only once it is a minute old.
        const owned = () => readdirSync(tmp).filter((p) => existsSync(join(tmp, p, ".switchyard-owner"))).length === 3
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => browsers().length === 3 && owned(), 30_000)),
          "two ahead"
        )
        service.child.kill("SIGKILL")
        yield* Effect.promise(() => service.exited)
        assert.isTrue(yield* Effect.promise(() => waitFor(() => !isAlive(browserPid))), "Chromium outlived the service")
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => processesMatching(tmp).length === 0)),
          "a warm Chromium (or a helper) outlived it"
        )
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => processesMatching(profile).length === 0)),
          "Chromium helper processes outlived the service"
        )
        // Any service starting meanwhile (other test files run in parallel) reaps it too; whoever comes first, it goes.
        const leftBehind = existsSync(profile)
        const reaped = yield* LocalChromium.reapStaleProfiles(tmp)
        // As any start does, also in the run's own temp directory.
        yield* LocalChromium.reapStaleProfiles()
        if (leftBehind) assert.include(reaped, profile)
        assert.isFalse(existsSync(profile))
        assert.deepStrictEqual(
          readdirSync(tmp).filter((name) => name.startsWith(LocalChromium.profilePrefix)),
          [],
          "the warm browsers' profiles are reaped too"
        )
        // The next start removes the empty download folder the killed service left.
        assert.lengthOf(folders(), 1, "the killed service could not remove its download folder")
        const next = startService({ ...env, SWITCHYARD_WARM_BROWSERS: "0" })
        yield* Effect.promise(() => next.call("browserStatus"))
        assert.isTrue(yield* Effect.promise(() => waitFor(() => folders().length === 0)), "the empty folder stayed")
      })
  )

  for (const [how, end] of [
    ["SIGTERM", (s: Service) => s.child.kill("SIGTERM")],
    ["stdin close", (s: Service) => s.child.stdin.end()]
  ] as const) {
    it.live(`${how} shuts down gracefully: browser closed, temp profile removed`, () =>
      Effect.gen(function* () {
        const { service, browserPid, profile } = yield* startBrowsing()
        end(service)
        const exit = yield* Effect.promise(() => service.exited)
        assert.isFalse(isAlive(browserPid))
        assert.isFalse(existsSync(profile), "the temp profile was removed")
        assert.isTrue(exit.code === 0 || exit.signal === "SIGTERM" || exit.code === 130 || exit.code === 143)
      })
    )
  }

  it.live("stdin close mid-call: every call gets exactly one answer, in-flight ones a typed shutting_down", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const service = startService()
      const answers = [
        service.call("browser.navigate", { url: site.url("/plain.html") }),
        service.call("browser.extract", { instruction: "the heading" }),
        service.call("browserStatus")
      ]
      // Let the calls arrive, then close stdin while the browser is still starting.
      yield* Effect.promise(() => answers[2]!)
      service.child.stdin.end()
      const all = yield* Effect.promise(() => Promise.all(answers))
      for (const answer of all.slice(0, 2)) {
        const error = answer.error as { data?: { type: string } } | undefined
        assert.isTrue(answer.result !== undefined || error?.data?.type === "shutting_down", JSON.stringify(answer))
      }
      assert.isTrue(
        all.slice(0, 2).some((a) => (a.error as { data?: { type: string } })?.data?.type === "shutting_down")
      )
      const exit = yield* Effect.promise(() => service.exited)
      assert.strictEqual(exit.code, 0)
      assert.strictEqual(service.unanswered(), 0)
    })
  )

  it.live("logs every attempt: attempt.jsonl, summary.json, a screenshot per attempt, a snapshot on failure", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const logs = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      const service = startService({ SWITCHYARD_LOG_DIR: logs })
      const meta = { traceId: "trace-logged" }
      yield* Effect.promise(() =>
        service.call("browser.navigate", { url: `${site.url("/forms.html")}?token=s3cr3tQuery`, ...meta })
      )
      yield* Effect.promise(() =>
        service.call("browser.act", { instruction: 'fill "Email" with "canary.person@example-mail.test"', ...meta })
      )
      const failed = yield* Effect.promise(() =>
        service.call("browser.act", { instruction: 'click "No such button"', ...meta })
      )
      assert.strictEqual((failed.error as { data: { type: string } }).data.type, "element_not_found")
      service.child.stdin.end()
      yield* Effect.promise(() => service.exited)

      const day = readdirSync(join(logs, "browser-automation"))[0]!
      const dir = join(logs, "browser-automation", day, "trace-logged")
      const lines = readFileSync(join(dir, "attempt.jsonl"), "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l))
      const events = lines.map((l) => l.event)
      assert.includeMembers(events, [
        "start",
        "success",
        "failure",
        "engine_connected",
        "engine_operation",
        "engine_failure"
      ])
      for (const l of lines) assert.strictEqual(l.traceId, "trace-logged")
      const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"))
      assert.strictEqual(summary.totals.attempts, lines.filter((l) => l.event === "start").length)
      assert.strictEqual(
        summary.errorTypes.element_not_found,
        lines.filter((l) => l.errorType === "element_not_found" && l.event === "failure").length
      )
      assert.strictEqual(summary.finalDecision.outcome, "failure")
      const artifacts = readdirSync(join(dir, "artifacts"))
      // Every attempt has its picture: stored, or pointed at where an equal one is.
      const shared = lines.filter((l) => l.event === "screenshot_shared")
      assert.strictEqual(artifacts.filter((a) => a.endsWith(".png")).length + shared.length, summary.totals.attempts)
      for (const l of shared) assert.isTrue(existsSync(join(dir, "..", l.sameAsTrace, l.file)), l.file)
      const snapshots = artifacts.filter((a) => a.endsWith(".snapshot.json"))
      assert.isAtLeast(snapshots.length, 1)
      const snapshot = JSON.parse(readFileSync(join(dir, "artifacts", snapshots[0]!), "utf8"))
      assert.isAbove(snapshot.accessibilityTree.length, 5)
      assert.strictEqual(snapshot.dom.looked_for, "no such button")
      const system = readdirSync(join(logs, "system"))
      assert.lengthOf(system, 1)
      const everything = readdirSync(logs, { recursive: true, encoding: "utf8" })
        .map((p) => join(logs, p))
        .filter((p) => statSync(p).isFile() && !p.endsWith(".png"))
        .map((p) => readFileSync(p, "utf8"))
        .join("\n")
      assert.notInclude(everything, "canary.person@example-mail.test")
      assert.notInclude(everything, "s3cr3tQuery")
    })
  )

  it.live("SIGTERM mid-call: the call in flight answers shutting_down, the service exits cleanly", () =>
    Effect.gen(function* () {
      const { service, browserPid } = yield* startBrowsing()
      // A page that never finishes loading keeps the navigate in flight.
      const slow = yield* slowServer
      const hanging = service.call("browser.navigate", { url: `http://127.0.0.1:${slow.port}/` })
      yield* Effect.promise(() => slow.requested)
      service.child.kill("SIGTERM")
      const answer = yield* Effect.promise(() => hanging)
      assert.strictEqual((answer.error as { data: { type: string } }).data.type, "shutting_down")
      const exit = yield* Effect.promise(() => service.exited)
      assert.strictEqual(exit.code, 0)
      assert.isFalse(isAlive(browserPid))
    })
  )

  it.live("a second signal forces the exit at once", () =>
    Effect.gen(function* () {
      const { service, browserPid } = yield* startBrowsing()
      service.child.kill("SIGINT")
      service.child.kill("SIGINT")
      const exit = yield* Effect.promise(() => service.exited)
      assert.include([0, 130], exit.code)
      assert.isTrue(yield* Effect.promise(() => waitFor(() => !isAlive(browserPid))), "Chromium died with the service")
    })
  )

  it.live("a start reaps what a crashed run on the same log root left, the copies of uploaded files too", () =>
    Effect.gen(function* () {
      const logs = mkdtempSync(join(tmpdir(), "switchyard-logs-"))
      // Profiles in a folder of this test's own: a service of another test file starting meanwhile reaps what it finds
      // in the shared one. As root the browser runs as an unprivileged user, who must pass through it.
      const tmp = mkdtempSync(join(tmpdir(), "switchyard-reaped-"))
      chmodSync(tmp, 0o711)
      // A résumé only the service's user can read: the browser, running as another user, is given a copy.
      const private_ = mkdtempSync(join(tmpdir(), "switchyard-private-"))
      const cv = `cv-${Math.random().toString(36).slice(2)}.txt`
      writeFileSync(join(private_, cv), "personal details")
      const { service, browserPid, profile, site } = yield* startBrowsing({
        TMPDIR: tmp,
        SWITCHYARD_LOG_DIR: logs,
        SWITCHYARD_UPLOAD_ROOTS: private_
      })
      yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/names/application.html") }))
      const uploaded = yield* Effect.promise(() =>
        service.call("browser.upload", { files: [join(private_, cv)], target: "Your CV" })
      )
      assert.isUndefined(uploaded.error, JSON.stringify(uploaded.error))
      // As root the browser runs as an unprivileged user, who is given a copy; else it reads the file where it is.
      const copies = copiesOf(cv)
      assert.lengthOf(copies, asRoot ? 1 : 0, `copies: ${copies.join(", ")}`)
      service.child.kill("SIGKILL")
      yield* Effect.promise(() => service.exited)
      assert.isTrue(yield* Effect.promise(() => waitFor(() => !isAlive(browserPid))))
      assert.isTrue(existsSync(profile), "the crashed run left its profile")
      assert.lengthOf(readdirSync(join(logs, "run")), 1)
      const next = startService({ TMPDIR: tmp, SWITCHYARD_LOG_DIR: logs })
      const answered = yield* Effect.promise(() => next.call("browserStatus"))
      assert.isDefined(answered.result, JSON.stringify(answered))
      assert.isFalse(existsSync(profile), "the next start removed it")
      assert.deepStrictEqual(copiesOf(cv), [], "and the copy of the résumé")
      yield* Effect.promise(stopServices)
      for (const dir of [private_, tmp]) rmSync(dir, { recursive: true, force: true })
      assert.deepStrictEqual(readdirSync(join(logs, "run")), [`${next.child.pid}.json`])
    })
  )

  it.live("answers malformed lines with JSON-RPC errors and keeps serving", () =>
    Effect.gen(function* () {
      const service = startService()
      const parse = yield* Effect.promise(() => service.send("{not json"))
      assert.strictEqual((parse.error as { code: number }).code, -32700)
      const shape = yield* Effect.promise(() => service.send(JSON.stringify({ id: 1, method: 5 })))
      assert.strictEqual((shape.error as { code: number }).code, -32600)
      const unknown = yield* Effect.promise(() => service.call("browser.fly"))
      assert.strictEqual((unknown.error as { code: number }).code, -32601)
      const params = yield* Effect.promise(() => service.call("browser.navigate", { url: 42 }))
      const error = params.error as { code: number; message: string; data: { type: string } }
      assert.strictEqual(error.code, -32602)
      assert.include(error.message, "url")
      const status = yield* Effect.promise(() => service.call("browserStatus"))
      assert.deepInclude(status.result as object, { active: false })
    })
  )
})

/** A server that takes requests and never answers (a page that never loads); `requested` tells when one came. */
const slowServer = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ server: ReturnType<typeof createServer>; requested: Promise<void> }>((resolve) => {
        let seen = () => {}
        const requested = new Promise<void>((r) => {
          seen = r
        })
        const server = createServer(() => seen())
        server.listen(0, "127.0.0.1", () => resolve({ server, requested }))
      })
  ),
  ({ server }) =>
    Effect.sync(() => {
      server.closeAllConnections()
      server.close()
    })
).pipe(Effect.map(({ server, requested }) => ({ port: (server.address() as AddressInfo).port, requested })))

/** Copies of the file named `name` wherever a service may put them for its browser: in a folder of its own under
 * /tmp or TMPDIR (its uploads', its browser's profile, its test run's), at any depth. */
const copiesOf = (name: string) => {
  const walk = (dir: string): Array<string> => {
    try {
      return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.name === name ? [join(dir, entry.name)] : entry.isDirectory() ? walk(join(dir, entry.name)) : []
      )
    } catch {
      return []
    }
  }
  const found = [...new Set(["/tmp", tmpdir()])].flatMap((root) =>
    readdirSync(root)
      .filter((entry) => entry.startsWith("switchyard-") && !entry.startsWith("switchyard-private-"))
      .flatMap((entry) => walk(join(root, entry)))
  )
  return [...new Set(found)].filter((path) => !path.includes("/switchyard-private-"))
}

/** The temp profile directory of a running Chromium, from its command line. */
const readProfile = (pid: number) => {
  const match = processesMatching("--user-data-dir=")
    .filter((p) => p.pid === pid)
    .map((p) => /--user-data-dir=(\S+)/.exec(p.cmdline)?.[1])[0]
  if (match === undefined) throw new Error(`no profile found for Chromium ${pid}`)
  return match
}
