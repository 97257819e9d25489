/** The bench's results as a console table, `bench/results.json` and `bench/RESULTS.md`, with the targets judged. */
import type { ColdStartResult } from "./ColdStart.ts"
import type { CrashResult } from "./Crash.ts"
import type { DensityResult } from "./Density.ts"
import type { HibernateResult } from "./Hibernate.ts"
import type { MemoryResult } from "./Memory.ts"
import { labels, type OverheadResult, variants } from "./Overhead.ts"
import * as Peers from "./Peers.ts"
import * as Replay from "./Replay.ts"
import { cloudFigures, type SessionsResult } from "./Sessions.ts"
import type * as Stats from "./Stats.ts"
import type { SwitchResult } from "./Switch.ts"
import type { WebResult } from "./Web.ts"

export interface Machine {
  readonly cpu: string
  readonly cores: number
  readonly memoryGiB: number
  readonly os: string
  readonly node: string
  readonly chromium: string
}

export interface Results {
  readonly machine: Machine
  readonly startedAt: string
  readonly durationS: number
  /** 1-minute load averages at the start and the end: other work on the machine shows here. */
  readonly load: { readonly start: number; readonly end: number }
  readonly counts: Record<string, number>
  readonly overhead?: OverheadResult
  readonly switch?: SwitchResult
  readonly coldStart?: ColdStartResult
  readonly crash?: CrashResult
  readonly hibernate?: HibernateResult
  readonly sessions?: SessionsResult
  readonly memory?: MemoryResult
  readonly web?: WebResult
  readonly peers?: Peers.PeersResult
  readonly density?: DensityResult
  readonly replay?: Replay.ReplayResult
  readonly targets: ReadonlyArray<Target>
}

export interface Target {
  readonly figure: string
  readonly target: string
  readonly measured: string
  readonly met: boolean
}

/** The batch-fill task: ours takes no more calls and no more time than any peer's with its own batch fill. */
const batchTargets = (
  ours: Peers.ServerResult,
  others: ReadonlyArray<readonly [string, Peers.ServerResult]>
): Array<Target> => {
  const mine = ours.batch
  if (mine === undefined) return []
  return [
    {
      figure: "peers: the sign-up task with each server's batch fill, p50: calls and wall time against every peer",
      target: "≤ each",
      measured: `${mine.callsPerTask} calls, ${mine.task.median} ms vs ${others.map(([id, s]) => `${id} ${s.batch?.callsPerTask} calls, ${s.batch?.task.median} ms`).join("; ")}`,
      met:
        mine.failures === 0 &&
        mine.tasks > 0 &&
        others.every(
          ([, s]) =>
            s.batch !== undefined &&
            mine.callsPerTask <= s.batch.callsPerTask &&
            mine.task.median <= s.batch.task.median
        )
    }
  ]
}

/** A server and the browser of its one session, USS: what one more session of it costs beyond shared pages. */
const sessionUss = (s: Peers.ServerResult) => Math.round((s.memory.serviceUssMiB + s.memory.browserUssMiB) * 10) / 10

