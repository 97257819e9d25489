/**
 * What a person types into `switchyard apply`'s stdin is read as the service reads its own: a message over the 10 MB
 * limit is refused with -32600 while it arrives (never held whole), and the application and its next lines go on.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LocalChromium from "../../src/Sandbox/Provider/LocalChromium.ts"
import { maxLineBytes } from "../../src/Server/Lines.ts"
import * as AtsServer from "../fixtures/AtsServer.ts"
import { profileFileIn } from "../support/Applicant.ts"
import { type ApplyProcess, startApply } from "../support/Apply.ts"
import { processesMatching } from "../support/Processes.ts"
import { waitFor } from "../support/Wait.ts"

const started: Array<ApplyProcess> = []
const dirs: Array<string> = []

afterEach(async () => {
  for (const p of started.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL")
    await p.exited
  }
  for (const dir of dirs.splice(0)) {
    assert.isTrue(await waitFor(() => processesMatching(dir).length === 0, 10_000), `processes left under ${dir}`)
    await Effect.runPromise(LocalChromium.reapStaleProfiles(dir))
    rmSync(dir, { recursive: true, force: true })
  }
})

describe("switchyard apply's stdin", () => {
  it.live(
    "refuses a message over the size limit as the service does and reads on",
    () =>
      Effect.gen(function* () {
        const ats = yield* AtsServer.start
        const dir = mkdtempSync(join(tmpdir(), "switchyard-apply-stdin-"))
        dirs.push(dir)
        const profile = profileFileIn(dir)
        const apply = startApply(["--job", ats.jobs.lever, "--profile", profile, "--store", join(dir, "store.db")], {
          TMPDIR: dir,
          SWITCHYARD_LOG_DIR: join(dir, "logs")
        })
        started.push(apply)
        const answers: Array<Record<string, any>> = []
        createInterface({ input: apply.child.stdout }).on("line", (line) => answers.push(JSON.parse(line)))

        // A well-formed request, padded past the limit, then an ordinary one.
        const pad = "x".repeat(maxLineBytes + 1_000)
        apply.child.stdin.write(
          `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "apply.status", params: { run: "r", pad } })}\n`
        )
        apply.child.stdin.write(
          `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "apply.status", params: { run: "r" } })}\n`
        )
        const read = yield* Effect.promise(() => waitFor(() => answers.some((a) => a.id === 2), 120_000))
        assert.isTrue(read, `no answer to the line after the long one: ${apply.stderr()}`)

        const refused = answers.filter((a) => a.id === null)
        assert.strictEqual(refused.length, 1, JSON.stringify(answers.map((a) => ({ ...a, error: a.error?.code }))))
        assert.strictEqual(refused[0]!.error.code, -32600)
        assert.match(refused[0]!.error.message, new RegExp(`over the limit of ${maxLineBytes} bytes`))
        // The long request was never handled; the process is still applying.
        assert.isFalse(answers.some((a) => a.id === 1))
        assert.isNull(apply.child.exitCode)
      }),
    180_000
  )
})
