/**
 * What the cascade records about each engine attempt, wrapped around the attempt so the cascade's loop reads as
 * control flow only: a `start` and exactly one terminal event (`success` or `failure`, also for an attempt stopped
 * from outside), `engine_operation`/`engine_failure`, telemetry, a span, and the caller's hooks (artifacts, breakers).
 */
import { Cause, Clock, Effect, Exit, Option } from "effect"
import * as EngineId from "../EngineId.ts"
import type { SwitchyardError } from "../Errors.ts"
import * as Artifacts from "../Logging/Artifacts.ts"
import * as Events from "../Logging/Events.ts"
import * as Telemetry from "../Logging/Telemetry.ts"
import type { Sandbox } from "../Sandbox/Sandbox.ts"
import { idOf, type Level } from "./Policy.ts"

/** Which engine attempt of a call this is. */
export interface AttemptRef {
  /** `<call attemptId>.<n>`: the n-th engine attempt of the call. */
  readonly id: string
  readonly level: Level
  /** Position of the level in the cascade, from 0. */
  readonly index: number
  /** Attempt number on this level, from 1. */
  readonly attempt: number
}

/** Run after the terminal event, interruptibly: slow work here (artifacts) never costs an attempt its event. */
export interface Hooks {
  readonly onSuccess?: ((at: AttemptRef) => Effect.Effect<void>) | undefined
  readonly onFailure?: ((at: AttemptRef, error: SwitchyardError) => Effect.Effect<void>) | undefined
}

/** The stop reason logged for an attempt that ended without an answer of its own. */
const stopped = "the attempt was stopped before it finished (time budget, shutdown or a cancelled call)"

/**
 * Records `attempt` as the attempt `at` of the tool call `action`. The start event and the terminal record are an
 * acquire and a release: they run uninterruptibly, so every started attempt logs exactly one end.
 */
export const instrumented =
  (at: AttemptRef, action: string, hooks: Hooks = {}) =>
  <A>(attempt: Effect.Effect<A, SwitchyardError>): Effect.Effect<A, SwitchyardError> => {
    const engine = EngineId.label(idOf(at.level))
    const ref = {
      engine: at.level.engine,
      ...(at.level.mode ? { mode: at.level.mode } : {}),
      level: at.index,
      attempt: at.attempt
    }
    const lifecycle = { attemptId: at.id, provider: at.level.engine, ...ref }

    const begin = Events.emit({ event: "start", ...lifecycle }).pipe(Effect.andThen(Clock.currentTimeMillis))

    const succeeded = (durationMs: number) =>
      Effect.gen(function* () {
        yield* Events.emit({ event: "success", ...lifecycle, durationMs, outcome: "success" })
        yield* Telemetry.recordOperation(engine, "success", durationMs)
        yield* Events.emit({ event: "engine_operation", ...ref, durationMs, outcome: "success" })
      })

    const failed = (durationMs: number, error: SwitchyardError) =>
      Effect.gen(function* () {
        yield* Events.emit({
          event: "failure",
          ...lifecycle,
          durationMs,
          outcome: "failure",
          reason: error.message,
          errorType: error.type,
          retryable: error.retryable
        })
        yield* Telemetry.recordOperation(engine, "failure", durationMs, error.type)
        yield* Events.emit({ event: "engine_operation", ...ref, durationMs, outcome: "failure", errorType: error.type })
        yield* Events.emit({
          event: "engine_failure",
          ...ref,
          errorType: error.type,
          message: error.message,
          retryable: error.retryable
        })
      })

    /** Stopped from outside (the total budget, shutdown, a cancelled call) or died: still one terminal event. */
    const unanswered = (durationMs: number, cause: Cause.Cause<SwitchyardError>) =>
      Events.emit({
        event: "failure",
        ...lifecycle,
        durationMs,
        outcome: "failure",
        ...(Cause.hasInterruptsOnly(cause)
          ? { reason: stopped, errorType: "interrupted", retryable: true }
          : { reason: `the attempt died: ${String(Cause.squash(cause))}`, errorType: "defect", retryable: false })
      })

    const end = (started: number, exit: Exit.Exit<A, SwitchyardError>) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => {
          const durationMs = now - started
          if (Exit.isSuccess(exit)) return succeeded(durationMs)
          const error = Cause.findErrorOption(exit.cause)
          return Option.isSome(error) ? failed(durationMs, error.value) : unanswered(durationMs, exit.cause)
        })
      )

    return Effect.acquireUseRelease(begin, () => attempt, end).pipe(
      Effect.tap(() => hooks.onSuccess?.(at) ?? Effect.void),
      Effect.tapError((error) => hooks.onFailure?.(at, error) ?? Effect.void),
      Effect.withSpan("Cascade.attempt", {
        attributes: { attemptId: at.id, engine, level: at.index, attempt: at.attempt, action }
      })
    )
  }

/**
 * The artifacts of an attempt, best effort (they never fail or change its outcome): a screenshot after every
 * attempt, finished off the answer's path, and, after a failure, a snapshot of the page around what the call looked
 * for.
 */
export const capture =
  (artifacts: Sandbox["Service"]["artifacts"]) =>
  (at: AttemptRef, error?: SwitchyardError): Effect.Effect<void> =>
    Effect.gen(function* () {
      const sink = yield* Artifacts.Artifacts
      const call = yield* Events.CurrentCall
      if (call === undefined) return
      // Taken or held, saved in the background: the answer does not wait for the frame. The event of an attempt whose
      // picture is an earlier one's is stamped with this call's ids.
      if (sink.screenshots) {
        const name = `${at.id}.png`
        yield* artifacts.screenshotLater({
          save: (png) => sink.write(call.traceId, name, png),
          same: (first) =>
            Events.emit({
              event: "screenshot_shared",
              attemptId: at.id,
              sameAs: first.where.attemptId,
              sameAsTrace: first.where.traceId,
              file: first.where.file
            }).pipe(Effect.provideService(Events.CurrentCall, call)),
          lost: (reason) =>
            Events.emit({ event: "screenshot_lost", attemptId: at.id, reason }).pipe(
              Effect.provideService(Events.CurrentCall, call)
            ),
          where: { attemptId: at.id, traceId: call.traceId, file: Artifacts.fileOf(name) }
        })
      }
      if (error !== undefined && sink.snapshots) {
        const lookedFor = "target" in error ? error.target : undefined
        const snapshot = yield* artifacts.snapshot(lookedFor)
        if (Option.isSome(snapshot)) {
          yield* sink.write(call.traceId, `${at.id}.snapshot.json`, {
            attemptId: at.id,
            error: { type: error.type, message: error.message },
            ...(snapshot.value as object)
          })
        }
      }
    })