/** Target 6: ours against the peers on the same task, in the default configuration. */
const peerTargets = (p: Peers.PeersResult): Array<Target> => {
  const ours = p.servers.switchyard
  const pw = p.servers["playwright-mcp"]
  const others = Peers.servers.filter((id) => id !== "switchyard").map((id) => [id, p.servers[id]] as const)
  const fastest = others.reduce((a, b) => (b[1].task.median < a[1].task.median ? b : a))
  const lightest = others.reduce((a, b) => (b[1].textBytesPerTask < a[1].textBytesPerTask ? b : a))
  const perCall = (["fill", "select", "check", "click", "read", "screenshot"] as const).map((kind) => ({
    kind,
    ours: ours.perCall[kind]?.median ?? Number.NaN,
    theirs: pw.perCall[kind]?.median ?? Number.NaN
  }))
  return [
    {
      figure: "peers: sign-up task per task, p50, against the fastest peer",
      target: "faster",
      measured: `${ours.task.median} ms vs ${fastest[1].task.median} ms (${fastest[0]})`,
      met: ours.failures === 0 && ours.task.median < fastest[1].task.median
    },
    {
      figure: "peers: CPU per task (service + its Chromium), p50, against Playwright MCP",
      target: "≤ 1×",
      measured: `${ours.cpuMsPerTask.median} vs ${pw.cpuMsPerTask.median} ms (${Math.round((ours.cpuMsPerTask.median / pw.cpuMsPerTask.median) * 100) / 100}×)`,
      met: ours.cpuMsPerTask.median <= pw.cpuMsPerTask.median
    },
    {
      figure:
        "peers: per-call latency of fill / select / check / click / read / screenshot, p50, against Playwright MCP",
      target: "≤ 1× each",
      measured: perCall.map((c) => `${c.kind} ${c.ours} vs ${c.theirs} ms`).join("; "),
      met: perCall.every((c) => c.ours <= c.theirs)
    },
    {
      figure: "peers: memory of one session (server + its session's browser, USS), against Playwright MCP's",
      target: "≤ 1×",
      measured: `${sessionUss(ours)} vs ${sessionUss(pw)} MiB (besides: a spare browser for the next session, ${ours.memory.spareUssMiB ?? 0} MiB, which spares that session and a crash recovery Chromium's start)`,
      met: sessionUss(ours) <= sessionUss(pw)
    },
    {
      figure: "peers: text bytes per task (tool results) against the lightest peer",
      target: "≤ 1×",
      measured: `${ours.textBytesPerTask} vs ${lightest[1].textBytesPerTask} B (${lightest[0]})`,
      met: ours.textBytesPerTask <= lightest[1].textBytesPerTask
    },
    ...batchTargets(ours, others),
    {
      figure: "peers: spawn → MCP initialize answered, p50",
      target: "≤ 300 ms",
      measured: `${ours.initialize.median} ms (${others.map(([id, s]) => `${id} ${s.initialize.median}`).join(", ")})`,
      met: ours.initialize.median <= 300
    }
  ]
}

/** The switch pairs, slowest first, without the relaunch they are compared with. */
const switchPairs = (result: SwitchResult) =>
  Object.entries(result.pairs)
    .filter(([name]) => !name.startsWith("instead"))
    .sort((a, b) => (b[1]?.median ?? 0) - (a[1]?.median ?? 0))

