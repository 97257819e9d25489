/**
 * Renders an analysis (Analyzer.ts) as the Markdown report of seed 003 and as one self-contained HTML page — tables,
 * then each failing trace's attempts as a timeline with its screenshots inlined as data URLs — and writes both.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { dirname, extname, relative, resolve } from "node:path"
import { Effect } from "effect"
import type { Analysis, AttemptInfo, Rate, TraceInfo } from "./Analyzer.ts"
import * as Analyzer from "./Analyzer.ts"

const percent = (x: number) => `${(x * 100).toFixed(1)}%`
const share = (n: number, total: number) => (total === 0 ? "–" : percent(n / total))

/** Text safe in a Markdown table cell. */
const cell = (s: string) => s.replaceAll("|", "\\|").replace(/\s+/g, " ").trim()
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s)

const rateRows = (rates: Readonly<Record<string, Rate>>) =>
  Object.entries(rates).map(
    ([name, r]) => `| ${cell(name)} | ${r.attempts} | ${r.successes} | ${r.failures} | ${percent(r.successRate)} |`
  )

const lastFailure = (trace: TraceInfo) => [...trace.attempts].reverse().find((a) => a.outcome === "failure")

const attemptLine = (a: AttemptInfo, root: string) => {
  const what = [a.action, a.engine].filter(Boolean).join(" on ")
  const result =
    a.outcome === "failure"
      ? `failure \`${a.errorType ?? "unknown"}\`: ${clip(cell(a.reason ?? ""), 300)}`
      : a.outcome === "success"
        ? "success"
        : "did not finish"
  const took = a.durationMs === undefined ? "" : ` (${a.durationMs} ms)`
  const shot = a.screenshot === undefined ? "" : ` — screenshot \`${relative(root, a.screenshot)}\``
  return `${what}: ${result}${took}${shot}`
}

export interface MarkdownOptions {
  readonly title: string
  readonly markdownPath?: string
  readonly htmlPath?: string
}

/** The Markdown report: engine and level success rates, error types, commonest reasons, failing traces. */
export const markdown = (analysis: Analysis, options: MarkdownOptions): string => {
  const { stats } = analysis
  const out: Array<string> = []
  out.push(`# ${options.title}`, "")
  out.push(
    `Read from \`${analysis.logs}\`: ${stats.traces} traces, ${stats.attempts} engine attempts ` +
      `(${stats.successes} succeeded, ${stats.failures} failed). ` +
      `${analysis.failing.length} traces ended in a failure; ${analysis.recovered.length} recovered after failures.`
  )
  if (analysis.skipped > 0) {
    out.push(
      "",
      `${analysis.skipped} log line${analysis.skipped === 1 ? " was" : "s were"} skipped: not an event this version knows (cut short, older or foreign).`
    )
  }
  if (options.htmlPath !== undefined) {
    const link = options.markdownPath ? relative(`${options.markdownPath}/..`, options.htmlPath) : options.htmlPath
    out.push("", `Screenshot timelines of the failing traces: [${link}](${link}).`)
  }
  out.push(
    "",
    "## Engines",
    "",
    "| Engine | Attempts | Successes | Failures | Success rate |",
    "|---|---:|---:|---:|---:|"
  )
  out.push(...rateRows(stats.providers))
  out.push(
    "",
    "## Cascade levels",
    "",
    "| Level | Attempts | Successes | Failures | Success rate |",
    "|---|---:|---:|---:|---:|"
  )
  out.push(...rateRows(stats.levels))
  out.push("", "## Error types", "")
  if (Object.keys(stats.errorTypes).length === 0) out.push("No failed attempts.")
  else {
    out.push("| Error type | Failures | Share of attempts |", "|---|---:|---:|")
    for (const [type, n] of Object.entries(stats.errorTypes).sort(([, a], [, b]) => b - a)) {
      out.push(`| \`${cell(type)}\` | ${n} | ${share(n, stats.attempts)} |`)
    }
  }
  if (analysis.reasons.length > 0) {
    out.push("", "## Commonest failure reasons", "", "| Count | Error type | Reason |", "|---:|---|---|")
    for (const r of analysis.reasons.slice(0, 15)) {
      out.push(`| ${r.count} | \`${cell(r.errorType)}\` | ${clip(cell(r.reason), 200)} |`)
    }
  }
  out.push("", `## Failing traces (${analysis.failing.length})`, "")
  if (analysis.failing.length === 0) out.push("None.")
  else {
    out.push("| Trace | Day | Attempts | Last error | Reason |", "|---|---|---:|---|---|")
    for (const t of analysis.failing) {
      const last = lastFailure(t)
      out.push(
        `| \`${cell(t.traceId)}\` | ${t.date} | ${t.attempts.length} | \`${last?.errorType ?? "–"}\` | ${clip(cell(last?.reason ?? ""), 160)} |`
      )
    }
    for (const t of analysis.failing) {
      out.push("", `### \`${t.traceId}\``, "")
      if (t.urls.length > 0) out.push(`Pages: ${t.urls.map((u) => `\`${cell(u)}\``).join(", ")}`, "")
      for (const [i, a] of t.attempts.entries())
        out.push(`${i + 1}. \`${a.attemptId}\` ${attemptLine(a, analysis.logs)}`)
    }
  }
  out.push("")
  return out.join("\n")
}

