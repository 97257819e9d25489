/**
 * Ending a person's wait in a job application: the wait the application on a session has now (its latest attempt's),
 * completed with the person's answer — at once where a workflow engine is at hand (a runner, the process running
 * the application, a fleet's client), or as a request in the store that the process running the application
 * completes (on the embedded store, from another process).
 */
import { Effect, Layer, Option, Schema } from "effect"
import { DurableDeferred, type WorkflowEngine } from "effect/workflow"
import { TaskEvents } from "../Cluster/Events.ts"
import { InvalidInput } from "../Errors/Page.ts"
import { Questions } from "../Takeover/Questions.ts"
import * as Runs from "./Runs.ts"
import { personFor } from "./Workflow.ts"

/** The wait of the application driving `session`, if it has one now. */
export const waitOn = (session: string) =>
  Effect.gen(function* () {
    const application = Runs.applicationOfSession(session)
    if (application === undefined) return undefined
    return (yield* Runs.current(application)).wait
  })

/** A wait that asks a question takes an answer; one that does not ignores it. */
export const checked = (wait: Runs.Wait, answer: Runs.Answer | undefined) =>
  wait.question !== undefined && answer === undefined
    ? Effect.fail(
        new InvalidInput({
          field: "answer",
          message: `${wait.step} waits for an answer: ${wait.question} Resume with --submitted if the application was received, --not-submitted if it was not (JSON-RPC: "answer": "submitted" | "not-submitted")`
        })
      )
    : Effect.succeed(wait.question === undefined ? undefined : answer)

/** Completes the wait with the workflow engine in context. */
export const complete = (wait: Runs.Wait, answer: Runs.Answer | undefined) =>
  Effect.gen(function* () {
    const value = yield* checked(wait, answer)
    const events = yield* TaskEvents
    yield* DurableDeferred.succeed(personFor(wait.step), {
      token: wait.token as DurableDeferred.Token,
      value: value === undefined ? {} : { answer: value }
    })
    yield* events.record(wait.run, Runs.event.humanResumed, {
      step: wait.step,
      session: wait.session,
      token: wait.token,
      ...(value === undefined ? {} : { answer: value })
    })
    return { resumed: true, run: wait.run, step: wait.step, ...(value === undefined ? {} : { answer: value }) }
  })

/** Asks, through the store, the process running the application to complete the wait. */
export const request = (wait: Runs.Wait, answer: Runs.Answer | undefined) =>
  Effect.gen(function* () {
    const value = yield* checked(wait, answer)
    const events = yield* TaskEvents
    yield* events.record(wait.run, Runs.event.resumeRequested, {
      step: wait.step,
      session: wait.session,
      token: wait.token,
      ...(value === undefined ? {} : { answer: value })
    })
  })

/** The requests in `history` not yet completed: the process running the run completes them. */
export const requested = (
  run: string,
  history: ReadonlyArray<{ eventType: string; data: Record<string, unknown> }>
) => {
  const done = new Set(history.filter((e) => e.eventType === Runs.event.humanResumed).map((e) => e.data.token))
  const asked = new Map(
    history.filter((e) => e.eventType === Runs.event.humanNeeded).map((e) => [e.data.token, e.data] as const)
  )
  const seen = new Set<unknown>()
  return history
    .filter((e) => e.eventType === Runs.event.resumeRequested && !done.has(e.data.token) && asked.has(e.data.token))
    .filter((e) => !seen.has(e.data.token) && seen.add(e.data.token) !== undefined)
    .map((e) => {
      const needed = asked.get(e.data.token)!
      const wait: Runs.Wait = {
        run,
        step: String(needed.step),
        session: String(needed.session),
        token: String(needed.token),
        reason: String(needed.reason ?? ""),
        ...(typeof needed.question === "string" ? { question: needed.question } : {}),
        ...(typeof needed.novnc === "string" ? { novnc: needed.novnc } : {}),
        at: ""
      }
      return { wait, answer: e.data.answer as Runs.Answer | undefined }
    })
}

export type Requirements = TaskEvents | WorkflowEngine.WorkflowEngine

/**
 * The applications' waits as the service's `Questions`, where a workflow engine runs them (a runner): the HTTP resume
 * route ends an application's wait with the person's answer (`switchyard resume <session> --submitted --url …`).
 */
export const questions = Layer.effect(
  Questions,
  Effect.gen(function* () {
    const context = yield* Effect.context<Requirements>()
    return Questions.of({
      answer: (session, answer) =>
        Effect.gen(function* () {
          const wait = yield* waitOn(session)
          if (wait === undefined) return Option.none()
          const value =
            answer === undefined
              ? undefined
              : yield* Schema.decodeUnknownEffect(Runs.Answer)(answer).pipe(
                  Effect.mapError(
                    () => new InvalidInput({ field: "answer", message: `the answer is "submitted" or "not-submitted"` })
                  )
                )
          return Option.some<Record<string, unknown>>(yield* complete(wait, value))
        }).pipe(Effect.provideContext(context))
    })
  })
)
