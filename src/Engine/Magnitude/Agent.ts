/**
 * magnitude-core's agent on the session's page, in the worker: started on that page's own context, its hidden retries
 * off, each `act` held to the step and action limits, and the first failure of a run kept before magnitude rewraps it.
 */
import type { BrowserAgent } from "magnitude-core"
import type { Browser, Page } from "playwright-core"
import { bamlOptions, magnitudeClient } from "./Client.ts"
import type { ExtractModel } from "./Extract.ts"
import { browserProblem, Failed, llmProblem, messageOf, nameOf } from "./Problem.ts"
import type { ActDone, Limits, LlmClient, Problem } from "./Protocol.ts"

type MagnitudeCore = typeof import("magnitude-core")

/** magnitude-core's internals this worker adjusts: they are private in its types but plain fields at runtime. */
interface ModelInternals {
  readonly cr: {
    addLlmClient(name: string, provider: string, options: Record<string, unknown>, retryPolicy?: string): void
  }
}
interface PlannedTurn {
  readonly reasoning: string
  readonly actions: ReadonlyArray<{ readonly variant: string }>
}
interface AgentInternals {
  readonly models: ExtractModel & {
    readonly uniqueModels: ReadonlyArray<ModelInternals>
    partialAct: (...args: Array<unknown>) => Promise<PlannedTurn>
  }
  exec: (action: { readonly variant: string }, memory?: unknown) => Promise<void>
}
interface HarnessInternals {
  readonly page: unknown
  switchTab(options: { index: number }): Promise<void>
  stop(): Promise<void>
  screenshot(): Promise<unknown>
}

/** The per-`act` counters the step limit reads, and the first failure seen before magnitude rewraps it. */
interface Run {
  turns: number
  actions: number
  reasoning: string
  problem: Problem | undefined
}

export interface Agent {
  /** Runs one instruction to its end, or throws a Failed saying why it stopped. */
  readonly act: (instruction: string) => Promise<ActDone>
  /** Makes the session's page the agent's active tab again (a click may have opened and switched to another). */
  readonly focus: () => Promise<void>
  /** A screenshot in the form magnitude's models take. */
  readonly screenshot: () => Promise<unknown>
  readonly extractModel: ExtractModel
  /** Stops magnitude's tab polling; the browser and its pages keep running. */
  readonly stop: () => Promise<void>
}

export const start = async (
  magnitude: MagnitudeCore,
  browser: Browser,
  page: Page,
  llm: LlmClient,
  limits: Limits
): Promise<Agent> => {
  // The session page's own context, so the agent drives that page with its cookies and state, not a fresh context.
  const agent: BrowserAgent = await magnitude.startBrowserAgent({
    // magnitude-core types its context with the patchright it bundles; a playwright-core context works the same.
    browser: { context: page.context() as unknown as BrowserAgent["context"] },
    llm: magnitudeClient(llm),
    telemetry: false
  })
  const internals = agent as unknown as AgentInternals
  const harness = agent.require(magnitude.BrowserConnector).getHarness() as unknown as HarnessInternals
  for (const model of internals.models.uniqueModels) model.cr.addLlmClient("Magnus", llm.provider, bamlOptions(llm))

  let run: Run | undefined
  const sideEffectOf = (r: Run) => (r.actions > 0 ? "possible" : "none")

  // Every planning call passes here: count it against the step limit, and keep the original failure, because magnitude
  // rewraps it as "Error planning actions: …" and retries some messages ("401 Unauthorized", "No actions generated")
  // three more times; the error thrown onwards matches none of those, so magnitude gives up at once.
  const partialAct = internals.models.partialAct.bind(internals.models)
  internals.models.partialAct = async (...args) => {
    const current = run
    if (current === undefined) return partialAct(...args)
    if (current.turns >= limits.maxSteps) {
      current.problem ??= {
        source: "limit",
        name: "StepLimit",
        message: `act stopped after ${current.turns} model turns and ${current.actions} actions: the step limit is ${limits.maxSteps} turns`,
        sideEffect: "possible"
      }
      throw new Error("switchyard: step limit reached")
    }
    current.turns++
    let turn: PlannedTurn
    try {
      turn = await partialAct(...args)
    } catch (error) {
      current.problem ??= llmProblem(error, sideEffectOf(current))
      throw new Error("switchyard: the model call failed")
    }
    if (turn.actions.length === 0) {
      current.problem ??= {
        source: "llm_response",
        name: "NoActions",
        message: "the model answered without any action",
        sideEffect: sideEffectOf(current)
      }
      throw new Error("switchyard: the model proposed nothing")
    }
    current.reasoning = turn.reasoning
    return turn
  }

  // Every action the model chose passes here: count it against the action limit before it runs.
  const exec = internals.exec.bind(agent)
  internals.exec = async (action, memory) => {
    const current = run
    if (current === undefined || action.variant.startsWith("task:")) {
      return exec(action, memory).catch((error) => {
        if (current !== undefined && action.variant === "task:fail") {
          current.problem ??= {
            source: "gave_up",
            name: "TaskFailed",
            message: messageOf(error),
            sideEffect: "possible"
          }
        }
        throw error
      })
    }
    if (current.actions >= limits.maxActions) {
      current.problem ??= {
        source: "limit",
        name: "ActionLimit",
        message: `act stopped after ${current.actions} actions in ${current.turns} model turns: the action limit is ${limits.maxActions}`,
        sideEffect: "possible"
      }
      throw new Error("switchyard: action limit reached")
    }
    try {
      await exec(action, memory)
      current.actions++
    } catch (error) {
      // Magnitude validates the model's action before running it.
      const invalid = /violates input schema|Undefined action type/.test(messageOf(error))
      current.problem ??= invalid
        ? { source: "llm_response", name: nameOf(error), message: messageOf(error), sideEffect: sideEffectOf(current) }
        : browserProblem(error, "possible")
      if (!invalid) current.actions++
      throw error
    }
  }

  const focus = async () => {
    if (page.isClosed() || !browser.isConnected()) {
      throw new Failed({
        source: "browser",
        name: "PageClosed",
        message: "the session's page or browser has been closed",
        sideEffect: "none"
      })
    }
    if (harness.page !== (page as unknown)) await harness.switchTab({ index: page.context().pages().indexOf(page) })
  }

  return {
    act: async (instruction) => {
      await focus()
      const current: Run = { turns: 0, actions: 0, reasoning: "", problem: undefined }
      run = current
      try {
        await agent.act(instruction)
      } catch (error) {
        throw new Failed(current.problem ?? browserProblem(error, sideEffectOf(current)))
      } finally {
        run = undefined
      }
      return { turns: current.turns, actions: current.actions, reasoning: current.reasoning }
    },
    focus,
    screenshot: () => harness.screenshot(),
    extractModel: internals.models,
    stop: () => harness.stop()
  }
}