export const targets = (r: Omit<Results, "targets">): Array<Target> => [
  ...(r.overhead
    ? [
        {
          figure: "overhead, default configuration: JSONL logs + screenshot per attempt (paired ratio, median)",
          target: "≤ 1.15×",
          measured: `${r.overhead.ratio.screenshots.median}× (p95 ${r.overhead.ratio.screenshots.p95}×; ratio of medians ${r.overhead.ratioOfMedians.screenshots}×)`,
          met: r.overhead.ratio.screenshots.median <= 1.15
        }
      ]
    : []),
  ...(r.coldStart
    ? [
        {
          figure: "cold start: spawn → first navigate answered, over a bare playwright-core launch + goto",
          target: "≤ 1.2×",
          measured: `${Math.round((r.coldStart.service.median / r.coldStart.bare.median) * 100) / 100}× (${r.coldStart.service.median} vs ${r.coldStart.bare.median} ms)`,
          met: r.coldStart.service.median / r.coldStart.bare.median <= 1.2
        },
        {
          figure: "cold start: spawn → service reads requests, p50",
          target: "≤ 300 ms",
          measured: `${r.coldStart.serviceReady.median} ms`,
          met: r.coldStart.serviceReady.median <= 300
        },
        ...(r.coldStart.mcpInitialize
          ? [
              {
                figure: "cold start: spawn → MCP initialize answered (stdio, official client), p50",
                target: "≤ 300 ms",
                measured: `${r.coldStart.mcpInitialize.median} ms`,
                met: r.coldStart.mcpInitialize.median <= 300
              }
            ]
          : [])
      ]
    : []),
  ...(r.sessions
    ? [
        {
          figure: "new session's first navigate with a warm browser ready, p50",
          target: "≤ 250 ms",
          measured: `${r.sessions.lifecycle.firstNavigate.median} ms (whole lifecycle ${r.sessions.lifecycle.lifecycle.median} ms; ${cloudFigures})`,
          met: r.sessions.lifecycle.firstNavigate.median <= 250
        }
      ]
    : []),
  ...(r.switch
    ? [
        {
          figure: "every engine switch pair, p50 (the slowest pair)",
          target: "≤ 150 ms",
          measured: ((worst) => `${worst?.[0]}: ${worst?.[1]?.median} ms`)(switchPairs(r.switch)[0]),
          met: switchPairs(r.switch).every(([, s]) => (s?.median ?? Number.POSITIVE_INFINITY) <= 150)
        }
      ]
    : []),
  ...(r.crash
    ? [
        {
          figure: "crash recovery: kill -9 → next call answered, p50",
          target: "≤ 400 ms",
          measured: `${r.crash.recovery.median} ms`,
          met: r.crash.recovery.median <= 400
        }
      ]
    : []),
  ...(r.overhead
    ? [
        {
          figure: "overhead with JSONL logging (median of paired per-iteration ratios)",
          target: "≤ 1.10×",
          measured: `${r.overhead.ratio.jsonl.median}× (p95 ${r.overhead.ratio.jsonl.p95}×; ratio of medians ${r.overhead.ratioOfMedians.jsonl}×)`,
          met: r.overhead.ratio.jsonl.median <= 1.1
        }
      ]
    : []),
  ...(r.switch
    ? [
        {
          figure: "switch Playwright → Playwright, p50",
          target: "≤ 150 ms",
          measured: `${r.switch.pairs["Playwright → Playwright"]?.median} ms (p95 ${r.switch.pairs["Playwright → Playwright"]?.p95})`,
          met: (r.switch.pairs["Playwright → Playwright"]?.median ?? Number.POSITIVE_INFINITY) <= 150
        }
      ]
    : []),
  ...(r.crash
    ? [
        {
          figure: "crash recovery: kill -9 → next call answered (p95)",
          target: "≤ 1.5 s",
          measured: `${r.crash.recovery.p95} ms p95, ${r.crash.recovery.median} ms p50`,
          met: r.crash.recovery.p95 <= 1_500
        }
      ]
    : []),
  ...(r.peers ? peerTargets(r.peers) : []),
  ...(r.memory
    ? [
        {
          figure: `service RSS growth, call 100 → ${r.memory.operations}`,
          target: "< 10%",
          measured: `${(r.memory.growth * 100).toFixed(1)}% (${r.memory.rss["100"]} → ${r.memory.rss[String(r.memory.operations)]} MiB)`,
          met: r.memory.growth < 0.1
        }
      ]
    : [])
]

/** A table cell from free text: pipes escaped, lines joined. */
const esc = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ")

/** A Markdown table with padded columns, as the formatter (Biome) writes it. */
const md = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number>>) => {
  const cells = [head, ...rows].map((row) => row.map(String))
  const widths = head.map((_, i) => Math.max(3, ...cells.map((row) => (row[i] ?? "").length)))
  const line = (row: ReadonlyArray<string>) => `| ${widths.map((w, i) => (row[i] ?? "").padEnd(w)).join(" | ")} |`
  return [line(cells[0]!), line(widths.map((w) => "-".repeat(w))), ...cells.slice(1).map(line)].join("\n")
}

const cell = (s: Stats.Summary | undefined) => (s === undefined ? "–" : `${s.median} / ${s.p95} / ${s.p25}–${s.p75}`)
const spread = "median / p95 / IQR, ms"

