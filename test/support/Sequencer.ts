/**
 * The order test files start in: longest first, so the two workers finish together instead of one running a long
 * file alone at the end. A clean clone has no timings of its own (vitest would start the largest files first).
 */
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * Seconds each slow file took in CI on two cores (`.test-report/vitest.json`, end minus start time); each web-patterns
 * part is a quarter of the suite. A file not listed starts after these, larger files first.
 */
const measured: Record<string, number> = {
  "test/Cluster/FleetSubmit.integration.test.ts": 132,
  "test/Apply/ExactlyOnce.integration.test.ts": 132,
  "test/Cluster/Fleet.integration.test.ts": 118,
  "test/Web/Patterns1.integration.test.ts": 80,
  "test/Web/Patterns2.integration.test.ts": 80,
  "test/Web/Patterns3.integration.test.ts": 80,
  "test/Web/Patterns4.integration.test.ts": 80,
  "test/Apply/Retry.integration.test.ts": 70,
  "test/Engine/MagnitudeEngine.integration.test.ts": 68,
  "test/Cluster/FleetApply.integration.test.ts": 66,
  "test/Apply/Apply.integration.test.ts": 56,
  "test/Server/SloppyAgent.integration.test.ts": 56,
  "test/Egress/Routes.integration.test.ts": 51,
  "test/Main.integration.test.ts": 47,
  "test/Main/Cli.integration.test.ts": 44,
  "test/Scenario/Suite.integration.test.ts": 43,
  "test/Cluster/Dashboard.integration.test.ts": 42,
  "test/Server/Takeover.integration.test.ts": 41,
  "test/Cascade/Replay.integration.test.ts": 40,
  "test/Sandbox/Sandbox.integration.test.ts": 39,
  "test/Chaos/Chaos.integration.test.ts": 39,
  "test/Security/HostilePage.integration.test.ts": 39,
  "test/Server/Restore.integration.test.ts": 36,
  "test/Server/Human.integration.test.ts": 36,
  "test/Engine/HumanEngine.integration.test.ts": 33,
  "test/Server/BadInput.integration.test.ts": 33,
  "test/Server/PageTools.integration.test.ts": 33,
  "test/Engine/StagehandEngine.cua.integration.test.ts": 31
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    // vitest's own order (timings of earlier runs on this machine, else size) breaks the ties among the rest.
    const base = await super.sort(files)
    const seconds = (spec: TestSpecification) =>
      measured[relative(spec.project.config.root, spec.moduleId).split("\\").join("/")] ?? 0
    return base
      .map((spec, i) => ({ spec, i, s: seconds(spec) }))
      .sort((a, b) => b.s - a.s || a.i - b.i)
      .map(({ spec }) => spec)
  }
}
