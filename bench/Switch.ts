/**
 * Engine switch latency on one browser: the Sandbox's switch protocol (capture page state, disconnect, verify the
 * browser, connect, verify, restore) for every ordered pair of Playwright, Stagehand (dom and cua) and Magnitude,
 * walked as one cycle through all sixteen pairs per round, against closing the browser and relaunching it with the URL
 * restored. Each engine's first connect in the session (it loads the engine's SDK) is timed apart, before the rounds.
 * The model engines only connect here: their model points at a scripted local server, never called.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import * as Engines from "../src/Cascade/Engines.ts"
import type { Level } from "../src/Cascade/Policy.ts"
import type { EngineSpec } from "../src/Engine/EngineSpec.ts"
import * as LocalChromium from "../src/Sandbox/Provider/LocalChromium.ts"
import { Sandbox } from "../src/Sandbox/Sandbox.ts"
import * as LlmServer from "../test/fixtures/LlmServer.ts"
import * as SiteServer from "../test/fixtures/SiteServer.ts"
import * as Stats from "./Stats.ts"

const names = {
  playwright: "Playwright",
  stagehand: "Stagehand dom",
  magnitude: "Magnitude",
  cua: "Stagehand cua"
} as const
type Name = keyof typeof names

/** An Eulerian circuit of the complete digraph with loops on four engines: each ordered pair once, chained. */
const circuit: ReadonlyArray<readonly [Name, Name]> = [
  ["playwright", "playwright"],
  ["playwright", "stagehand"],
  ["stagehand", "playwright"],
  ["playwright", "magnitude"],
  ["magnitude", "playwright"],
  ["playwright", "cua"],
  ["cua", "stagehand"],
  ["stagehand", "stagehand"],
  ["stagehand", "magnitude"],
  ["magnitude", "stagehand"],
  ["stagehand", "cua"],
  ["cua", "magnitude"],
  ["magnitude", "magnitude"],
  ["magnitude", "cua"],
  ["cua", "cua"],
  ["cua", "playwright"]
]

export interface SwitchResult {
  readonly rounds: number
  readonly pairs: Record<string, Stats.Summary>
  /** Each engine's first connect in the session, from Playwright, ms: it loads the engine's SDK. */
  readonly firstConnect?: Record<string, number>
  readonly relaunch: Stats.Summary
  /** Switches after which the page was not where it had been. */
  readonly lostPage: number
}

const sandboxOn = Layer.build(Sandbox.layer({ idleTimeoutMs: null }).pipe(Layer.provide(LocalChromium.layer()))).pipe(
  Effect.map((context) => Context.get(context, Sandbox))
)

export const run = (options: { readonly rounds: number }) =>
  Effect.gen(function* () {
    const site = yield* SiteServer.start
    const llm = yield* LlmServer.start()
    const url = site.url("/forms.html")
    const registry = yield* Engines.make({
      model: {
        model: "openai/gpt-4.1-mini",
        apiKeys: { openai: Redacted.make("dummy") },
        baseURLs: { openai: `${llm.origin}/v1` }
      }
    })
    const level = (engine: Level["engine"], mode?: "dom" | "cua"): Level => ({
      engine,
      ...(mode ? { mode } : {}),
      retryCount: 0,
      timeoutPerAttemptMs: 60_000
    })
    const specs: Record<Name, EngineSpec> = {
      playwright: yield* registry.specFor(level("playwright")),
      stagehand: yield* registry.specFor(level("stagehand", "dom")),
      magnitude: yield* registry.specFor(level("magnitude")),
      cua: yield* registry.specFor(level("stagehand", "cua"))
    }

    const sandbox = yield* sandboxOn
    const relaunched = yield* sandboxOn
    yield* sandbox.use(specs.playwright, (e) => e.navigate(url))
    yield* relaunched.use(specs.playwright, (e) => e.navigate(url))

    const firstConnect: Record<string, number> = {}
    for (const name of ["stagehand", "magnitude", "cua"] as const) {
      const started = performance.now()
      yield* sandbox.switchTo(specs[name], "bench: first connect")
      firstConnect[names[name]] = Math.round(performance.now() - started)
      yield* sandbox.switchTo(specs.playwright, "bench: first connect")
    }

    const samples: Record<string, Array<number>> = {}
    const relaunch: Array<number> = []
    let lostPage = 0
    for (let round = 0; round < options.rounds; round++) {
      // Start the cycle at a different pair each round; the cycle stays chained.
      const order = circuit.map((_, k) => circuit[(round * 5 + k) % circuit.length]!)
      yield* sandbox.use(specs[order[0]![0]], (e) => e.pageState())
      for (const [k, [from, to]] of order.entries()) {
        const started = performance.now()
        const record = yield* sandbox.switchTo(specs[to], "bench")
        const ms = performance.now() - started
        if (!record.success || record.pageState.url !== url) lostPage++
        const key = `${names[from]} → ${names[to]}`
        samples[key] = [...(samples[key] ?? []), ms]
        // The alternative, once per round, in the middle of the cycle.
        if (k === 8) {
          const t = performance.now()
          yield* relaunched.close
          yield* relaunched.use(specs.playwright, (e) => e.navigate(url))
          relaunch.push(performance.now() - t)
        }
      }
      const seen = yield* sandbox.use(specs.playwright, (e) => e.pageState())
      if (seen.url !== url) lostPage++
    }
    return {
      rounds: options.rounds,
      pairs: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Stats.summarize(v)])),
      firstConnect,
      relaunch: Stats.summarize(relaunch),
      lostPage
    } satisfies SwitchResult
  }).pipe(Effect.scoped)