/** The sections as Markdown tables; the console gets the same text. */
export const sections = (r: Results): Array<string> => {
  const out: Array<string> = []
  out.push(
    `## Targets\n\n${md(
      ["figure", "target", "measured", ""],
      r.targets.map((t) => [t.figure, t.target, t.measured, t.met ? "met" : "**missed**"])
    )}`
  )
  if (r.overhead) {
    const o = r.overhead
    out.push(
      `## Overhead: navigate + act(Action) + extract + screenshot (${o.iterations} interleaved iterations)\n\n${md(
        [
          "variant",
          `sequence (${spread})`,
          "paired ratio to direct (median / p95)",
          "ratio of medians",
          "navigate",
          "act",
          "extract",
          "screenshot"
        ],
        variants.map((v) => [
          labels[v],
          cell(o.sequence[v]),
          v === "direct" ? "1" : `${o.ratio[v].median}× / ${o.ratio[v].p95}×`,
          v === "direct" ? "1" : `${o.ratioOfMedians[v]}×`,
          o.perOperation[v].navigate.median,
          o.perOperation[v].act.median,
          o.perOperation[v].extract.median,
          o.perOperation[v].screenshot.median
        ])
      )}\n\nPer-operation columns are medians in ms. The rows marked + add one layer each, logging off; the last two are the Router as the service runs it. Log writes happen in the background (attempt log flush after a sequence: ${o.flush.median} ms median); they are not in the agent's latency.\n\nThe Sandbox's raw-CDP reads around calls, timed alone on the same browser (${spread}):\n\n${md(
        ["read", "time"],
        Object.entries(o.extras).map(([k, v]) => [k, cell(v)])
      )}\n\nWhere a Router call's time goes (logging off, mean ms over 10 sequences, from the spans the code opens):\n\n${md(
        ["tool", "whole call", "engine operation", "Cascade + Sandbox around it", "state block + call log"],
        Object.entries(o.breakdown).map(([tool, b]) => [tool, b.call, b.engine, b.cascadeAndSandbox, b.stateAndLog])
      )}`
    )
  }
  if (r.switch) {
    const s = r.switch
    out.push(
      `## Engine switch on one browser (${s.rounds} rounds, each pair once per round)\n\n${md(
        ["switch", spread],
        [
          ...Object.entries(s.pairs).map(([k, v]) => [k, cell(v)]),
          ["instead: close the browser, relaunch, restore the URL, connect Playwright", cell(s.relaunch)]
        ]
      )}\n\nSwitches that lost the page: ${s.lostPage}.${
        s.firstConnect === undefined
          ? ""
          : ` First connect of each engine in the session (from Playwright, before the rounds; it loads the engine's SDK): ${Object.entries(
              s.firstConnect
            )
              .map(([engine, ms]) => `${engine} ${ms} ms`)
              .join(", ")}.`
      }`
    )
  }
  if (r.coldStart) {
    const c = r.coldStart
    out.push(
      `## Cold start (${c.runs} runs each, alternating)\n\n${md(
        ["", spread],
        [
          ["service spawn (bundled entry, as bin/switchyard) → first browser.navigate answered", cell(c.service)],
          ["of which: spawn → service ready (before any browser)", cell(c.serviceReady)],
          ...(c.fromSource ? [["the same from source (node src/Main.ts)", cell(c.fromSource)]] : []),
          ["bare playwright-core launch + goto, in a fresh Node process", cell(c.bare)],
          ...(c.mcpInitialize
            ? [["MCP on stdio: spawn → initialize answered (official client)", cell(c.mcpInitialize)]]
            : [])
        ]
      )}`
    )
  }
  if (r.crash) {
    const c = r.crash
    out.push(
      `## Crash recovery (${c.runs} runs; phases from the service's system log, millisecond timestamps)\n\n${md(
        ["", spread],
        [
          ["kill -9 of Chromium → next browser.extract answered", cell(c.recovery)],
          ...(c.withoutWarm
            ? [["the same without a warm browser (SWITCHYARD_WARM_BROWSERS=0)", cell(c.withoutWarm)]]
            : []),
          ["phase 1: kill → the service sees the browser gone", cell(c.phases.detect)],
          [
            "phase 2: take the warm browser (or relaunch Chromium) + restore the URL",
            cell(c.phases.relaunchAndRestore)
          ],
          [
            "phase 3: the rest of the engine's connect (begun with the restore) + the call itself",
            cell(c.phases.connectAndCall)
          ],
          ["the same call on a healthy browser", cell(c.healthy)]
        ]
      )}\n\nRecoveries that answered on the page the agent had open: ${c.restored} of ${c.runs}.`
    )
  }
  if (r.hibernate) {
    const h = r.hibernate
    out.push(
      `## Hibernation (${h.runs} calls; two signed-in sessions, browser cap 1: each call hibernates the other session and restores its own)\n\n${md(
        ["", spread],
        [
          ["browser.extract on a hibernated session (hibernate the other + restore this one + the call)", cell(h.swap)],
          ["the same call on a session that kept its browser (cap 2)", cell(h.open)]
        ]
      )}\n\nRestored pages that showed their HttpOnly cookie, localStorage and sessionStorage: ${h.whole} of ${h.runs}.`
    )
  }
  if (r.sessions) {
    const s = r.sessions
    out.push(
      `## Concurrent sessions (${s.rounds} rounds, ${s.sequencesPerLevel} sequences per level and round split among its sessions, browser cap ${s.maxBrowsers})\n\n${md(
        [
          "sessions",
          "sequences/s",
          "ops/s",
          "navigate p50/p95",
          "act p50/p95",
          "extract p50/p95",
          "screenshot p50/p95",
          "open p50/max",
          "held by the queue",
          "errors"
        ],
        s.levels.map((l) => [
          l.sessions,
          l.sequencesPerSecond,
          l.operationsPerSecond,
          `${l.perOperation.navigate.median} / ${l.perOperation.navigate.p95}`,
          `${l.perOperation.act.median} / ${l.perOperation.act.p95}`,
          `${l.perOperation.extract.median} / ${l.perOperation.extract.p95}`,
          `${l.perOperation.screenshot.median} / ${l.perOperation.screenshot.p95}`,
          `${l.open.median} / ${l.open.max}`,
          `${l.queued} of ${l.sessions * s.rounds}`,
          Object.entries(l.errors)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ") || "none"
        ])
      )}\n\nThroughput counts all sequences of a level over its wall time, browser starts and queueing included. "Open" is each session's first call (browser launch, plus any wait for a slot).`
    )
    out.push(
      `## Session lifecycle with a warm browser ready (${s.lifecycle.runs} sessions, one at a time, default configuration: one warm browser)\n\n${md(
        ["", spread],
        [
          ["new session's first browser.navigate answered (create + connect + goto)", cell(s.lifecycle.firstNavigate)],
          ["create + connect + goto + release (browserClose answered)", cell(s.lifecycle.lifecycle)]
        ]
      )}\n\nPublished cloud figures for the same lifecycle: ${cloudFigures}.`
    )
  }
  if (r.memory) {
    const m = r.memory
    out.push(
      `## Memory: one session, ${m.operations} calls over JSON-RPC (${m.msPerOperation} ms per call, screenshot per attempt ${m.screenshotsPerAttempt ? "on" : "off"})\n\n${md(
        ["after calls", ...Object.keys(m.rss)],
        [["service VmRSS, MiB", ...Object.values(m.rss)]]
      )}\n\nGrowth from call 100 to call ${m.operations}: ${(m.growth * 100).toFixed(1)}%. Errors: ${
        Object.entries(m.errors)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ") || "none"
      }.\n\nA second service, the same calls, with a full GC forced through the Node inspector at each checkpoint (the first GC also shrinks what follows, so its RSS is lower than above):\n\n${md(
        ["after calls", "VmRSS as found, MiB", "live JS heap after GC, MiB", "VmRSS after GC, MiB"],
        Object.entries(m.afterGc).map(([n, g]) => [n, g.rssMiB, g.heapUsedMiB, g.rssAfterGcMiB])
      )}`
    )
  }
  if (r.web) {
    const w = r.web
    const total = Object.values(w.classes).reduce(
      (n, c) => ({
        runs: n.runs + c.runs,
        passed: n.passed + c.passed,
        falseSuccesses: n.falseSuccesses + (c.falseSuccesses ?? 0)
      }),
      { runs: 0, passed: 0, falseSuccesses: 0 }
    )
    const rate = (passed: number, runs: number) =>
      `${passed} (${runs === 0 ? 0 : Math.round((passed / runs) * 1000) / 10}%)`
    out.push(
      `## Web patterns: ${Object.values(w.classes).reduce((n, c) => n + c.patterns, 0)} patterns × ${w.rounds} rounds, as an agent drives them through the service (default configuration, no model)\n\nA false success is an answer that said success while the page's own record (what it posted, or the state it reported) disagreed.\n\n${md(
        ["class", "patterns", "runs", "successes", "false successes"],
        [
          ...Object.entries(w.classes).map(([name, c]) => [
            name,
            c.patterns,
            c.runs,
            rate(c.passed, c.runs),
            c.falseSuccesses ?? "not counted"
          ]),
          ["all", "", total.runs, rate(total.passed, total.runs), total.falseSuccesses]
        ]
      )}\n\nPer call (${spread}):\n\n${md(
        ["tool", "latency"],
        Object.entries(w.perTool).map(([tool, s]) => [tool, cell(s)])
      )}${
        (w.falseSuccesses ?? []).length === 0
          ? ""
          : `\n\nFalse successes (each pattern's first):\n\n${md(
              ["pattern", "class", "call that answered success", "what the page showed"],
              (w.falseSuccesses ?? []).map((f) => [f.pattern, f.class, esc(f.call), esc(`${f.label}: ${f.page}`)])
            )}`
      }${
        w.failures.length === 0
          ? ""
          : `\n\nFailed at least once:\n\n${md(
              ["pattern", "class", "first failure"],
              w.failures.map((f) => [f.pattern, f.class, esc(f.error)])
            )}`
      }`
    )
  }
  if (r.peers) out.push(peersSection(r.peers))
  if (r.density) {
    const d = r.density
    out.push(
      `## Density: sessions held by one service (JSON-RPC, default configuration, browser cap ${d.maxBrowsers}; memory of the service and every process it started)\n\n${md(
        [
          "sessions",
          "idle: USS / PSS / RSS, MiB",
          "working (peak): USS / PSS / RSS, MiB",
          "MiB per idle session (USS / PSS / RSS)",
          "MiB per working session (USS / PSS / RSS)",
          "service's own MiB per session (USS)",
          "processes idle / working"
        ],
        [
          [
            "0 (service alone)",
            `${d.alone.ussMiB} / ${d.alone.pssMiB} / ${d.alone.rssMiB}`,
            "–",
            "–",
            "–",
            "–",
            `${d.alone.processes}`
          ],
          ...d.levels.map((l) => [
            l.sessions,
            `${l.idle.ussMiB} / ${l.idle.pssMiB} / ${l.idle.rssMiB}`,
            `${l.working.ussMiB} / ${l.working.pssMiB} / ${l.working.rssMiB}`,
            `${l.perIdleSession.uss} / ${l.perIdleSession.pss} / ${l.perIdleSession.rss}`,
            `${l.perWorkingSession.uss} / ${l.perWorkingSession.pss} / ${l.perWorkingSession.rss}`,
            l.servicePerSessionMiB,
            `${l.idle.processes} / ${l.working.processes}`
          ])
        ]
      )}\n\nUSS counts the pages only these processes hold; PSS also splits the pages they share with other processes (other Chromiums on the machine included), RSS counts shared pages in full. Within ${d.budgetGiB} GiB at the largest level's PSS per working session: ${d.sessionsInBudget} sessions (the configured cap is what bounds them first).`
    )
  }
  if (r.replay) out.push(Replay.section(r.replay))
  return out
}

