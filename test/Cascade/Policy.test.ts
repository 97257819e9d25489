import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Policy from "../../src/Cascade/Policy.ts"

describe("Policy", () => {
  it("knows the job platforms from the page URL", () => {
    assert.strictEqual(Policy.platformOf("https://www.linkedin.com/jobs/view/1"), "linkedin")
    assert.strictEqual(Policy.platformOf("https://boards.greenhouse.io/acme/jobs/2"), "greenhouse")
    assert.strictEqual(Policy.platformOf("https://jobs.lever.co/acme/3"), "lever")
    assert.strictEqual(Policy.platformOf("https://acme.wd5.myworkdayjobs.com/en-US/careers"), "workday")
    assert.strictEqual(Policy.platformOf("https://notlinkedin.com.evil.test/"), "unknown")
    assert.strictEqual(Policy.platformOf(undefined), "unknown")
  })

  it("starts Workday with Magnitude and everything else with Stagehand DOM, Playwright before the person", () => {
    const workday = Policy.cascadeFor(Policy.defaultPolicy, "https://acme.myworkdayjobs.com/x")
    assert.strictEqual(workday.levels[0]?.engine, "magnitude")
    const other = Policy.cascadeFor(Policy.defaultPolicy, "https://example.test/")
    assert.deepStrictEqual(
      other.levels.map((l) => (l.mode ? `${l.engine}:${l.mode}` : l.engine)),
      ["stagehand:dom", "stagehand:cua", "magnitude", "playwright", "human"]
    )
  })

  it("drops levels skipped for the page's platform", () => {
    const policy: Policy.Policy = {
      default: {
        totalTimeoutMs: 1_000,
        levels: [
          { engine: "stagehand", mode: "cua", retryCount: 0, timeoutPerAttemptMs: 10, skipForPlatforms: ["lever"] },
          { engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 10 }
        ]
      }
    }
    assert.deepStrictEqual(
      Policy.cascadeFor(policy, "https://jobs.lever.co/x").levels.map((l) => l.engine),
      ["playwright"]
    )
  })

  it.effect("loads from a file, and a bad file names what is wrong", () =>
    Effect.gen(function* () {
      const good = join(tmpdir(), `policy-good-${process.pid}.json`)
      writeFileSync(
        good,
        JSON.stringify({
          default: { totalTimeoutMs: 5000, levels: [{ engine: "playwright", retryCount: 1, timeoutPerAttemptMs: 900 }] }
        })
      )
      const loaded = yield* Policy.load(good)
      assert.strictEqual(loaded.default.levels[0]?.timeoutPerAttemptMs, 900)
      const bad = join(tmpdir(), `policy-bad-${process.pid}.json`)
      writeFileSync(
        bad,
        JSON.stringify({ default: { totalTimeoutMs: 5000, levels: [{ engine: "selenium", retryCount: -1 }] } })
      )
      const error = yield* Effect.flip(Policy.load(bad))
      assert.strictEqual(error.type, "invalid_input")
      assert.match(error.message, /engine|retryCount/)
    })
  )

  it.effect("says when a person is handed the page: by default not for a page miss", () =>
    Effect.gen(function* () {
      const cascade = Policy.defaultCascade
      assert.isTrue(Policy.handsToPerson(cascade, "engines_exhausted"))
      assert.isTrue(Policy.handsToPerson(cascade, "human_check"))
      assert.isTrue(Policy.handsToPerson(cascade, "agent_request"))
      assert.isFalse(Policy.handsToPerson(cascade, "page_miss"))
      const levels = [{ engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 900 }]
      const decoded = yield* Policy.decode({ default: { totalTimeoutMs: 5000, levels, handToPerson: ["page_miss"] } })
      assert.isTrue(Policy.handsToPerson(decoded.default, "page_miss"))
      assert.isFalse(Policy.handsToPerson(decoded.default, "engines_exhausted"))
      const wrong = yield* Effect.flip(
        Policy.decode({ default: { totalTimeoutMs: 5000, levels, handToPerson: ["whenever"] } })
      )
      assert.strictEqual(wrong.type, "invalid_input")
      assert.include(wrong.message, "handToPerson")
    })
  )
})
