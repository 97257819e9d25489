/**
 * What the figures say, computed from them: for each target missed, where the time or memory goes, with the
 * measurements that show it; plus what the other sections show (the queue, cold start).
 */
import type { Variant } from "./Overhead.ts"
import * as Peers from "./Peers.ts"
import type { Results } from "./Report.ts"
import { cloudFigures } from "./Sessions.ts"

const ms = (n: number) => `${Math.round(n * 10) / 10} ms`

export const notes = (r: Results): Array<string> => {
  const out: Array<string> = []
  const o = r.overhead
  if (o) {
    const med = (v: Variant) => o.sequence[v].median
    const step = (v: Variant, from: Variant) => ms(med(v) - med(from))
    const opDelta = (v: Variant, from: Variant) =>
      (["navigate", "act", "extract", "screenshot"] as const)
        .map((op) => `${op} ${ms(o.perOperation[v][op].median - o.perOperation[from][op].median)}`)
        .join(", ")
    const e = (k: string) => o.extras[k]?.median ?? 0
    const b = Object.values(o.breakdown)
    const sum = (f: (x: (typeof b)[number]) => number) => ms(b.reduce((a, x) => a + f(x), 0))
    const act = o.breakdown["browser.act"]
    out.push(
      `**Overhead.** A sequence takes ${ms(med("direct"))} on playwright-core directly and ${ms(med("jsonl"))} through the Router with the JSONL logs (${o.ratio.jsonl.median}× paired, ${o.ratioOfMedians.jsonl}× on medians; target ≤ 1.10×). ` +
        "Sequence times cluster one 60 Hz frame (16.7 ms) apart, because the screenshot waits for Chromium's next frame: differences between layers smaller than a frame are noise. " +
        `Layer by layer (medians, logging off): the engine alone adds ${step("engine", "direct")} (${opDelta("engine", "direct")}), the Sandbox ${step("sandbox", "engine")}, the Cascade ${step("cascade", "sandbox")}, the Router ${step("off", "cascade")}; the JSONL logs add ${step("jsonl", "off")} (they are written in the background) and a screenshot per attempt ${step("screenshots", "jsonl")}. ` +
        `Inside a Router call (spans, per sequence): ${sum((x) => x.engine)} in the engine operations, ${sum((x) => x.cascadeAndSandbox)} in the Cascade and the Sandbox around them (${act ? ms(act.cascadeAndSandbox) : "?"} of it on the act, which reads a page fingerprint first), ${sum((x) => x.stateAndLog)} building the answer's state block and logging the call. ` +
        `Around each call the Sandbox now works on one CDP connection it keeps per browser, with the session's page attached: an alive check (Browser.getVersion, ${ms(e("alive check (Browser.getVersion, kept socket)"))} alone; the HTTP check, ${ms(e("alive check after a failed call (GET /json/version)"))}, only after a failed call), the URL and title for the answer from the browser's target events (no round trip), and for an act the page fingerprint (${ms(e("act fingerprint (kept socket: evaluate)"))}, against ${ms(e("act fingerprint on a new socket (connect + attach + evaluate)"))} on a new socket); the engine runs an Action as count + the method when the element is there. On an open connection an evaluate takes ${ms(e("page.evaluate on an open connection (playwright-core)"))}. ` +
        (o.ratio.jsonl.median <= 1.1
          ? "The target is met."
          : `Target missed: what is left is the Cascade's and the Router's bookkeeping per call and the log writer sharing the CPU with the call (on two cores, with Chromium using them too); a CPU profile (node --cpu-prof) of the JSONL variant shows the attempt log's writes (redaction, append, summary rewrite) and the WebSocket inflate of Chromium's messages as the largest parts of the service's own CPU.`)
    )
    out.push(
      `**Screenshot per attempt (the default).** It adds ${step("screenshots", "jsonl")} per sequence, ${o.ratio.screenshots.median}× direct paired (target ≤ 1.15×); one capture alone on the kept connection takes ${ms(e("artifact screenshot (kept socket: mask + capture)"))} (mask the typed text, wait for Chromium's next frame, encode, unmask). ` +
        "An attempt that may move the page (a click, a key, a script) has its capture begun when it ends, finishing while the answer goes out (Sandbox/Captures.ts); the mask changes paint only, so the next call's reads and typing run beside it; what may navigate or reads pixels waits for the capture in flight, because a capture cut by a navigation hangs on its frame. " +
        "A navigate (which ends once its page has loaded), a read and an act that only types have their frame held instead, shared by the attempts after them that only type or read, and taken before the next act that may move the page, a tenth of a second into a pause between calls, or from the agent's own screenshot: in this back-to-back sequence the screenshot lends its picture and no capture is left on the path. " +
        "PNG with Chromium's fast settings (optimizeForSpeed) halves the capture on a form page (about 18 against 33 ms measured alone); the frame wait itself (up to 16.7 ms at 60 Hz) stays. SWITCHYARD_SCREENSHOTS=off removes it all; failure snapshots stay."
    )
  }
  const s = r.switch
  if (s) {
    const pw = s.pairs["Playwright → Playwright"]
    const slowest = Object.entries(s.pairs).sort((a, b) => b[1].median - a[1].median)[0]
    out.push(
      `**Switching.** Playwright → Playwright takes ${pw?.median} ms at the median (p95 ${pw?.p95}); relaunching the browser with the URL restored instead takes ${s.relaunch.median} ms. ` +
        `The slowest pair is ${slowest?.[0]} (${slowest?.[1].median} ms). Magnitude and Stagehand cua run in worker threads that load their SDK once per session: released, a worker detaches its agent and waits idle (Isolated.ts Keep), so a later switch to it only attaches a new agent to the page; only each engine's first connect in a session loads the SDK (timed apart, above). A worker stopped because a call hung is replaced, and a session's idle workers end with its browser.`
    )
  }
  const c = r.coldStart
  if (c) {
    out.push(
      `**Cold start.** ${c.service.median} ms from spawning the service (the bundled entry bin/switchyard runs) to its first answered navigate (${Math.round((c.service.median / c.bare.median) * 100) / 100}×; target ≤ 1.2×), against ${c.bare.median} ms for a bare playwright-core launch and goto in a fresh Node process${c.fromSource ? ` and ${c.fromSource.median} ms from source (${Math.round((c.fromSource.median / c.bare.median) * 100) / 100}×)` : ""}; the JSON-RPC service reads requests ${c.serviceReady.median} ms after its spawn${c.mcpInitialize ? ` and MCP on stdio answers \`initialize\` ${c.mcpInitialize.median} ms after its spawn` : ""} (targets ≤ 300 ms). ` +
        "The bundled entry (scripts/bundle.ts) inlines effect tree-shaken and puts each lazily loaded part in a chunk of its own: a start loads a handful of files where src/Main.ts loads about 550 ES modules before the first Chromium spawn (effect's barrel alone about 250). MCP's stdio front (Server/Mcp/Front.ts) opens at spawn with only the MCP SDK loaded and answers `initialize` while the command line, the configuration and the service load; each stdio surface reads requests before the service's layers build, session calls waiting for them (Server/Startup.ts); a session's Chromium is spawned before playwright-core loads, which then loads while Chromium starts; each command loads only what it runs, and Node's compile cache keeps parsed modules between starts."
    )
  }
  const k = r.crash
  if (k) {
    out.push(
      `**Crash recovery.** From kill -9 to the next answer: ${k.recovery.median} ms median (target ≤ 400 ms), p95 ${k.recovery.p95} ms (a healthy call: ${k.healthy.median} ms); the page was restored in ${k.restored} of ${k.runs} recoveries${k.withoutWarm ? `; without a warm browser ${k.withoutWarm.median} ms (what the warm browser buys: Chromium's start)` : ""}. The relaunch takes the warm pool's spare browser (one by default; phase 2 is then attaching and restoring the URL), the engine connects while the page goes back to its URL, and the dead browser is cleaned up beside it. What makes it vary: the machine's load (every phase is CPU work in the service or in Chromium: the new page's renderer, the page's load, the engine's connect), whether the spare is ready (it starts 500 ms after a take, so a second crash within about a second starts Chromium), and what is restored (cookies and storage, then the page's own load).`
    )
  }
  const q = r.sessions
  if (q) {
    const held = q.levels.filter((l) => l.queued > 0)
    const first = held[0]
    const peak = [...q.levels].sort((a, b) => b.sequencesPerSecond - a.sequencesPerSecond)[0]
    out.push(
      `**Sessions and the queue.** The service runs at most ${q.maxBrowsers} browsers here (SWITCHYARD_MAX_BROWSERS, 2 × cores by default); past that the queue holds a new session's first call until another session closes. ` +
        (first
          ? `At ${first.sessions} sessions, ${first.queued} of ${first.sessions * q.rounds} sessions had their first call answered only after another session closed (open p50 ${first.open.median} ms, max ${first.open.max} ms, against ${q.levels[0]?.open.median} ms for one session alone); at ${q.maxBrowsers} or fewer no session waited. `
          : "No level had sessions held by the queue. ") +
        `Throughput: ${q.levels.map((l) => `${l.sessions} → ${l.sequencesPerSecond} sequences/s`).join(", ")}; it peaks at ${peak?.sessions} sessions: on two cores the browsers share the CPU, so per-call times grow with every session working at once (navigate p95 ${q.levels.map((l) => `${l.perOperation.navigate.p95} ms`).join(", ")}).`
    )
    out.push(
      `**Session open.** With a warm browser ready (SWITCHYARD_WARM_BROWSERS=1, the default, within the browser cap), a new session's first navigate is answered in ${q.lifecycle.firstNavigate.median} ms p50 (target ≤ 250 ms) and its whole lifecycle, create + connect + goto + release, takes ${q.lifecycle.lifecycle.median} ms p50, next to ${cloudFigures}. ` +
        "The warm browser is fresh (its own temp profile, started for nobody, reaching nothing until its session binds it to its egress proxy) and handed out once; the pool starts the next one half a second after a take, so the session's first call has the cores."
    )
  }
  const m = r.memory
  if (m) {
    const points = Object.entries(m.rss).map(([n, v]) => [Number(n), v] as const)
    const steady = points.find(([n]) => n >= 1_000) ?? points[0]
    const last = points[points.length - 1]
    const after = steady && last ? (last[1] - steady[1]) / steady[1] : Number.NaN
    const gc = Object.entries(m.afterGc)
    const [gcFirst, gcLast] = [gc[0], gc[gc.length - 1]]
    const heapGrowth = gcFirst && gcLast ? (gcLast[1].heapUsedMiB - gcFirst[1].heapUsedMiB) / gcFirst[1].heapUsedMiB : 0
    out.push(
      `**Memory.** RSS went from ${m.rss["100"]} MiB after 100 calls to ${last?.[1]} MiB after ${m.operations} (${(m.growth * 100).toFixed(1)}%${m.growth < 0.1 ? ", within the 10% target" : ", over the 10% target"}); from call ${steady?.[0]} on it moved ${(after * 100).toFixed(1)}% (${steady?.[1]} → ${last?.[1]} MiB). ` +
        (gcFirst && gcLast
          ? `With a full GC forced at each checkpoint, the live JS heap went from ${gcFirst[1].heapUsedMiB} MiB (call ${gcFirst[0]}) to ${gcLast[1].heapUsedMiB} MiB (call ${gcLast[0]}), ${(heapGrowth * 100).toFixed(1)}%, and RSS after the GC from ${gcFirst[1].rssAfterGcMiB} to ${gcLast[1].rssAfterGcMiB} MiB. `
          : "") +
        (m.growth >= 0.1 && Math.abs(heapGrowth) < 0.05
          ? "So the growth is garbage V8 has not collected yet and the heap sizing itself to the load in the first few hundred calls, not state kept per call: nothing to fix in src/ for memory. Measured as the target is written (RSS at call 100, before V8 has settled), the target is missed; measured after a GC, or from call 1,000 on, it is met."
          : m.growth >= 0.1
            ? "The live heap grows with calls: look for state kept per call (Router steps, AttemptLog traces, Sandbox history, telemetry series)."
            : "")
    )
  }
  const w = r.web
  if (w) {
    const classes = Object.entries(w.classes)
    const lied = classes.filter(([, c]) => (c.falseSuccesses ?? 0) > 0)
    const runs = classes.reduce((n, [, c]) => n + c.runs, 0)
    const passed = classes.reduce((n, [, c]) => n + c.passed, 0)
    out.push(
      `**Web patterns.** ${passed} of ${runs} runs got what a person would. ` +
        (lied.length === 0
          ? "No answer said success while the page's own record disagreed (target: zero false successes)."
          : `Answers said success while the page's own record disagreed in ${lied.map(([name, c]) => `${name} (${c.falseSuccesses})`).join(", ")}: target zero, missed; the table of false successes names each call and what the page showed.`)
    )
  }
  const p = r.peers
  if (p) {
    const ours = p.servers.switchyard
    const pw = p.servers["playwright-mcp"]
    const slower = Peers.kinds.flatMap((kind) => {
      const a = ours.perCall[kind]?.median
      const b = pw.perCall[kind]?.median
      return a !== undefined && b !== undefined && a > b
        ? [`${kind} ${ms(a)} vs ${ms(b)} (${Math.round((a / b) * 10) / 10}×)`]
        : []
    })
    const heavier = Peers.kinds.flatMap((kind) => {
      const a = ours.textBytesByKind[kind]
      const b = pw.textBytesByKind[kind]
      return a !== undefined && b !== undefined && a > b ? [`${kind} ${a} vs ${b} B`] : []
    })
    out.push(
      `**Against Playwright MCP.** Per call, ours is slower on ${slower.join(", ") || "no kind of call"} (medians). ` +
        "A `browser_act` sentence finds its target by name among the page's elements, read again (an accessibility snapshot of every frame) only when a frame changed since the last read, where the peers act on a reference from the one snapshot the agent took; a fill sets the value and types its last character as real key events and reads back what the field shows; a click on a control whose hover matters moves the mouse there in a few steps of about a frame each; a call that may navigate (a click, a key) waits for the previous attempt's masked screenshot, and each such call adds a capture, while a choice in a select or a box waits only for a capture in flight and shares the picture taken after it with the typing before it; `browser_extract` answers the page's text, headings, links, form fields and controls. " +
        `Text per call is larger on ${heavier.join(", ") || "no kind of call"}: an act's text says what it did and what the target now shows; the call's ids and the action it ran are in the structuredContent only, and the state block's URL, title, engine, level, tabs, downloads and tools come only when they change. ` +
        (ours.structuredBytesPerTask > 0
          ? `Ours also sends ${ours.structuredBytesPerTask} B of structuredContent per task (the same results as JSON, the picture not repeated); the peers send none. `
          : "") +
        `CPU per task (server + Chromium): ${ms(ours.cpuMsPerTask.median)} vs ${ms(pw.cpuMsPerTask.median)}. Playwright MCP's click waits 500 ms for triggered work to settle, which is most of its task time.`
    )
  }
  // A finding whose last clause is empty would end in a space, which the Markdown formatter rejects.
  return out.map((note) => note.trim())
}