const peersSection = (p: Peers.PeersResult) => {
  const ids = Peers.servers
  const row = (label: string, f: (s: Peers.ServerResult) => string | number) => [
    label,
    ...ids.map((id) => f(p.servers[id]))
  ]
  const stat = (s: Stats.Summary | undefined) => (s === undefined ? "–" : `${s.median} / ${s.p95}`)
  return `## Against other MCP browser servers: a sign-up form (${p.rounds} interleaved rounds, official MCP client over stdio, the same Chromium)\n\nThe task: navigate, fill two fields, select a plan, check the terms, submit, read the result, take a screenshot, through each server's own tools as an agent uses them (the peers hand out element references only in a snapshot: the task takes one). ${
    p.peersNoSandbox
      ? "Running as root, the peers' Chromium runs with --no-sandbox (Switchyard runs its Chromium as an unprivileged user, sandboxed)."
      : ""
  }\n\n${md(
    ["", ...ids.map((id) => p.servers[id].label)],
    [
      row("task wall time, ms (median / p95)", (s) => stat(s.task)),
      row("tasks failed", (s) => `${s.failures} of ${s.failures + s.tasks}`),
      row("calls per task", (s) => s.callsPerTask),
      ...Peers.kinds.map((kind) => row(`${kind} call, ms (median / p95)`, (s) => stat(s.perCall[kind]))),
      row("text bytes per task (tool results)", (s) => s.textBytesPerTask),
      row("structuredContent bytes per task", (s) => s.structuredBytesPerTask),
      row("image bytes per task", (s) => s.imageBytesPerTask),
      ...Peers.kinds.map((kind) => row(`text bytes of one ${kind} call`, (s) => s.textBytesByKind[kind] ?? "–")),
      row("CPU per task, ms (service + browser; median / p95)", (s) => stat(s.cpuMsPerTask)),
      row(
        "server process USS / PSS / RSS, MiB",
        (s) => `${s.memory.serviceUssMiB} / ${s.memory.servicePssMiB} / ${s.memory.serviceRssMiB}`
      ),
      row(
        "its session's browser's processes USS / PSS / RSS, MiB",
        (s) => `${s.memory.browserUssMiB} / ${s.memory.browserPssMiB} / ${s.memory.browserRssMiB}`
      ),
      row("a spare browser for the next session (warm pool) USS / PSS / RSS, MiB", (s) =>
        s.memory.spareUssMiB === undefined
          ? "–"
          : `${s.memory.spareUssMiB} / ${s.memory.sparePssMiB} / ${s.memory.spareRssMiB}`
      ),
      row("processes (server + browsers)", (s) => s.memory.processes),
      row("spawn → initialize answered, ms (median / p95)", (s) => stat(s.initialize))
    ]
  )}\n\nThe same task with each server's batch form fill (Switchyard: \`browser_fill_form\` by labels with its submit, then \`browser_snapshot {find: "status"}\` to read; Playwright MCP: a snapshot, \`browser_fill_form\`, then a click; chrome-devtools-mcp: a snapshot, \`fill_form\`, then a click):\n\n${md(
    ["", ...ids.map((id) => p.servers[id].label)],
    [
      row("task wall time, ms (median / p95)", (s) => stat(s.batch?.task)),
      row("tasks failed", (s) =>
        s.batch === undefined ? "–" : `${s.batch.failures} of ${s.batch.failures + s.batch.tasks}`
      ),
      row("calls per task", (s) => s.batch?.callsPerTask ?? "–"),
      ...Peers.batchKinds.map((kind) => row(`${kind} call, ms (median / p95)`, (s) => stat(s.batch?.perCall[kind]))),
      row("text bytes per task (tool results)", (s) => s.batch?.textBytesPerTask ?? "–")
    ]
  )}\n\nEach server's tool of each kind, called on the page once the task has run (medians of up to five calls): text bytes of one answer / ms.\n\n${md(
    ["", ...ids.map((id) => p.servers[id].label)],
    Peers.toolKinds.map((kind) =>
      row(kind, (s) => {
        const probed = s.tools?.[kind]
        if (probed === undefined) return "–"
        return "error" in probed ? `${probed.tool}: failed` : `${probed.tool}: ${probed.textBytes} B / ${probed.ms} ms`
      })
    )
  )}${ids
    .flatMap((id) => [
      ...(p.servers[id].firstFailure ? [`\n\n${id}, first failure: ${p.servers[id].firstFailure}`] : []),
      ...(p.servers[id].batch?.firstFailure
        ? [`\n\n${id}, first failure with the batch fill: ${p.servers[id].batch?.firstFailure}`]
        : []),
      ...Object.entries(p.servers[id].tools ?? {}).flatMap(([kind, probed]) =>
        probed !== undefined && "error" in probed ? [`\n\n${id}, ${kind} (${probed.tool}) failed: ${probed.error}`] : []
      )
    ])
    .join("")}`
}

export const markdown = (r: Results, notes: ReadonlyArray<string>) =>
  [
    "# Switchyard benchmark results",
    "",
    `Generated by \`npm run bench\` on ${r.startedAt} in ${r.durationS} s. Machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB, ${r.machine.os}, Node ${r.machine.node}, ${r.machine.chromium}. Load average (1 min) ${r.load.start} at the start, ${r.load.end} at the end: figures taken while other work shares the cores are slower and noisier.`,
    "",
    `Iterations: ${Object.entries(r.counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}. Every figure is measured side by side in one run, interleaved with its baseline.`,
    "",
    ...sections(r).flatMap((s) => [s, ""]),
    ...(notes.length > 0 ? ["## Findings", "", ...notes.flatMap((n) => [n, ""])] : [])
  ].join("\n")
