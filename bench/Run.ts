/**
 * `npm run bench`: every figure measured side by side in one run on local fixture pages, printed as tables and
 * written to bench/results.json and bench/RESULTS.md. `--quick` runs a few iterations of each (a smoke test);
 * `--only overhead,switch,cold,crash,hibernate,sessions,memory,web,peers,density,replay` runs some of them; `--report` rewrites RESULTS.md from
 * results.json without measuring.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, release, tmpdir, totalmem, type } from "node:os"
import { join } from "node:path"
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as LocalChromium from "../src/Sandbox/Provider/LocalChromium.ts"
import { processesMatching } from "../test/support/Processes.ts"
import { stopServices } from "../test/support/Service.ts"
import { waitFor } from "../test/support/Wait.ts"
import * as ColdStart from "./ColdStart.ts"
import * as Crash from "./Crash.ts"
import * as Density from "./Density.ts"
import * as Findings from "./Findings.ts"
import * as Hibernate from "./Hibernate.ts"
import * as Memory from "./Memory.ts"
import * as Overhead from "./Overhead.ts"
import * as Peers from "./Peers.ts"
import * as Replay from "./Replay.ts"
import * as Report from "./Report.ts"
import * as Sessions from "./Sessions.ts"
import * as Switch from "./Switch.ts"
import * as Web from "./Web.ts"

// Magnitude's model client logs to stdout unless told not to; the bench prints its own tables there.
process.env.BAML_LOG ??= "off"
// Everything the bench and its services put in the temp directory (profiles, logs) lives here and goes at the end.
const runDir = mkdtempSync(join(tmpdir(), "switchyard-bench-run-"))
process.env.TMPDIR = runDir

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const onlyArg = args[args.indexOf("--only") + 1]
const only = args.includes("--only") && onlyArg ? new Set(onlyArg.split(",")) : undefined
const wanted = (part: string) => only === undefined || only.has(part)

const counts = quick
  ? {
      overhead: 5,
      warmup: 1,
      switchRounds: 2,
      coldStarts: 2,
      crashes: 3,
      hibernations: 2,
      sessionRounds: 1,
      sequences: 4,
      lifecycles: 4,
      calls: 1_000,
      gcCalls: 400,
      webRounds: 1,
      peerRounds: 5,
      peerSpawns: 2,
      densityLevels: [1, 4],
      densitySequences: 2,
      replayK: 1
    }
  : {
      overhead: 50,
      warmup: 3,
      switchRounds: 6,
      coldStarts: 4,
      crashes: 8,
      hibernations: 8,
      sessionRounds: 2,
      sequences: 8,
      lifecycles: 12,
      calls: 5_000,
      gcCalls: 1_000,
      webRounds: 3,
      peerRounds: 30,
      peerSpawns: 5,
      densityLevels: [1, 4, 8],
      densitySequences: 4,
      replayK: 3
    }
const checkpoints = [100, 250, 500, 1_000, 2_000, 3_000, 4_000, 5_000].filter((n) => n <= counts.calls)

const chromiumVersion = () => {
  try {
    const executable = Effect.runSync(LocalChromium.findExecutable())
    const out = execFileSync(executable, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
    return out.trim().split("\n").pop() ?? "unknown"
  } catch {
    return "unknown"
  }
}

const log = (line: string) => process.stdout.write(`${line}\n`)
const started = Date.now()
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`

const load = { start: Math.round(loadavg()[0]! * 100) / 100 }

const part = <A, E>(name: string, self: Effect.Effect<A, E>) =>
  wanted(name)
    ? Effect.sync(() => log(`[${elapsed()}] ${name}…`)).pipe(
        Effect.andThen(self),
        Effect.map((a) => a as A | undefined)
      )
    : Effect.succeed(undefined)

const program = Effect.gen(function* () {
  log(
    `switchyard bench: iterations — overhead ${counts.overhead} (+${counts.warmup} warm-up) per variant, switch ${counts.switchRounds} rounds × 16 pairs, cold start ${counts.coldStarts} × 2, crash ${counts.crashes}, hibernate ${counts.hibernations} × 2, sessions ${counts.sessionRounds} rounds × (1, 2, 4, 8) sessions × ${counts.sequences} sequences per level, memory ${counts.calls} calls (+ ${counts.gcCalls} with forced GCs), peers ${counts.peerRounds} rounds × 3 servers (+ ${counts.peerSpawns} spawns each), density (${counts.densityLevels.join(", ")}) sessions × ${counts.densitySequences} sequences, replay the suite twice × k ${counts.replayK}`
  )
  const overhead = yield* part("overhead", Overhead.run({ iterations: counts.overhead, warmup: counts.warmup }))
  const switching = yield* part("switch", Switch.run({ rounds: counts.switchRounds }))
  const coldStart = yield* part("cold", ColdStart.run({ runs: counts.coldStarts }))
  const crash = yield* part("crash", Crash.run({ runs: counts.crashes }))
  const hibernate = yield* part("hibernate", Hibernate.run({ runs: counts.hibernations }))
  const sessions = yield* part(
    "sessions",
    Sessions.run({ rounds: counts.sessionRounds, sequencesPerLevel: counts.sequences, lifecycles: counts.lifecycles })
  )
  const memory = yield* part(
    "memory",
    Memory.run({
      operations: counts.calls,
      checkpoints,
      screenshots: false,
      gcRun: { operations: counts.gcCalls, checkpoints: [100, counts.gcCalls / 2, counts.gcCalls] },
      onProgress: (line) => log(`  ${line}`)
    })
  )
  const web = yield* part("web", Web.run({ rounds: counts.webRounds }))
  const peers = yield* part("peers", Peers.run({ rounds: counts.peerRounds, spawns: counts.peerSpawns }))
  const density = yield* part(
    "density",
    Density.run({ levels: counts.densityLevels, sequences: counts.densitySequences })
  )
  const replay = yield* part("replay", Replay.run({ k: counts.replayK }))
  return { overhead, switching, coldStart, crash, hibernate, sessions, memory, web, peers, density, replay }
})

const main = Effect.gen(function* () {
  const measured = yield* program.pipe(Effect.ensuring(Effect.promise(stopServices)))
  const base = {
    machine: {
      cpu: cpus()[0]?.model.trim() ?? "unknown",
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      os: `${type()} ${release()}`,
      node: process.version,
      chromium: chromiumVersion()
    },
    startedAt: new Date(started).toISOString(),
    durationS: Math.round((Date.now() - started) / 1000),
    load: { ...load, end: Math.round(loadavg()[0]! * 100) / 100 },
    counts: {
      "overhead iterations": counts.overhead,
      "switch rounds": counts.switchRounds,
      "cold starts": counts.coldStarts,
      crashes: counts.crashes,
      "hibernation rounds (2 sessions each)": counts.hibernations,
      "session rounds": counts.sessionRounds,
      "sequences per session level": counts.sequences,
      "memory calls": counts.calls,
      "memory calls with forced GCs": counts.gcCalls,
      "web pattern rounds": counts.webRounds,
      "peer rounds": counts.peerRounds,
      "peer spawns for initialize": counts.peerSpawns,
      "density sequences per session": counts.densitySequences,
      "replay: runs of each scenario per suite run (k)": counts.replayK
    },
    ...(measured.overhead ? { overhead: measured.overhead } : {}),
    ...(measured.switching ? { switch: measured.switching } : {}),
    ...(measured.coldStart ? { coldStart: measured.coldStart } : {}),
    ...(measured.crash ? { crash: measured.crash } : {}),
    ...(measured.hibernate ? { hibernate: measured.hibernate } : {}),
    ...(measured.sessions ? { sessions: measured.sessions } : {}),
    ...(measured.memory ? { memory: measured.memory } : {}),
    ...(measured.web ? { web: measured.web } : {}),
    ...(measured.peers ? { peers: measured.peers } : {}),
    ...(measured.density ? { density: measured.density } : {}),
    ...(measured.replay ? { replay: measured.replay } : {})
  }
  const results: Report.Results = { ...base, targets: Report.targets(base) }
  const notes = Findings.notes(results)
  for (const section of Report.sections(results)) log(`\n${section}`)
  for (const note of notes) log(`\n${note}`)
  if (!quick && only === undefined) {
    writeFileSync(join(import.meta.dirname, "results.json"), `${JSON.stringify(results, null, 2)}\n`)
    writeFileSync(join(import.meta.dirname, "RESULTS.md"), Report.markdown(results, notes))
    log(`\nwrote bench/results.json and bench/RESULTS.md (${elapsed()})`)
  } else log(`\n(--quick or --only: bench/results.json and bench/RESULTS.md left as they are) (${elapsed()})`)
})

/** RESULTS.md again from results.json, for when the report's wording changes. */
const rewrite = Effect.sync(() => {
  const results = JSON.parse(readFileSync(join(import.meta.dirname, "results.json"), "utf8")) as Report.Results
  writeFileSync(join(import.meta.dirname, "RESULTS.md"), Report.markdown(results, Findings.notes(results)))
  log("rewrote bench/RESULTS.md from bench/results.json")
})

// Ctrl-C interrupts the run: browsers, services and temp profiles are released on the way out.
const cleanUp = Effect.promise(async () => {
  await waitFor(() => processesMatching(runDir).length === 0, 5_000)
  for (const p of processesMatching(runDir)) {
    log(`left running, killed: ${p.pid} ${p.cmdline.slice(0, 120)}`)
    try {
      process.kill(p.pid, "SIGKILL")
    } catch {
      // gone meanwhile
    }
  }
  rmSync(runDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
})
NodeRuntime.runMain((args.includes("--report") ? rewrite : main).pipe(Effect.ensuring(cleanUp)))
