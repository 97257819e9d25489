import { defineConfig } from "vitest/config"

// Real-browser tests start their own Chromium; two cores allow two such files at once.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".test-report/vitest.json" }]] : ["default"]
  }
})
