/**
 * Overhead: navigate + act(Action) + extract + screenshot through Router → Cascade → Playwright engine, against the
 * same calls made directly with playwright-core on the same browser and page. The Router runs with logging off,
 * with the JSON-lines logs (attempt.jsonl, summary.json, system log) and with a screenshot per attempt on top; to
 * show where the time goes, the same calls also run one layer at a time (the engine alone, then through the
 * Sandbox, then through the Cascade). All interleaved in rotating order; the Sandbox's raw-CDP reads are timed alone.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Layer, Logger, Option, Tracer } from "effect"
import { chromium, type Page } from "playwright-core"
import { Cascade } from "../src/Cascade/Cascade.ts"
import * as Engines from "../src/Cascade/Engines.ts"
import type { Policy } from "../src/Cascade/Policy.ts"
import { Router } from "../src/Cascade/Router.ts"
import * as CdpHttp from "../src/Cdp/Http.ts"
import * as Session from "../src/Cdp/Session.ts"
import { BrowserSession } from "../src/Engine/BrowserSession.ts"
import { Engine } from "../src/Engine/Engine.ts"
import * as PageFacts from "../src/Engine/PageFacts.ts"
import * as PageState from "../src/Engine/PageState.ts"
import * as PlaywrightEngine from "../src/Engine/PlaywrightEngine.ts"
import type { SwitchyardError } from "../src/Errors.ts"
import * as Artifacts from "../src/Logging/Artifacts.ts"
import * as AttemptLog from "../src/Logging/AttemptLog.ts"
import * as Events from "../src/Logging/Events.ts"
import * as SystemLog from "../src/Logging/SystemLog.ts"
import * as Dialogs from "../src/Sandbox/PageLink/Dialogs.ts"
import * as PageLink from "../src/Sandbox/PageLink.ts"
import * as LocalChromium from "../src/Sandbox/Provider/LocalChromium.ts"
import { Sandbox } from "../src/Sandbox/Sandbox.ts"
import * as Snapshot from "../src/Sandbox/Snapshot.ts"
import * as SiteServer from "../test/fixtures/SiteServer.ts"
import * as Stats from "./Stats.ts"

export const variants = ["direct", "engine", "sandbox", "cascade", "off", "jsonl", "screenshots"] as const
export type Variant = (typeof variants)[number]
type RouterVariant = "off" | "jsonl" | "screenshots"

export const labels: Record<Variant, string> = {
  direct: "playwright-core directly",
  engine: "PlaywrightEngine alone (its own client)",
  sandbox: "+ Sandbox.use (lease, alive check, URL tracking)",
  cascade: "+ Cascade (attempt events, act fingerprint, breaker)",
  off: "+ Router, logging off (arguments, state block, call log)",
  jsonl: "Router, JSONL logs",
  screenshots: "Router, JSONL + screenshot per attempt"
}
export const operations = ["navigate", "act", "extract", "screenshot"] as const

/** Only the Playwright engine, with limits that never fire here. */
export const playwrightOnly: Policy = {
  default: {
    totalTimeoutMs: 60_000,
    retryBaseDelayMs: 10,
    levels: [{ engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 30_000 }]
  }
}

const email = {
  selector: "xpath=//*[@id='email']",
  method: "fill",
  arguments: ["ada@example.com"],
  description: "Email"
}

/** The sequence straight on playwright-core: what the engine does for each call, minus the service around it. */
const direct = async (page: Page, url: string) => {
  const ms: Array<number> = []
  let t = performance.now()
  await page.goto(url, { waitUntil: "load" })
  await page.title()
  ms.push(performance.now() - t)
  t = performance.now()
  await page.locator(email.selector).fill(email.arguments[0]!)
  ms.push(performance.now() - t)
  t = performance.now()
  PageFacts.toFacts(await page.evaluate(PageFacts.collectFacts, 20_000))
  ms.push(performance.now() - t)
  t = performance.now()
  Buffer.from(await page.screenshot({ type: "png" })).toString("base64")
  ms.push(performance.now() - t)
  return ms
}

