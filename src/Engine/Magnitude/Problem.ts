/**
 * How the Magnitude worker describes a failure for the engine's one error mapping: a Problem says where it came from
 * (model, page, a limit), and every handler answers an Outcome instead of throwing across the thread.
 */
import { errors } from "playwright-core"
import type { SideEffect } from "../../Errors/Fields.ts"
import { framesOf } from "../Isolated.ts"
import type { Outcome, Problem } from "./Protocol.ts"

/** A failure already described for the engine's error mapping. */
export class Failed extends Error {
  readonly problem: Problem
  constructor(problem: Problem) {
    super(problem.message)
    this.problem = problem
  }
}

export const nameOf = (error: unknown) => (error instanceof Error ? error.name : "Error")
export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Where a library's error was thrown: its stack frames, when it has them. */
const framesField = (error: unknown) => {
  const frames = framesOf(error)
  return frames === undefined ? {} : { frames }
}

/** A Playwright or magnitude failure on the page; a Failed passes its Problem through. */
export const browserProblem = (error: unknown, sideEffect: SideEffect): Problem =>
  error instanceof Failed
    ? error.problem
    : {
        source: "browser",
        name: error instanceof errors.TimeoutError ? "TimeoutError" : nameOf(error),
        message: messageOf(error),
        sideEffect,
        ...framesField(error)
      }

export const isBamlError = (error: unknown) => nameOf(error).startsWith("Baml") || /^BamlError:/.test(messageOf(error))

/** A model-call failure: BAML's HTTP errors carry `status_code`. */
export const llmProblem = (error: unknown, sideEffect: SideEffect): Problem => {
  const status = (error as { status_code?: unknown }).status_code
  return {
    source: "llm",
    name: nameOf(error),
    message: messageOf(error),
    sideEffect,
    ...(typeof status === "number" ? { status } : {}),
    ...framesField(error)
  }
}

/** A handler that answers an Outcome: what it throws becomes a Problem. */
export const guard =
  <Args extends Array<unknown>, A>(f: (...args: Args) => Promise<A>) =>
  async (...args: Args): Promise<Outcome<A>> => {
    try {
      return { ok: true, value: await f(...args) }
    } catch (error) {
      return { ok: false, problem: browserProblem(error, "none") }
    }
  }
