/**
 * Chromium's sandbox as root (this suite's machine runs as root): the browser runs as an unprivileged user with its
 * sandbox on (renderers under seccomp), `--no-sandbox` only when configured and then reported by `switchyard status`,
 * and a SIGKILLed service's browser — another user's process — still dies with it.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import * as Config from "../../src/Server/Config.ts"
import * as Status from "../../src/Server/Status.ts"
import { isAlive, processesMatching } from "../support/Processes.ts"
import { startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"
import { startSites } from "./Support.ts"

const root = process.getuid?.() === 0

/** A field of /proc/<pid>/status, e.g. `Uid` → "65534 65534 65534 65534". */
const statusField = (pid: number, field: string) =>
  /^(\S+):\s+(.*)$/m.exec(
    readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${field}:`)) ?? ""
  )?.[2] ?? ""

/** The browser's processes: those launched with its profile on the command line. */
const browserProcesses = (profileFlag: string) => processesMatching(profileFlag)

const profileOf = (pid: number) =>
  /--user-data-dir=(\S+)/.exec(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "))?.[1] ?? ""

describe.runIf(root)("Chromium's sandbox when the service runs as root", () => {
  it.live(
    "runs as nobody with its sandbox: no --no-sandbox, renderers under seccomp, the profile owned by that user",
    () =>
      Effect.gen(function* () {
        const browser = yield* LocalChromium.make({}).acquire
        const pid = browser.pid!
        assert.strictEqual(statusField(pid, "Uid").split(/\s+/)[0], "65534")
        const profile = profileOf(pid)
        assert.strictEqual(statSync(profile).uid, 65534)
        const processes = browserProcesses(`--user-data-dir=${profile}`)
        assert.isTrue(processes.every((p) => !p.cmdline.includes("--no-sandbox")))
        // Renderers start with the first page; each runs under a seccomp filter (mode 2), as Chromium's sandbox does.
        const renderers = () => browserProcesses(profile).filter((p) => p.cmdline.includes("--type=renderer"))
        const sandboxed = () => {
          const found = renderers()
          return found.length > 0 && found.every((r) => statusField(r.pid, "Seccomp") === "2")
        }
        // A renderer applies its filter as it starts: give it that moment; one without a sandbox never does.
        assert.isTrue(yield* Effect.promise(() => waitFor(sandboxed, 10_000)))
        assert.isTrue(processes.every((p) => statusField(p.pid, "Uid").split(/\s+/)[0] !== "0"))
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "--no-sandbox only when configured, and switchyard status says so",
    () =>
      Effect.gen(function* () {
        const on = yield* Status.report(yield* Config.resolve({ env: {} }))
        assert.match(on, /sandbox\s+on: Chromium runs as nobody/)
        const off = yield* Status.report(yield* Config.resolve({ env: { SWITCHYARD_NO_SANDBOX: "true" } }))
        assert.match(off, /sandbox\s+OFF: Chromium runs with --no-sandbox/)
        const browser = yield* LocalChromium.make({ noSandbox: true }).acquire
        assert.strictEqual(statusField(browser.pid!, "Uid").split(/\s+/)[0], "0")
        assert.include(readFileSync(`/proc/${browser.pid}/cmdline`, "utf8"), "--no-sandbox")
      }).pipe(Effect.scoped),
    60_000
  )

  it("a user that is not unprivileged is refused, naming the setting", async () => {
    const failure = await Effect.runPromise(Effect.flip(LocalChromium.sandboxing({ user: "root" })))
    assert.include(failure.message, "SWITCHYARD_BROWSER_USER")
    const missing = await Effect.runPromise(Effect.flip(LocalChromium.sandboxing({ user: "no-such-user" })))
    assert.include(missing.message, "no-such-user")
  })

  it("a SIGKILLed service's browser, running as another user, dies with it", { timeout: 60_000 }, async () => {
    const service = startService()
    const sites = await startSites(() => ({ "/hello": "<title>hello</title>" }))
    try {
      const opened = await service.call("browser.navigate", { url: sites.allowedUrl("/hello") })
      assert.isUndefined(opened.error, JSON.stringify(opened.error))
      const status = (await service.call("browser.status", {})).result as { result: { browserPid: number } }
      const pid = status.result.browserPid
      assert.strictEqual(statusField(pid, "Uid").split(/\s+/)[0], "65534")
      const profile = profileOf(pid)
      service.child.kill("SIGKILL")
      await service.exited
      assert.isTrue(await waitFor(() => !isAlive(pid) && browserProcesses(profile).length === 0, 10_000))
    } finally {
      await stopServices()
      await sites.close()
    }
  })

  it("a file chosen from the service's private folder reaches the page and the site", { timeout: 90_000 }, async () => {
    // The résumé sits where only the service's user can read it (mode 0700), as files under /root do.
    const folder = mkdtempSync(join(tmpdir(), "switchyard-private-"))
    const content = `résumé ${Math.random().toString(36).slice(2)}`
    writeFileSync(join(folder, "cv.txt"), content)
    const service = startService({ SWITCHYARD_UPLOAD_ROOTS: folder })
    // A styled button opens the chooser of a hidden input; the page previews the file, the form posts it.
    const sites = await startSites(() => ({
      "/apply": `<!doctype html><title>Apply</title>
<form method="post" action="/sent" enctype="multipart/form-data">
  <input type="file" id="cv" name="cv" hidden onchange="this.files[0].text().then((t) => { document.getElementById('preview').textContent = 'Preview: ' + t })">
  <button type="button" onclick="document.getElementById('cv').click()">Upload your CV</button>
  <p id="preview"></p>
  <button type="submit">Send application</button>
</form>`,
      "/sent": (body: string) =>
        `<!doctype html><title>Sent</title><p>${body.includes(content) ? "the file arrived" : "no file"}</p>`
    }))
    try {
      const opened = await service.call("browser.navigate", { url: sites.allowedUrl("/apply") })
      assert.isUndefined(opened.error, JSON.stringify(opened.error))
      const uploaded = await service.call("browser.upload", {
        files: [join(folder, "cv.txt")],
        target: "Upload your CV"
      })
      assert.isUndefined(uploaded.error, JSON.stringify(uploaded.error))
      const page = (await service.call("browser.extract", {})).result as { result: { text: string } }
      assert.include(page.result.text, `Preview: ${content}`)
      const sent = await service.call("browser.act", { instruction: 'click "Send application"' })
      assert.isUndefined(sent.error, JSON.stringify(sent.error))
      const after = (await service.call("browser.extract", {})).result as { result: { text: string; url: string } }
      assert.include(after.result.text, "the file arrived", after.result.url)
    } finally {
      await stopServices()
      await sites.close()
      rmSync(folder, { recursive: true, force: true })
    }
  })
})
