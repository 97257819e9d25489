/**
 * A person operating `switchyard apply`: the steps on stderr as they start and end, with durations; a hand-off that
 * says what is needed, where (the noVNC page, when human takeover is on) and the exact command that ends it; and
 * that command, typed as printed in another terminal, ending it. Real processes, a real Chromium on a VNC display, the
 * Lever-like site's human check.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { missingTools } from "../../src/Sandbox/Provider/Vnc/Tools.ts"
import * as AtsServer from "../fixtures/AtsServer.ts"
import { profileFileIn } from "../support/Applicant.ts"
import { cleanedAfterEach, resumeCli, startApply } from "../support/Apply.ts"
import { waitFor } from "../support/Wait.ts"

const { started, dirs } = cleanedAfterEach()

const missing = missingTools()
const skipReason = missing.length > 0 ? ` [skipped: needs ${missing.map((m) => m.tool).join(", ")}]` : ""

describe("a person operating switchyard apply", () => {
  it.live.skipIf(missing.length > 0)(
    `steps print as they go; the human check names the noVNC page and the command; switchyard resume ends it${skipReason}`,
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const dir = mkdtempSync(join(tmpdir(), "switchyard-operate-"))
        dirs.push(dir)
        const profile = profileFileIn(dir)
        const store = join(dir, "store.db")
        const apply = startApply(["--job", ats.jobs.lever, "--profile", profile, "--store", store], {
          TMPDIR: dir,
          SWITCHYARD_LOG_DIR: join(dir, "logs"),
          SWITCHYARD_HUMAN: "on",
          // The person's takeover of the screen ends after 3 s: then the test's "person" types through stdin.
          SWITCHYARD_HUMAN_TIMEOUT_MS: "3000"
        })
        started.push(apply)
        const asked = yield* Effect.promise(() =>
          waitFor(() => /when done: switchyard resume/.test(apply.stderr()), 150_000)
        )
        assert.isTrue(asked, apply.stderr())
        const err = apply.stderr()
        // Each step as it starts and ends, with its duration.
        for (const step of ["start-browser", "analyze-form", "fill-fields", "upload-resume"]) {
          assert.match(err, new RegExp(`switchyard apply: ${step} started`))
          assert.match(err, new RegExp(`switchyard apply: ${step} done in \\d+\\.\\d s`))
        }
        // What, where and how to end it.
        assert.match(err, /check-captcha needs a person: a human check is on http/)
        const screen = /on screen at (http:\/\/\S+)/.exec(err)?.[1]
        assert.isString(screen, err)
        // The link opens the takeover's page with its password in the fragment; the page goes on to noVNC.
        assert.match(screen!, /#password=\w+/)
        const page = yield* Effect.promise(() => fetch(new URL("vnc.html", screen!)).then((r) => r.text()))
        assert.match(page, /noVNC/i)
        // The exact command, as printed: with this run's own store named, since another shell would not find it.
        const command = /when done: (switchyard resume .*)$/m.exec(err)?.[1]
        assert.strictEqual(command, `switchyard resume ${/session (apply-\w+)/.exec(err)?.[1]} --store ${store}`, err)
        const session = command!.split(" ")[2]!

        // The person solves the check (after the takeover's time, through the session) and resumes from a terminal.
        yield* Effect.sleep("4 seconds")
        const typed = yield* Effect.promise(() =>
          apply.call("browser.act", {
            session,
            action: { selector: '[name="captcha"]', method: "fill", arguments: [ats.captchaCode], description: "code" }
          })
        )
        assert.isUndefined(typed.error, JSON.stringify(typed.error))
        yield* Effect.promise(() =>
          apply.call("browser.act", {
            session,
            action: { selector: "button", method: "click", arguments: [], description: "Verify" }
          })
        )
        // Typed in another terminal: its home folder elsewhere, so only what the command names finds the store.
        const resumed = yield* Effect.promise(() => resumeCli(command!.split(" ").slice(2), { HOME: dir }))
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.match(resumed.stderr, /resumed check-captcha/)
        const done = yield* Effect.promise(() => apply.done)
        assert.isTrue(done.ok, `${JSON.stringify(done)}\n${apply.stderr()}`)
        assert.match(apply.stderr(), /check-captcha: a person resumed it/)
        assert.strictEqual(ats.submissions().length, 1)
      }),
    240_000
  )
})
