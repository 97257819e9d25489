/**
 * The web patterns (test/Web/patterns) run as an agent would on the real service, in its default configuration:
 * per class, how many patterns the agent gets through and how many answers said success while the page's own record
 * disagreed (false successes), and per tool, how long a call takes.
 */
import { Effect } from "effect"
import { startService } from "../test/support/Service.ts"
import { agentFor } from "../test/Web/Agent.ts"
import type { Agent, PatternClass } from "../test/Web/Pattern.ts"
import { load } from "../test/Web/Patterns.ts"
import * as Server from "../test/Web/Server.ts"
import * as Stats from "./Stats.ts"

export interface WebResult {
  readonly rounds: number
  readonly classes: Record<
    string,
    { readonly patterns: number; readonly runs: number; readonly passed: number; readonly falseSuccesses: number }
  >
  readonly perTool: Record<string, Stats.Summary>
  /** Patterns that failed at least once, with the first failure's message. */
  readonly failures: ReadonlyArray<{ readonly pattern: string; readonly class: PatternClass; readonly error: string }>
  /** Each pattern's first false success: the call that answered success and what the page showed instead. */
  readonly falseSuccesses: ReadonlyArray<{
    readonly pattern: string
    readonly class: PatternClass
    readonly call: string
    readonly label: string
    readonly page: string
  }>
}

/** The agent with every call timed by tool name. */
const timed = (agent: Agent, samples: Map<string, Array<number>>): Agent => ({
  ...agent,
  call: async (tool, args) => {
    const { ms, value } = await Stats.time(() => agent.call(tool, args))
    samples.set(tool, [...(samples.get(tool) ?? []), ms])
    return value
  },
  ok: async (tool, args) => {
    const { ms, value } = await Stats.time(() => agent.ok(tool, args))
    samples.set(tool, [...(samples.get(tool) ?? []), ms])
    return value
  }
})

export const run = (options: { readonly rounds: number }) =>
  Effect.promise(async (): Promise<WebResult> => {
    const patterns = await load()
    const server = await Server.start(patterns)
    const service = startService()
    const samples = new Map<string, Array<number>>()
    const classes: Record<string, { patterns: number; runs: number; passed: number; falseSuccesses: number }> = {}
    const failures: Array<{ pattern: string; class: PatternClass; error: string }> = []
    const falseSuccesses: Array<WebResult["falseSuccesses"][number]> = []
    try {
      for (let round = 0; round < options.rounds; round++) {
        for (const p of patterns) {
          const tally = classes[p.class] ?? { patterns: 0, runs: 0, passed: 0, falseSuccesses: 0 }
          classes[p.class] = tally
          if (round === 0) tally.patterns++
          tally.runs++
          const agent = agentFor(service, server, p)
          try {
            await p.run(timed(agent, samples))
            tally.passed++
          } catch (error) {
            if (!failures.some((f) => f.pattern === p.name)) {
              failures.push({ pattern: p.name, class: p.class, error: String(error).slice(0, 300) })
            }
          } finally {
            await service.call("browserClose", { session: p.name })
          }
          const lied = agent.falseSuccesses()
          tally.falseSuccesses += lied.length
          const first = lied[0]
          if (first !== undefined && !falseSuccesses.some((f) => f.pattern === p.name)) {
            falseSuccesses.push({
              pattern: p.name,
              class: p.class,
              call: first.call.slice(0, 200),
              label: first.label,
              page: JSON.stringify(first.actual).slice(0, 200)
            })
          }
        }
      }
    } finally {
      service.child.stdin.end()
      await Promise.race([service.exited, new Promise((r) => setTimeout(r, 10_000))])
      await server.close()
    }
    return {
      rounds: options.rounds,
      classes,
      perTool: Object.fromEntries([...samples].map(([tool, ms]) => [tool, Stats.summarize(ms)])),
      failures,
      falseSuccesses
    }
  })
