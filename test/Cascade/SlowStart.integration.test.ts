/**
 * A browser that starts slowly (a loaded machine, a cold disk) is not counted against the first attempt's time limit:
 * the call arrives, and the browser is started once, not once per attempt the limit stopped.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Cascade } from "../../src/Cascade/Cascade.ts"
import { Engines } from "../../src/Cascade/Engines.ts"
import { Router } from "../../src/Cascade/Router.ts"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { Sandbox } from "../../src/Sandbox/Sandbox.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"

/** A launcher that takes `seconds` before the real Chromium runs, and counts its starts in `count`. */
const slowLauncher = (seconds: number, executable: string) => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-slow-launcher-"))
  // Chromium runs as an unprivileged user when the service runs as root: it must read the script and write the count.
  chmodSync(dir, 0o777)
  const count = join(dir, "starts")
  const script = join(dir, "chromium")
  writeFileSync(script, `#!/bin/sh\necho start >> '${count}'\nsleep ${seconds}\nexec '${executable}' "$@"\n`)
  chmodSync(script, 0o755)
  return { script, count }
}

describe("a slow browser start", () => {
  it.live("is not counted against the first attempt's time limit, and happens once", () =>
    Effect.gen(function* () {
      const site = yield* SiteServer.start
      const launcher = slowLauncher(2, yield* LocalChromium.findExecutable())
      const context = yield* Layer.build(
        Router.layer({
          policy: {
            default: {
              levels: [{ engine: "playwright", retryCount: 1, timeoutPerAttemptMs: 1_500 }],
              totalTimeoutMs: 20_000
            }
          }
        }).pipe(
          Layer.provideMerge(Cascade.layer),
          Layer.provideMerge(Engines.layer({})),
          Layer.provideMerge(Sandbox.layer()),
          Layer.provide(LocalChromium.layer({ executablePath: launcher.script }))
        )
      )
      const router = Context.get(context, Router)
      const answer = yield* router.call("browser.navigate", { url: site.url("/forms.html") })
      assert.isTrue(answer.ok, JSON.stringify(answer.error))
      assert.strictEqual(answer.state.url, site.url("/forms.html"))
      assert.strictEqual(readFileSync(launcher.count, "utf8").trim().split("\n").length, 1, "one browser start")
    })
  )
})