// ---------------------------------------------------------------------------------------------------------------
// HTML.

const escapeHtml = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")

const style = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1d1d1f; max-width: 78rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; } h3 { font-family: monospace; }
table { border-collapse: collapse; margin: 0.5rem 0; } th, td { border: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 0.92em; }
.trace { border: 1px solid #ccc; border-radius: 6px; padding: 0.5rem 1rem 1rem; margin: 1rem 0; }
.timeline { display: flex; gap: 0.75rem; overflow-x: auto; list-style: none; padding: 0; }
.timeline li { flex: 0 0 18rem; border: 1px solid #ddd; border-radius: 4px; padding: 0.4rem; }
.timeline li.failure { border-color: #d33; background: #fff5f5; } .timeline li.success { border-color: #3a3; background: #f5fff5; }
.timeline img { width: 100%; height: auto; border: 1px solid #eee; display: block; }
.timeline .meta { font-size: 0.85em; word-break: break-word; }
.none { color: #777; font-style: italic; }
`

const rateTable = (title: string, rates: Readonly<Record<string, Rate>>) =>
  `<table><thead><tr><th>${escapeHtml(title)}</th><th>Attempts</th><th>Successes</th><th>Failures</th><th>Success rate</th></tr></thead><tbody>${Object.entries(
    rates
  )
    .map(
      ([name, r]) =>
        `<tr><td>${escapeHtml(name)}</td><td class="n">${r.attempts}</td><td class="n">${r.successes}</td><td class="n">${r.failures}</td><td class="n">${percent(r.successRate)}</td></tr>`
    )
    .join("")}</tbody></table>`

const dataUrl = (path: string) =>
  Effect.promise(() =>
    readFile(path).then(
      (bytes) => `data:image/png;base64,${bytes.toString("base64")}`,
      () => undefined
    )
  )

const attemptItem = (a: AttemptInfo, image: string | undefined) => {
  const result =
    a.outcome === "failure"
      ? `<strong>${escapeHtml(a.errorType ?? "failure")}</strong>: ${escapeHtml(clip(a.reason ?? "", 400))}`
      : a.outcome === "success"
        ? "<strong>success</strong>"
        : "<strong>did not finish</strong>"
  const figure =
    image === undefined
      ? `<p class="none">no screenshot</p>`
      : `<img src="${image}" alt="screenshot after attempt ${escapeHtml(a.attemptId)}" loading="eager">`
  return `<li class="${a.outcome}" data-attempt-id="${escapeHtml(a.attemptId)}">${figure}<div class="meta"><code>${escapeHtml(a.attemptId)}</code><br>${escapeHtml([a.action, a.engine].filter(Boolean).join(" on "))}${a.durationMs === undefined ? "" : ` · ${a.durationMs} ms`}<br>${result}</div></li>`
}

export interface HtmlOptions {
  readonly title: string
  readonly maxFailing: number
  readonly maxScreenshots: number
}

/** The self-contained HTML report; screenshots of failing traces are read from disk and inlined. */
export const html = (analysis: Analysis, options: HtmlOptions): Effect.Effect<string> =>
  Effect.gen(function* () {
    const { stats } = analysis
    const shown = analysis.failing.slice(-options.maxFailing)
    const articles: Array<string> = []
    for (const trace of shown) {
      const items: Array<string> = []
      const withShots = new Set(
        trace.attempts
          .filter((a) => a.screenshot !== undefined)
          .slice(-options.maxScreenshots)
          .map((a) => a.attemptId)
      )
      for (const a of trace.attempts) {
        const image = withShots.has(a.attemptId) && a.screenshot ? yield* dataUrl(a.screenshot) : undefined
        items.push(attemptItem(a, image))
      }
      const last = lastFailure(trace)
      articles.push(
        `<article class="trace" data-trace-id="${escapeHtml(trace.traceId)}"><h3>${escapeHtml(trace.traceId)}</h3>` +
          `<p>${escapeHtml(trace.date)} · ${trace.attempts.length} attempts · last error <code>${escapeHtml(last?.errorType ?? "–")}</code>: ${escapeHtml(clip(last?.reason ?? "", 300))}</p>` +
          (trace.urls.length > 0
            ? `<p>Pages: ${trace.urls.map((u) => `<code>${escapeHtml(u)}</code>`).join(", ")}</p>`
            : "") +
          `<ol class="timeline">${items.join("")}</ol></article>`
      )
    }
    const errorRows = Object.entries(stats.errorTypes)
      .sort(([, a], [, b]) => b - a)
      .map(
        ([type, n]) =>
          `<tr><td><code>${escapeHtml(type)}</code></td><td class="n">${n}</td><td class="n">${share(n, stats.attempts)}</td></tr>`
      )
      .join("")
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(options.title)}</title>
<style>${style}</style>
</head>
<body>
<h1>${escapeHtml(options.title)}</h1>
<p id="totals">${stats.traces} traces, ${stats.attempts} engine attempts (${stats.successes} succeeded, ${stats.failures} failed); ${analysis.failing.length} traces ended in a failure, ${analysis.recovered.length} recovered.</p>
<section id="engines"><h2>Engines</h2>${rateTable("Engine", stats.providers)}${rateTable("Level", stats.levels)}</section>
<section id="errors"><h2>Error types</h2>${
      errorRows === ""
        ? `<p class="none">No failed attempts.</p>`
        : `<table><thead><tr><th>Error type</th><th>Failures</th><th>Share of attempts</th></tr></thead><tbody>${errorRows}</tbody></table>`
    }</section>
<section id="failing"><h2>Failing traces (${analysis.failing.length})</h2>${
      articles.length === 0 ? `<p class="none">None.</p>` : articles.join("\n")
    }${
      analysis.failing.length > shown.length
        ? `<p class="none">${analysis.failing.length - shown.length} older failing traces are listed in the Markdown report only.</p>`
        : ""
    }</section>
</body>
</html>
`
  })

// ---------------------------------------------------------------------------------------------------------------
// The reports.

export const defaultOut = "docs/ops/browser-automation-report.md"

export interface AnalyzeOptions extends Analyzer.ReadOptions {
  /** The log root to read (`$SWITCHYARD_LOG_DIR`, a runner's `logDir`, or its `browser-automation/` directory). */
  readonly logs: string
  /** Markdown report path; default `docs/ops/browser-automation-report.md`. */
  readonly out?: string
  /** HTML report path; default the Markdown path with `.html`. */
  readonly html?: string
  /** Failing traces shown with their screenshot timeline in the HTML (default 25; the newest are kept). */
  readonly maxFailing?: number
  /** Screenshots inlined per failing trace (default 24; the last ones are kept). */
  readonly maxScreenshots?: number
  readonly title?: string
}

export interface AnalyzeResult {
  readonly analysis: Analyzer.Analysis
  readonly markdown: string
  readonly html: string
}

/** Reads a log root and writes `browser-automation-report.md` and its self-contained HTML companion. */
export const write = (options: AnalyzeOptions): Effect.Effect<AnalyzeResult, Analyzer.AnalyzeError> =>
  Effect.gen(function* () {
    if (!(yield* Effect.promise(() => Analyzer.exists(options.logs)))) {
      return yield* new Analyzer.AnalyzeError({ path: options.logs, message: "no such log directory" })
    }
    const traces = yield* Analyzer.readTraces(options.logs, options)
    const analysis = Analyzer.analysisOf(options.logs, traces)
    const markdownPath = resolve(options.out ?? defaultOut)
    const htmlPath = resolve(
      options.html ?? `${markdownPath.slice(0, markdownPath.length - extname(markdownPath).length)}.html`
    )
    const title = options.title ?? "Browser automation report"
    const page = yield* html(analysis, {
      title,
      maxFailing: options.maxFailing ?? 25,
      maxScreenshots: options.maxScreenshots ?? 24
    })
    yield* Effect.tryPromise({
      try: async () => {
        await mkdir(dirname(markdownPath), { recursive: true })
        await mkdir(dirname(htmlPath), { recursive: true })
        await writeFile(markdownPath, markdown(analysis, { title, htmlPath, markdownPath }))
        await writeFile(htmlPath, page)
      },
      catch: (cause) =>
        new Analyzer.AnalyzeError({
          path: markdownPath,
          message: `cannot write the report: ${(cause as Error).message}`
        })
    })
    return { analysis, markdown: markdownPath, html: htmlPath }
  })
