import { defineConfig } from "vitest/config"
import { LongestFirst } from "./test/support/Sequencer.ts"

// Real-browser tests start their own Chromium; two cores allow two such files at once.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Longest files first, also on a clean clone: the run ends when the slowest worker does.
    sequence: { sequencer: LongestFirst },
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".test-report/vitest.json" }]] : ["default"]
  }
})