export interface OverheadResult {
  readonly iterations: number
  /** Whole-sequence times per variant. */
  readonly sequence: Record<Variant, Stats.Summary>
  /** Per-iteration ratio of each variant to the direct run of the same iteration (paired). */
  readonly ratio: Record<Variant, Stats.Summary>
  /** Median sequence time of each variant over the direct one's. */
  readonly ratioOfMedians: Record<Variant, number>
  /** Per-operation times per variant. */
  readonly perOperation: Record<Variant, Record<(typeof operations)[number], Stats.Summary>>
  /** Time for the attempt log to reach the disk after a sequence (not part of the agent's latency). */
  readonly flush: Stats.Summary
  /** What the Sandbox does around each call, timed alone on the same browser. */
  readonly extras: Record<string, Stats.Summary>
  /**
   * Where a Router call's time goes, per tool (mean ms, logging off, from Effect's spans in a separate pass): the
   * whole call, the engine operation's span, the Router's span around the cascade minus the engine's (the Cascade
   * and the Sandbox), and the rest (the answer's state block and the call log).
   */
  readonly breakdown: Record<
    string,
    { readonly call: number; readonly engine: number; readonly cascadeAndSandbox: number; readonly stateAndLog: number }
  >
}

export const run = (options: { readonly iterations: number; readonly warmup: number }) =>
  Effect.gen(function* () {
    const site = yield* SiteServer.start
    const url = site.url("/forms.html")
    const root = mkdtempSync(join(tmpdir(), "switchyard-bench-logs-"))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (process.env.BENCH_KEEP_LOGS) console.log(`overhead logs kept in ${root}`)
        else rmSync(root, { recursive: true, force: true })
      })
    )

    const stack = yield* Layer.build(
      Router.layer({ policy: playwrightOnly }).pipe(
        Layer.provideMerge(Cascade.layer),
        Layer.provideMerge(Sandbox.layer({ idleTimeoutMs: null })),
        Layer.provide(Engines.Engines.layer()),
        Layer.provide(LocalChromium.layer())
      )
    )
    const router = Context.get(stack, Router)
    const cascade = Context.get(stack, Cascade)
    const sandbox = Context.get(stack, Sandbox)
    const spec = yield* (yield* Engines.make()).specFor(playwrightOnly.default.levels[0]!)
    const attemptLog = yield* AttemptLog.make({ root })
    const systemLog = yield* Effect.acquireRelease(
      Effect.sync(() => SystemLog.make({ root, stderr: false })),
      (log) => Effect.promise(log.close)
    )

    /** One logging setup, as the service's layers provide it: off for the layer-by-layer variants. */
    const withLogging = <A, E>(variant: Exclude<Variant, "direct">, self: Effect.Effect<A, E>) =>
      variant === "jsonl" || variant === "screenshots"
        ? self.pipe(
            Effect.provideService(Events.Events, { emit: attemptLog.record }),
            Effect.provideService(Artifacts.Artifacts, {
              screenshots: variant === "screenshots",
              snapshots: true,
              write: attemptLog.artifact
            }),
            Effect.provideService(Logger.CurrentLoggers, new Set([systemLog.logger]))
          )
        : self.pipe(
            Effect.provideService(Events.Events, { emit: () => Effect.void }),
            Effect.provideService(Logger.CurrentLoggers, new Set())
          )

    const calls = [
      ["browser.navigate", { url }],
      ["browser.act", { action: email }],
      ["browser.extract", { instruction: "the form" }],
      ["browser.screenshot", {}]
    ] as const
    /** The engine operation behind each tool, as the Router runs it. */
    const onEngine = (engine: Engine["Service"], k: number): Effect.Effect<unknown, SwitchyardError> => {
      switch (k) {
        case 0:
          return engine.navigate(url)
        case 1:
          return engine.act(email)
        case 2:
          return engine.extract("the form")
        default:
          return engine.screenshot({ fullPage: false }).pipe(Effect.map((png) => Buffer.from(png).toString("base64")))
      }
    }
    const timed = (variant: Exclude<Variant, "direct">, op: (k: number) => Effect.Effect<unknown, unknown>) =>
      Effect.gen(function* () {
        const ms: Array<number> = []
        for (let k = 0; k < calls.length; k++) {
          const started = performance.now()
          yield* withLogging(variant, op(k))
          ms.push(performance.now() - started)
        }
        return ms
      })

    let trace = 0
    const viaRouter = (variant: RouterVariant) => {
      const meta = { traceId: `bench-${variant}-${++trace}` }
      return timed(variant, (k) =>
        router
          .call(calls[k]![0], calls[k]![1], meta)
          .pipe(
            Effect.flatMap((answer) =>
              answer.ok ? Effect.void : Effect.die(new Error(`${calls[k]![0]} failed: ${JSON.stringify(answer.error)}`))
            )
          )
      )
    }

    // The browser starts with the first Router call; then the other clients attach to the same page.
    yield* viaRouter("off")
    const status = yield* sandbox.status
    const http = `http://${new URL(status.wsEndpoint!).host}`
    const targetId = (yield* CdpHttp.listTargets(http)).find((t) => t.type === "page")!.id
    const target = { wsEndpoint: status.wsEndpoint!, httpEndpoint: http, targetId }
    const browser = yield* Effect.acquireRelease(
      Effect.promise(() => chromium.connectOverCDP(status.wsEndpoint!)),
      (b) => Effect.promise(() => b.close())
    )
    const page = browser.contexts()[0]!.pages()[0]!
    const alone = Context.get(
      yield* Layer.build(
        PlaywrightEngine.layer().pipe(
          Layer.provide(Layer.succeed(BrowserSession, BrowserSession.of({ ...target, pid: status.browserPid })))
        )
      ),
      Engine
    )

    const run = (variant: Variant): Effect.Effect<Array<number>, unknown> => {
      switch (variant) {
        case "direct":
          return Effect.promise(() => direct(page, url))
        case "engine":
          return timed(variant, (k) => onEngine(alone, k))
        case "sandbox":
          return timed(variant, (k) => sandbox.use(spec, (engine) => onEngine(engine, k)))
        case "cascade":
          return timed(variant, (k) =>
            cascade.call({
              config: playwrightOnly.default,
              action: calls[k]![0],
              isAct: k === 1,
              run: (engine) => onEngine(engine, k)
            })
          )
        default:
          return viaRouter(variant)
      }
    }

    const samples = Object.fromEntries(variants.map((v) => [v, [] as Array<Array<number>>])) as Record<
      Variant,
      Array<Array<number>>
    >
    const flushes: Array<number> = []
    for (let i = 0; i < options.warmup + options.iterations; i++) {
      // Rotate the order so no variant always runs first or after the same one.
      const order = variants.map((_, k) => variants[(i + k) % variants.length]!)
      for (const variant of order) {
        const ms = yield* run(variant)
        // The attempt screenshots and the log writer run in the background: let them finish before the next variant,
        // outside the timing, as an agent's think time would.
        yield* sandbox.artifacts.settled
        const flushed = yield* Effect.promise(() => Stats.time(() => Effect.runPromise(attemptLog.flush)))
        if (i >= options.warmup) {
          samples[variant].push(ms)
          if (variant === "jsonl" || variant === "screenshots") flushes.push(flushed.ms)
        }
      }
    }

    const total = (v: Variant) => samples[v].map((ms) => ms.reduce((a, b) => a + b, 0))
    const sequence = Object.fromEntries(variants.map((v) => [v, Stats.summarize(total(v))])) as Record<
      Variant,
      Stats.Summary
    >
    const ratio = Object.fromEntries(variants.map((v) => [v, Stats.ratios(total(v), total("direct"))])) as Record<
      Variant,
      Stats.Summary
    >
    const over = (v: Variant) => Math.round((sequence[v].median / sequence.direct.median) * 1000) / 1000
    const ratioOfMedians = Object.fromEntries(variants.map((v) => [v, over(v)])) as Record<Variant, number>
    const perOperation = Object.fromEntries(
      variants.map((v) => [
        v,
        Object.fromEntries(operations.map((op, k) => [op, Stats.summarize(samples[v].map((ms) => ms[k]!))]))
      ])
    ) as OverheadResult["perOperation"]

    // The Sandbox's per-call extras, alone: each raw-CDP read opens its own WebSocket and attaches to the page.
    const timeIt = <A, E>(self: Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const ms: Array<number> = []
        for (let i = 0; i < 20; i++) {
          const started = performance.now()
          yield* self
          ms.push(performance.now() - started)
        }
        return Stats.summarize(ms)
      })
    const link = yield* PageLink.make(target.wsEndpoint, {
      dialogs: Effect.succeed(Option.some(Dialogs.defaultPolicy))
    })
    const kept: Session.PageRun = (f) => link.run(targetId, f)
    const extras = {
      "alive check after a failed call (GET /json/version)": yield* timeIt(CdpHttp.version(http)),
      "alive check (Browser.getVersion, kept socket)": yield* timeIt(link.alive),
      "page state on a switch (GET /json/list + new WS + attach + evaluate)": yield* timeIt(PageState.capture(target)),
      "act fingerprint (kept socket: evaluate)": yield* timeIt(PageState.fingerprint(kept)),
      "act fingerprint on a new socket (connect + attach + evaluate)": yield* timeIt(
        PageState.fingerprint(Session.fresh(target))
      ),
      "artifact screenshot (kept socket: mask + capture)": yield* timeIt(Snapshot.screenshot(kept)),
      "page.evaluate on an open connection (playwright-core)": yield* timeIt(
        Effect.promise(() => page.evaluate(() => 1))
      )
    }
    // Where the time goes inside a Router call: a tracer records the spans the code already opens.
    const spans = new Map<string, Array<number>>()
    const tracer = Tracer.make({
      span: (spanOptions) => {
        const span = new Tracer.NativeSpan(spanOptions)
        const end = span.end.bind(span)
        span.end = (endTime, exit) => {
          end(endTime, exit)
          spans.set(spanOptions.name, [
            ...(spans.get(spanOptions.name) ?? []),
            Number(endTime - spanOptions.startTime) / 1e6
          ])
        }
        return span
      }
    })
    const walls: Array<Array<number>> = []
    for (let i = 0; i < 10; i++) walls.push(yield* viaRouter("off").pipe(Effect.withTracer(tracer)))
    const mean = (xs: ReadonlyArray<number> | undefined) =>
      xs === undefined || xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length
    const round = (n: number) => Math.round(n * 10) / 10
    const engineSpan = [
      "PlaywrightEngine.navigate",
      "PlaywrightEngine.act",
      "PlaywrightEngine.extract",
      "PlaywrightEngine.screenshot"
    ]
    const breakdown = Object.fromEntries(
      calls.map(([tool], k) => {
        const call = mean(walls.map((w) => w[k]!))
        const routed = mean(spans.get(`Router.${tool}`))
        const engine = mean(spans.get(engineSpan[k]!))
        return [
          tool,
          {
            call: round(call),
            engine: round(engine),
            cascadeAndSandbox: round(routed - engine),
            stateAndLog: round(call - routed)
          }
        ]
      })
    )

    return {
      iterations: options.iterations,
      sequence,
      ratio,
      ratioOfMedians,
      perOperation,
      flush: Stats.summarize(flushes),
      extras,
      breakdown
    } satisfies OverheadResult
  }).pipe(Effect.scoped)
