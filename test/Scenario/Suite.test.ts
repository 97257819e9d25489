/**
 * The suite format: the bundled suites load, and a bad file is refused with errors that name the file and the key at
 * fault (unknown keys, wrong types, a step that is neither a tool call nor an instruction, a missing include).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Suite from "../../src/Scenario/Suite.ts"

const scenariosDir = resolve(import.meta.dirname, "../../scenarios")

const write = (dir: string, name: string, value: unknown) => {
  const file = join(dir, name)
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2))
  return file
}

const good = {
  name: "a",
  start: "site:/forms.html",
  steps: [{ instruction: 'click "Subscribe"' }],
  expect: { text: ["Subscribed"] }
}

/** Loads a suite that must fail, and returns its error. */
const refused = (suite: unknown) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-suite-"))
    const file = write(dir, "suite.json", suite)
    const error = yield* Effect.flip(Suite.load(file))
    assert.strictEqual(error._tag, "SuiteError")
    return { error, dir, file }
  })

describe("Suite", () => {
  it.effect("the bundled suites load, defaults applied", () =>
    Effect.gen(function* () {
      const suite = yield* Suite.load(join(scenariosDir, "suite.json"))
      assert.strictEqual(suite.name, "bundled")
      assert.isAtLeast(suite.scenarios.length, 8)
      for (const s of suite.scenarios) {
        assert.strictEqual(s.model, "scripted")
        assert.isNumber(s.seed)
        assert.isTrue(s.start.startsWith("site:"), `${s.name} starts on a bundled site`)
      }
      const policy = Suite.policyOf(suite.scenarios[0]!.engines, { retryCount: 0, timeoutPerAttemptMs: 8_000 })
      assert.isAtLeast(policy.default.levels.length, 1)
      const resilience = yield* Suite.load(join(scenariosDir, "resilience.json"))
      assert.deepStrictEqual(
        resilience.scenarios.map((s) => s.name),
        ["hung-main-thread", "renderer-crash-with-artifacts", "native-dialog"]
      )
    })
  )

  it("levels by name get the given limits; written levels keep their own", () => {
    const policy = Suite.policyOf(
      { levels: ["stagehand:dom", { engine: "playwright", timeoutPerAttemptMs: 1_000 }], totalTimeoutMs: 5_000 },
      { retryCount: 2, timeoutPerAttemptMs: 9_000 }
    )
    assert.deepStrictEqual(policy.default.levels, [
      { engine: "stagehand", mode: "dom", retryCount: 2, timeoutPerAttemptMs: 9_000 },
      { engine: "playwright", retryCount: 2, timeoutPerAttemptMs: 1_000 }
    ])
    assert.strictEqual(policy.default.totalTimeoutMs, 5_000)
  })

  it.effect("an unknown key is named with its path and the file", () =>
    Effect.gen(function* () {
      const { error } = yield* refused({ name: "s", scenarios: [{ ...good, stpes: [] }] })
      assert.include(error.message, "suite.json: scenarios[0].stpes: unknown key")
    })
  )

  it.effect("wrong types and missing keys are named with their paths", () =>
    Effect.gen(function* () {
      const { steps: _, ...noSteps } = good
      const { error } = yield* refused({
        name: "s",
        defaults: { seed: 1.5 },
        scenarios: [{ ...good, seed: "seven" }, noSteps, { ...good, name: "bad name!" }]
      })
      const paths = error.problems.map((p) => p.path)
      assert.include(paths, "defaults.seed")
      assert.include(paths, "scenarios[0].seed")
      assert.include(paths, "scenarios[1].steps")
      assert.include(paths, "scenarios[2].name")
      assert.match(error.message, /suite\.json: scenarios\[1\]\.steps: Missing key/)
    })
  )

  it.effect("a step must be a tool call or an instruction, and the tool must exist", () =>
    Effect.gen(function* () {
      const { error } = yield* refused({
        name: "s",
        scenarios: [
          {
            ...good,
            steps: [
              { instruction: "click x", tool: "browser.act" },
              {},
              { tool: "browser.teleport", args: {} },
              { instruction: "click x", args: { a: 1 } }
            ]
          }
        ]
      })
      const byPath = new Map(error.problems.map((p) => [p.path, p.message]))
      assert.include(byPath.get("scenarios[0].steps[0]"), "exactly one of `tool`")
      assert.include(byPath.get("scenarios[0].steps[1]"), "exactly one of `tool`")
      assert.isTrue(byPath.has("scenarios[0].steps[2].tool"))
      assert.include(byPath.get("scenarios[0].steps[3]"), "`args` belongs to a `tool` step")
    })
  )

  it.effect("engines and models are validated: level names, policies, no keys in files", () =>
    Effect.gen(function* () {
      const { error } = yield* refused({
        name: "s",
        defaults: { engines: { levels: ["stagehand:vision"] }, model: { apiKey: "sk-live-123" } },
        scenarios: [{ ...good, engines: { policy: { default: { levels: [], totalTimeoutMs: 1 } } } }]
      })
      const paths = error.problems.map((p) => p.path)
      assert.isTrue(paths.some((p) => p.startsWith("defaults.engines.levels[0]")))
      assert.isTrue(paths.some((p) => p.startsWith("defaults.model")))
      assert.isTrue(paths.some((p) => p.startsWith("scenarios[0].engines.policy.default.levels")))
    })
  )

  it.effect("included scenario files: errors name the included file; a missing path names the entry", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "switchyard-suite-"))
      mkdirSync(join(dir, "imported"))
      write(join(dir, "imported"), "one.json", { ...good, name: "one", strat: "x" })
      const file = write(dir, "suite.json", { name: "s", scenarios: [good, "imported/", "missing.json"] })
      const error = yield* Effect.flip(Suite.load(file))
      assert.match(error.message, /one\.json: strat: unknown key/)

      write(join(dir, "imported"), "one.json", { ...good, name: "one" })
      const missing = yield* Effect.flip(Suite.load(file))
      assert.match(missing.message, /suite\.json: scenarios\[2\]: no scenario file or directory/)

      write(dir, "suite.json", { name: "s", scenarios: [good, "imported/"] })
      const loaded = yield* Suite.load(file)
      assert.deepStrictEqual(
        loaded.scenarios.map((s) => s.name),
        ["a", "one"]
      )
      assert.strictEqual(loaded.scenarios[1]!.file, join(dir, "imported", "one.json"))
    })
  )

  it.effect("a file that is not JSON, and duplicate names, are refused naming the file", () =>
    Effect.gen(function* () {
      const broken = yield* refused("{ not json")
      assert.match(broken.error.message, /suite\.json: not valid JSON/)
      const twice = yield* refused({ name: "s", scenarios: [good, good] })
      assert.match(twice.error.message, /scenarios\[1\]\.name: duplicate scenario name "a"/)
    })
  )
})
