/**
 * `node bench/Cluster.ts [--quick]`: the fleet measured on this machine with real runner processes on a throwaway
 * PostgreSQL — sessions per runner × runners (1, 2, 3), the cost of routing a call to another runner against the
 * same call on a single-process service (ratio), failover time (SIGKILL → the next call answered elsewhere), and a
 * job application's wall time per step. Prints a Markdown report and writes it to bench/CLUSTER.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Redacted } from "effect"
import * as Postgres from "../src/Cluster/Postgres.ts"
import * as AtsServer from "../test/fixtures/AtsServer.ts"
import { type Service, startService, stopServices } from "../test/support/Service.ts"
import { waitFor } from "../test/support/Wait.ts"
import * as Stats from "./Stats.ts"

const quick = process.argv.includes("--quick")
const runDir = mkdtempSync(join(tmpdir(), "switchyard-bench-cluster-"))
process.env.TMPDIR = runDir
const failoverMs = 2_000
const perRunner = 2
const calls = quick ? 8 : 30
const failovers = quick ? 1 : 3

const lines: Array<string> = []
const out = (line = "") => {
  lines.push(line)
  process.stdout.write(`${line}\n`)
}

/** A Markdown table with padded columns, as the formatter writes them. */
const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = head.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`
  out(line(head))
  out(`| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`)
  for (const row of rows) out(line(row))
}

const ok = (answer: Record<string, unknown>) => answer.error === undefined

/** A fleet on a fresh database for one measurement; everything stops with the scope. */
const withFleet = <A>(f: (fleet: { url: string; runner: (name: string) => Promise<Service> }) => Promise<A>) =>
  Effect.gen(function* () {
    const pg = yield* Postgres.start
    const url = Redacted.value(pg.url)
    const runner = async (name: string) => {
      const service = startService(
        {
          DATABASE_URL: url,
          SWITCHYARD_RUNNERS: "r1,r2,r3",
          SWITCHYARD_FAILOVER_MS: String(failoverMs),
          SWITCHYARD_UPLOAD_ROOTS: runDir
        },
        ["--jsonrpc", "--runner", name, "--max-browsers", String(perRunner)]
      )
      await service.stderrLine(/ready, JSON-RPC/)
      return service
    }
    return yield* Effect.promise(() => f({ url, runner }).finally(stopServices))
  }).pipe(Effect.scoped)

const program = Effect.gen(function* () {
  const ats = yield* AtsServer.start
  out("# Fleet benchmark")
  out()
  out(
    `Machine: ${cpus().length} cores; runners are \`switchyard serve --jsonrpc\` processes on one PostgreSQL (Debian's, on 127.0.0.1), ${perRunner} browsers each, \`SWITCHYARD_FAILOVER_MS=${failoverMs}\`; fixture pages on 127.0.0.1.${quick ? " Quick run: few samples." : ""}`
  )

  // 1. Sessions per runner × runners: open one more session than the fleet holds, all at once, at one front door.
  out()
  out("## Sessions per runner × runners")
  out()
  const capacity: Array<Array<string>> = []
  for (const n of [1, 2, 3]) {
    const row = yield* withFleet(async ({ runner }) => {
      const runners: Array<Service> = []
      for (let i = 1; i <= n; i++) runners.push(await runner(`r${i}`))
      const started = performance.now()
      const answers = await Promise.all(
        Array.from({ length: n * perRunner + 1 }, (_, i) =>
          runners[0]!.call("browser.navigate", { session: `c${i}`, url: ats.storage })
        )
      )
      const wall = performance.now() - started
      const opened = answers.filter(ok).length
      return [
        String(n),
        String(opened),
        String(answers.length - opened),
        (opened / n).toFixed(1),
        `${Math.round(wall)} ms`
      ]
    })
    capacity.push(row)
  }
  table(["runners", "sessions opened", "answered busy", "per runner", "wall time to open all"], capacity)

  // 2. Routing overhead: the same call on a single-process service, on a fleet runner holding the session, and at
  // another runner's front door (routed over the cluster's RPC), interleaved.
  const routing = yield* withFleet(async ({ runner }) => {
    const r1 = await runner("r1")
    const r2 = await runner("r2")
    const single = startService({}, ["--jsonrpc"])
    await single.stderrLine(/ready, JSON-RPC/)
    await single.call("browser.navigate", { url: ats.storage })
    await r1.call("browser.navigate", { session: "s", url: ats.storage })
    const samples = { direct: [] as Array<number>, local: [] as Array<number>, routed: [] as Array<number> }
    const args = { instruction: "the page" }
    for (let i = 0; i < calls + 2; i++) {
      const d = await Stats.time(() => single.call("browser.extract", args))
      const l = await Stats.time(() => r1.call("browser.extract", { session: "s", ...args }))
      const r = await Stats.time(() => r2.call("browser.extract", { session: "s", ...args }))
      if (i < 2) continue
      samples.direct.push(d.ms)
      samples.local.push(l.ms)
      samples.routed.push(r.ms)
    }
    return samples
  })
  out()
  out("## Routing overhead per call (`browser.extract` on a small page, JSON-RPC round trip)")
  out()
  table(
    ["path", "median", "ratio to single-process (median of pairs)"],
    [
      ["single-process service (no database)", Stats.show(Stats.summarize(routing.direct)), "1"],
      [
        "fleet, asked at the runner holding the browser",
        Stats.show(Stats.summarize(routing.local)),
        String(Stats.ratios(routing.local, routing.direct).median)
      ],
      [
        "fleet, asked at another runner (routed)",
        Stats.show(Stats.summarize(routing.routed)),
        String(Stats.ratios(routing.routed, routing.direct).median)
      ]
    ]
  )

  // 3. Failover: the runner holding a session is killed; the next call at another front door is timed until it is
  // answered (restored on a live runner). The killed runner's name comes back as a fresh process for the next trial.
  const failover = yield* withFleet(async ({ runner }) => {
    const live: Record<string, Service> = { r1: await runner("r1"), r2: await runner("r2") }
    const times: Array<number> = []
    for (let trial = 0; trial < failovers; trial++) {
      const session = `f${trial}`
      await live.r2!.call("browser.navigate", { session, url: ats.storage })
      await live.r2!.call("browser.navigate", { session, url: ats.storage })
      live.r2!.child.kill("SIGKILL")
      await live.r2!.exited
      const killed = performance.now()
      await waitFor(async () => ok(await live.r1!.call("browser.extract", { session, instruction: "x" })), 60_000)
      times.push(performance.now() - killed)
      await live.r1!.call("browser.close", { session })
      live.r2 = await runner("r2")
    }
    return times
  })
  out()
  out(`## Failover (SIGKILL of the runner holding the session → the next call answered on another)`)
  out()
  out(`${Stats.show(Stats.summarize(failover, 0))}; the runner is taken for dead after ${failoverMs} ms of silence`)
  out("(the cluster's default shard-lock settings would take 35–95 s); the rest is a new browser and the restore.")

  // 4. A job application's wall time per step on the fleet, model-free, on the three fixture sites (no human check
  // on the Lever-like site here: its captcha waits for a person).
  const steps = yield* withFleet(async ({ runner }) => {
    const r1 = await runner("r1")
    await runner("r2")
    const resume = join(runDir, "resume.pdf")
    writeFileSync(resume, "%PDF-1.4\n% bench\n")
    const profile = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+1 555", resume }
    const durations: Record<string, Array<number>> = {}
    for (const job of [ats.jobs.greenhouse, ats.jobs.workday]) {
      const started = (await r1.call("apply.start", { job, profile })).result as { run: string }
      let status: { events: Array<{ eventType: string; data: Record<string, unknown> }>; result: unknown } = {
        events: [],
        result: null
      }
      await waitFor(async () => {
        status = (await r1.call("apply.status", { run: started.run })).result as typeof status
        return status.result !== null
      }, 120_000)
      for (const e of status.events.filter((e) => e.eventType === "step_completed")) {
        const step = String(e.data.step)
        durations[step] = [...(durations[step] ?? []), Number(e.data.durationMs)]
      }
    }
    return durations
  })
  out()
  out("## Job application wall time per step (fleet of 2, Greenhouse- and Workday-like fixtures, model-free)")
  out()
  table(
    ["step", "median", "runs"],
    Object.entries(steps).map(([step, ms]) => [step, `${Stats.summarize(ms, 0).median} ms`, String(ms.length)])
  )
  writeFileSync(join(import.meta.dirname, "CLUSTER.md"), `${lines.join("\n")}\n`)
}).pipe(Effect.scoped)

Effect.runPromise(program)
  .then(
    () => 0,
    (error) => {
      process.stderr.write(`bench failed: ${error}\n`)
      return 1
    }
  )
  .then(async (code) => {
    await stopServices()
    rmSync(runDir, { recursive: true, force: true })
    process.exit(code)
  })
