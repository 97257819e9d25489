/**
 * The first warm browser is spawned by the entry before the service's modules load (Sandbox/Provider/EarlyBrowser.ts):
 * it is up while they load, the service adopts it as the browser its first session takes, a configuration that keeps
 * no warm browser closes it, a SIGKILL at any moment leaves none of it, and a command that uses no browser starts none.
 */
import { execFile } from "node:child_process"
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { profilePrefix, reapStaleProfiles } from "../../src/Sandbox/Provider/LocalChromium.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { processesMatching } from "../support/Processes.ts"
import { serviceEnv, startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

const tmps: Array<string> = []

// A SIGKILLed service leaves its browsers' profiles for the next start to reap: reaped here, in each test's own folder.
afterEach(async () => {
  await stopServices()
  for (const tmp of tmps.splice(0)) {
    await waitFor(() => processesMatching(tmp).length === 0)
    await Effect.runPromise(reapStaleProfiles(tmp))
    rmSync(tmp, { recursive: true, force: true })
  }
})

const root = join(import.meta.dirname, "..", "..")
const holdModule = join(root, "test", "fixtures", "HoldModule.ts")

/** A temp directory of its own for the service's browsers' profiles, one an unprivileged Chromium can pass through. */
const ownTmp = () => {
  const tmp = mkdtempSync(join(tmpdir(), "switchyard-early-"))
  chmodSync(tmp, 0o711)
  tmps.push(tmp)
  return tmp
}

/** The browser processes (not their helpers) whose profile is under `tmp`. */
const browsers = (tmp: string) => processesMatching(`--user-data-dir=${tmp}`).filter((p) => !/--type=/.test(p.cmdline))

/** The one browser process under `tmp`, once there is one, from the same listing: a second listing can miss a process
 * caught in its exec (Debian's launcher script execs Chromium). */
const oneBrowser = (tmp: string) =>
  Effect.promise(async () => {
    let found: ReturnType<typeof browsers>[number] | undefined
    await waitFor(() => {
      const listed = browsers(tmp)
      found = listed.length === 1 ? listed[0] : undefined
      return found !== undefined
    }, 30_000)
    return found
  })

/** A process's scheduling group and its nice value, as the kernel has them (`/autogroup-7 nice 0`); a process in no
 * autogroup of its own (an empty file) is scheduled in the root group, at nice 0's weight. */
const autogroup = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/autogroup`, "utf8").trim()
  if (text === "") return { group: "root", nice: 0 }
  const [group, , nice] = text.split(" ")
  return { group, nice: Number(nice) }
}

/** A named pipe the service's command line waits on (HoldModule.ts): held until the pipe is written. */
const holdPipe = () =>
  Effect.promise(async () => {
    const pipe = join(mkdtempSync(join(tmpdir(), "switchyard-early-hold-")), "held")
    await new Promise((resolve, reject) => execFile("mkfifo", [pipe], (e) => (e ? reject(e) : resolve(e))))
    return pipe
  })

/** A service with one warm browser, its profiles under `tmp`, whose command line (and all behind it) cannot load until
 * `pipe` is written. */
const heldAtCommandLine = (tmp: string, pipe: string) => ({
  TMPDIR: tmp,
  SWITCHYARD_WARM_BROWSERS: "1",
  NODE_OPTIONS: `--import=${holdModule}`,
  SWITCHYARD_TEST_HOLD_MODULE: "/src/Main/Cli.ts",
  SWITCHYARD_TEST_HOLD_PIPE: pipe
})

const profiles = (tmp: string) => readdirSync(tmp).filter((name) => name.startsWith(profilePrefix))

/** A service held at its command line (the pipe is never written here), once its early browser is spawned. */
const heldWithBrowser = Effect.gen(function* () {
  const tmp = ownTmp()
  const pipe = yield* holdPipe()
  const service = startService(heldAtCommandLine(tmp, pipe))
  const browser = yield* oneBrowser(tmp)
  assert.isDefined(browser, "no Chromium spawned while the command line was still loading")
  return { tmp, pipe, service, browser: browser! }
})

describe("the first browser, started with the process", () => {
  it.live(
    "is spawned before the service's modules load, and a SIGKILL right then leaves no Chromium, nor its profile once the next service starts",
    () =>
      Effect.gen(function* () {
        // The command line (and all the service behind it) cannot load until the pipe is written, which it never is.
        const { tmp, service } = yield* heldWithBrowser
        service.child.kill("SIGKILL")
        yield* Effect.promise(() => service.exited)
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => processesMatching(tmp).length === 0)),
          "the early Chromium (or a helper) outlived the service"
        )
        // No run file names it (the service never got to register it): the next start finds it by its owner file.
        const [left] = profiles(tmp)
        assert.isDefined(left, "the killed service left its early browser's profile")
        const next = startService({ TMPDIR: tmp, SWITCHYARD_WARM_BROWSERS: "0" })
        yield* Effect.promise(() => next.call("browserStatus"))
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => !profiles(tmp).includes(left!), 10_000)),
          `the next start left the profile ${left}`
        )
      })
  )

  it.live.runIf(existsSync("/proc/self/autogroup"))(
    "starts at a lower CPU weight than the service while its modules load, and gets its full share once it reads requests",
    () =>
      Effect.gen(function* () {
        const { pipe, service, browser } = yield* heldWithBrowser
        const own = autogroup(service.child.pid as number)
        // The kernel takes one autogroup change per 100 ms machine-wide, so with other services starting the lowering
        // may come a few tries after the spawn.
        yield* Effect.promise(() => waitFor(() => autogroup(browser?.pid as number).nice > own.nice, 5_000))
        const held = autogroup(browser?.pid as number)
        assert.notStrictEqual(held.group, own.group, "the browser is scheduled in the service's own group")
        assert.isAbove(held.nice, own.nice, "the browser started at the service's CPU weight")
        // The command line loads, the service reads requests: the browser's weight is the service's again.
        yield* Effect.promise(() => writeFile(pipe, "go"))
        yield* Effect.promise(() => service.stderrLine(/switchyard: ready/))
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => autogroup(browser?.pid as number).nice === own.nice, 5_000)),
          `the browser's nice is still ${autogroup(browser?.pid as number).nice}`
        )
      }),
    { timeout: 60_000 }
  )

  it.live.runIf(existsSync("/proc/self/autogroup"))(
    "on MCP's stdio gets its full share once `initialize` is answered, the command line still loading",
    () =>
      Effect.gen(function* () {
        const tmp = ownTmp()
        const pipe = yield* holdPipe()
        const service = startService(heldAtCommandLine(tmp, pipe), [])
        const initialize = {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } }
        }
        const answer = yield* Effect.promise(() => service.send(JSON.stringify(initialize), 1))
        assert.deepInclude(answer.result as object, { serverInfo: { name: "switchyard", version: "0.1.0" } })
        const browser = yield* oneBrowser(tmp)
        assert.isDefined(browser)
        const own = autogroup(service.child.pid as number)
        assert.notStrictEqual(autogroup(browser?.pid as number).group, own.group)
        assert.isTrue(
          yield* Effect.promise(() => waitFor(() => autogroup(browser?.pid as number).nice === own.nice, 5_000)),
          `the browser's nice is still ${autogroup(browser?.pid as number).nice}`
        )
        yield* Effect.promise(() => writeFile(pipe, "go"))
      }),
    { timeout: 60_000 }
  )

  it.live("is the browser the first session takes, its pages going through the session's egress", () =>
    Effect.gen(function* () {
      const tmp = ownTmp()
      const site = yield* SiteServer.start
      const service = startService({ TMPDIR: tmp, SWITCHYARD_WARM_BROWSERS: "1", SWITCHYARD_EGRESS_DENY: "127.0.0.2" })
      const first = yield* oneBrowser(tmp)
      assert.isDefined(first)
      const answer = yield* Effect.promise(() => service.call("browser.navigate", { url: site.url("/plain.html") }))
      assert.deepInclude((answer.result as { result: object }).result, { title: "Plain page" })
      const status = (yield* Effect.promise(() => service.call("browserStatus"))).result as { browserPid: number }
      assert.strictEqual(status.browserPid, first?.pid, "the session launched a browser of its own")
      // A page may not reach a denied address: the relay the early browser was started with now goes to the
      // session's egress proxy, whose policy holds (127.0.0.2 is refused by the configuration above).
      const denied = yield* Effect.promise(() =>
        service.call("browser.navigate", { url: site.url("/plain.html").replace("127.0.0.1", "127.0.0.2") })
      )
      assert.isDefined(denied.error, JSON.stringify(denied.result))
    })
  )

  for (const [what, file, left] of [
    ["keeps no browser warm", { sessions: { warmBrowsers: 0 } }, 0],
    ["launches another (a smaller page heap)", { limits: { pageHeapMb: 256 } }, 1]
  ] as const) {
    it.live(`is closed, its profile removed, when the configuration ${what}`, () =>
      Effect.gen(function* () {
        const tmp = ownTmp()
        const config = join(mkdtempSync(join(tmpdir(), "switchyard-early-config-")), "switchyard.json")
        writeFileSync(config, JSON.stringify(file))
        // Named in the environment, the file is read by the service alone, after the entry has started the browser;
        // the tests' default of no warm browser is left out, so the file's setting is the one that holds.
        const env = { TMPDIR: tmp, SWITCHYARD_CONFIG: config, SWITCHYARD_WARM_BROWSERS: undefined }
        const service = startService(env as unknown as Record<string, string>)
        // Taken as it is seen: the service may close it a moment later (and start the one its configuration asks for).
        let early: ReturnType<typeof browsers>[number] | undefined
        const seen = () => {
          early = browsers(tmp).find((b) => !b.cmdline.includes("--max-old-space-size=256"))
          return early !== undefined
        }
        assert.isTrue(yield* Effect.promise(() => waitFor(seen, 30_000)), "the early browser was never seen")
        const earlyProfile = /--user-data-dir=(\S+)/.exec(early?.cmdline ?? "")?.[1]
        assert.isDefined(earlyProfile)
        assert.isDefined((yield* Effect.promise(() => service.call("browserStatus"))).result)
        const gone = () =>
          !browsers(tmp).some((b) => b.pid === early?.pid) &&
          !existsSync(earlyProfile as string) &&
          browsers(tmp).length === left
        assert.isTrue(
          yield* Effect.promise(() => waitFor(gone, 30_000)),
          `the early browser is still there: ${browsers(tmp).map((b) => b.pid)} running, profiles ${profiles(tmp)}`
        )
        if (left === 1) assert.include(browsers(tmp)[0]?.cmdline, "--max-old-space-size=256")
      })
    )
  }

  /**
   * The browsers seen while a service starts with this configuration file and for a second after it answers, told
   * apart by profile (Chromium's wrapper script and its forks each have the browser's command line). Polled every
   * 100 ms: an early browser the service does not take lives from the entry's spawn until the service has loaded its
   * modules and read its configuration, seconds on two cores.
   */
  const browsersOverStart = (file: object) =>
    Effect.gen(function* () {
      const tmp = ownTmp()
      const config = join(mkdtempSync(join(tmpdir(), "switchyard-early-config-")), "switchyard.json")
      writeFileSync(config, JSON.stringify(file))
      const seen = new Set<string | undefined>()
      const watching = setInterval(() => {
        for (const browser of browsers(tmp)) seen.add(/--user-data-dir=(\S+)/.exec(browser.cmdline)?.[1])
      }, 100)
      yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(watching)))
      // The tests' default of no warm browser is left out: the default of one would start the early browser.
      const env = { TMPDIR: tmp, SWITCHYARD_CONFIG: config, SWITCHYARD_WARM_BROWSERS: undefined }
      const service = startService(env as unknown as Record<string, string>)
      const status = yield* Effect.promise(() => service.call("browser.status"))
      assert.isDefined(status.result, JSON.stringify(status))
      yield* Effect.sleep("1 second")
      clearInterval(watching)
      return { seen: seen.size, profiles: profiles(tmp) }
    })

  it.live("is not started when the configuration file turns takeover on: every session's browser is a headed one", () =>
    Effect.gen(function* () {
      // The file keeps no browser warm, read by the service alone: with takeover off the early browser is started and
      // then closed, and no other is, so this start shows the browser (and its short life) the check below looks for.
      const file = (enabled: boolean) => ({ sessions: { warmBrowsers: 0 }, human: { enabled } })
      const off = yield* browsersOverStart(file(false))
      assert.strictEqual(off.seen, 1, "with takeover off, the start showed no early browser, or more than one")
      const on = yield* browsersOverStart(file(true))
      assert.strictEqual(on.seen, 0, "a headless browser was started that no session could take")
      assert.deepStrictEqual(on.profiles, [])
    })
  )

  it.live("is not started by a command that uses no browser", () =>
    Effect.gen(function* () {
      const tmp = ownTmp()
      let seen = 0
      const watching = setInterval(() => {
        seen += browsers(tmp).length
      }, 10)
      const exit = yield* Effect.promise(
        () =>
          new Promise<number | null>((resolve) => {
            const child = execFile(process.execPath, [join(root, "src", "Main.ts"), "status"], {
              env: serviceEnv({ ...process.env, TMPDIR: tmp, SWITCHYARD_WARM_BROWSERS: "1" })
            })
            child.once("exit", resolve)
          })
      ).pipe(Effect.ensuring(Effect.sync(() => clearInterval(watching))))
      assert.strictEqual(exit, 0)
      assert.strictEqual(seen, 0, "status started a Chromium")
      assert.deepStrictEqual(profiles(tmp), [])
    })
  )
})
