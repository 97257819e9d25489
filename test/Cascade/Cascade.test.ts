/**
 * The cascade's policy on virtual time: random level configurations against random engine behaviour scripts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { run } from "../../src/Cascade/Cascade.ts"
import type { AttemptRef } from "../../src/Cascade/Instrumentation.ts"
import type { CascadeConfig } from "../../src/Cascade/Policy.ts"
import { EngineCoolingDown, LlmError, NotConfigured, Timeout } from "../../src/Errors/Engine.ts"
import { ActionFailed, AmbiguousTarget, ElementNotFound, InvalidInput } from "../../src/Errors/Page.ts"
import { HumanTimeout } from "../../src/Errors/Service.ts"
import { type SwitchyardError, toErrorInfo } from "../../src/Errors.ts"
import * as Events from "../../src/Logging/Events.ts"

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

/**
 * What an engine does on one attempt: succeed, fail after a while (retryably, fatally, or with a miss on a page that
 * does not change), or never answer.
 */
const Outcome = Schema.Struct({
  kind: Schema.Literals(["success", "retryable", "fatal", "miss", "hang"]),
  durationMs: between(0, 4_000)
})
type Outcome = typeof Outcome.Type

const Scenario = Schema.Struct({
  levels: Schema.Array(
    Schema.Struct({
      retryCount: between(0, 3),
      timeoutPerAttemptMs: between(100, 5_000),
      outcomes: Schema.Array(Outcome).check(Schema.isMaxLength(5))
    })
  ).check(Schema.isBetweenLength(1, 4)),
  totalTimeoutMs: between(500, 40_000)
})
type Scenario = typeof Scenario.Type

const configOf = (s: Scenario): CascadeConfig => ({
  totalTimeoutMs: s.totalTimeoutMs,
  retryBaseDelayMs: 50,
  levels: s.levels.map((l) => ({
    engine: "playwright",
    retryCount: l.retryCount,
    timeoutPerAttemptMs: l.timeoutPerAttemptMs
  }))
})

/** Attempts beyond a level's script fail retryably. */
const outcomeAt = (s: Scenario, at: AttemptRef): Outcome =>
  s.levels[at.index]!.outcomes[at.attempt - 1] ?? { kind: "retryable", durationMs: 10 }

/** `slowFailureMs`: recording a failure (artifacts) takes this long, so the budget can run out in the middle of it. */
const simulate = (s: Scenario, isAct = false, slowFailureMs = 0) =>
  Effect.gen(function* () {
    const attempts: Array<AttemptRef> = []
    const { events, sink } = Events.memory()
    const runner = {
      attempt: (at: AttemptRef) =>
        Effect.gen(function* () {
          attempts.push(at)
          const o = outcomeAt(s, at)
          if (o.kind === "hang") return yield* Effect.never
          yield* Effect.sleep(o.durationMs)
          if (o.kind === "success") return `level ${at.index}`
          return yield* o.kind === "retryable"
            ? new LlmError({ status: 500, retryable: true, message: "flaky" })
            : o.kind === "miss"
              ? new ElementNotFound({ target: "button Nope", message: "no button Nope" })
              : new NotConfigured({ message: "cannot" })
        }),
      skip: () => Effect.succeed(Option.none<SwitchyardError>()),
      fingerprint: Effect.succeed("same"),
      onFailure: () => Effect.sleep(slowFailureMs)
    }
    const started = yield* Clock.currentTimeMillis
    let terminals = 0
    const fiber = yield* run<string>(configOf(s), runner, { action: "browser.act", isAct }).pipe(
      Effect.ensuring(Effect.sync(() => terminals++)),
      Effect.exit,
      Effect.flatMap((exit) =>
        Clock.currentTimeMillis.pipe(Effect.map((ended) => ({ exit, elapsed: ended - started })))
      ),
      Effect.provideService(Events.Events, sink),
      Effect.forkChild
    )
    yield* TestClock.adjust(s.totalTimeoutMs + 60_000)
    const { exit, elapsed } = yield* Fiber.join(fiber)
    return { exit, elapsed, attempts, events, terminals }
  })

describe("Cascade.run", () => {
  it.effect.prop("never exceeds its total budget on virtual time, and answers exactly once", [Scenario], ([s]) =>
    Effect.gen(function* () {
      const { exit, elapsed, terminals } = yield* simulate(s)
      assert.isAtMost(elapsed, s.totalTimeoutMs)
      assert.strictEqual(terminals, 1)
      if (Exit.isFailure(exit) && elapsed === s.totalTimeoutMs) {
        const error = exit.cause.reasons[0]
        assert.strictEqual(error?._tag === "Fail" ? (error.error as SwitchyardError).type : undefined, "timeout")
      }
    })
  )

  it.effect.prop(
    "attempts per level = min(outcomes until success, retryCount + 1); fatal errors and misses on an unchanged page never retry",
    [Scenario],
    ([s]) =>
      Effect.gen(function* () {
        // Give every level and attempt all the time it needs: only the per-level rules shape the attempts.
        const roomy: Scenario = {
          ...s,
          totalTimeoutMs: 1_000_000,
          levels: s.levels.map((l) => ({
            ...l,
            outcomes: l.outcomes.map((o) => ({
              kind: o.kind === "hang" ? ("retryable" as const) : o.kind,
              durationMs: Math.min(o.durationMs, l.timeoutPerAttemptMs - 1)
            }))
          }))
        }
        const { exit, attempts } = yield* simulate(roomy)
        let reached = true
        for (const [index, level] of roomy.levels.entries()) {
          const made = attempts.filter((a) => a.index === index).length
          if (!reached) {
            assert.strictEqual(made, 0, `level ${index} ran after an earlier level succeeded`)
            continue
          }
          const script = Array.from({ length: level.retryCount + 1 }, (_, i) => level.outcomes[i]?.kind ?? "retryable")
          const decisive = script.findIndex((k) => k === "success" || k === "fatal" || k === "miss")
          const expected = decisive >= 0 ? decisive + 1 : level.retryCount + 1
          assert.strictEqual(made, expected, `level ${index}: ${script.join(",")}`)
          if (decisive >= 0 && script[decisive] === "success") reached = false
        }
        assert.strictEqual(Exit.isSuccess(exit), !reached)
      })
  )

  it.effect.prop("every escalation is preceded by that level's last failure", [Scenario], ([s]) =>
    Effect.gen(function* () {
      const { events } = yield* simulate(s)
      for (const [i, e] of events.entries()) {
        if (e.event !== "cascade_escalation") continue
        const failures = events.slice(0, i).filter((f) => f.event === "engine_failure" && f.level === e.fromLevel)
        assert.isAbove(failures.length, 0, `escalation from level ${e.fromLevel} without a failure`)
        const laterOnSameLevel = events
          .slice(i)
          .some((f) => (f.event === "engine_operation" || f.event === "engine_failure") && f.level === e.fromLevel)
        assert.isFalse(laterOnSameLevel, `level ${e.fromLevel} ran again after escalating`)
      }
    })
  )

  it.effect.prop(
    "every attempt logs one start and one terminal event, even when the budget ends while a failure is recorded",
    [Scenario, between(0, 3_000)],
    ([s, slowFailureMs]) =>
      Effect.gen(function* () {
        const { events } = yield* simulate(s, false, slowFailureMs)
        const byAttempt = new Map<string, Array<string>>()
        for (const e of events as ReadonlyArray<{ event: string; attemptId?: string }>) {
          if (e.attemptId === undefined || !["start", "success", "failure"].includes(e.event)) continue
          byAttempt.set(e.attemptId, [...(byAttempt.get(e.attemptId) ?? []), e.event])
        }
        for (const [id, seen] of byAttempt) {
          assert.strictEqual(seen[0], "start", id)
          assert.strictEqual(seen.length, 2, `${id}: ${seen.join(", ")}`)
        }
      })
  )

  it.effect("a timed-out attempt is interrupted and reported with its level and attempt", () =>
    Effect.gen(function* () {
      const s: Scenario = {
        totalTimeoutMs: 60_000,
        levels: [
          { retryCount: 0, timeoutPerAttemptMs: 1_000, outcomes: [{ kind: "hang", durationMs: 0 }] },
          { retryCount: 0, timeoutPerAttemptMs: 1_000, outcomes: [{ kind: "hang", durationMs: 0 }] }
        ]
      }
      const { exit, elapsed } = yield* simulate(s)
      assert.strictEqual(elapsed, 2_000)
      const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      const error = reason?._tag === "Fail" ? (reason.error as Timeout) : undefined
      assert.instanceOf(error, Timeout)
      assert.strictEqual(error?.level, 1)
      assert.strictEqual(error?.attempt, 1)
    })
  )

  it.effect("an act whose failure changed the page is not repeated, on this level or the next", () =>
    Effect.gen(function* () {
      let page = "before"
      const attempts: Array<AttemptRef> = []
      const exit = yield* run(
        {
          totalTimeoutMs: 60_000,
          levels: [
            { engine: "playwright", retryCount: 3, timeoutPerAttemptMs: 1_000 },
            { engine: "magnitude", retryCount: 3, timeoutPerAttemptMs: 1_000 }
          ]
        },
        {
          attempt: (at) =>
            Effect.sync(() => {
              attempts.push(at)
              page = "after: the form was submitted"
            }).pipe(Effect.andThen(Effect.fail(new ActionFailed({ sideEffect: "possible", message: "click broke" })))),
          skip: () => Effect.succeed(Option.none()),
          fingerprint: Effect.sync(() => page)
        },
        { action: "browser.act", isAct: true }
      ).pipe(Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(attempts.length, 1)
    })
  )

  it.effect("an act that failed without touching the page is retried", () =>
    Effect.gen(function* () {
      const attempts: Array<AttemptRef> = []
      const fiber = yield* run(
        { totalTimeoutMs: 60_000, levels: [{ engine: "stagehand", retryCount: 2, timeoutPerAttemptMs: 1_000 }] },
        {
          attempt: (at) =>
            Effect.sync(() => attempts.push(at)).pipe(
              Effect.andThen(
                Effect.fail(
                  new LlmError({
                    status: 500,
                    retryable: true,
                    sideEffect: "possible",
                    message: "model failed mid-act"
                  })
                )
              )
            ),
          skip: () => Effect.succeed(Option.none()),
          fingerprint: Effect.succeed("unchanged")
        },
        { action: "browser.act", isAct: true }
      ).pipe(Effect.exit, Effect.forkChild)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      assert.strictEqual(attempts.length, 3)
    })
  )

  it.effect("skipped levels are reported, and with every level skipped the caller learns why", () =>
    Effect.gen(function* () {
      const { events, sink } = Events.memory()
      const error = yield* run(
        {
          totalTimeoutMs: 60_000,
          levels: [
            { engine: "stagehand", mode: "dom", retryCount: 1, timeoutPerAttemptMs: 1_000 },
            { engine: "magnitude", retryCount: 1, timeoutPerAttemptMs: 1_000 }
          ]
        },
        {
          attempt: () => Effect.succeed("never"),
          skip: (level) =>
            Effect.succeed(Option.some(new NotConfigured({ message: `no API key for ${level.engine}` }))),
          fingerprint: Effect.succeed("")
        },
        { action: "browser.extract", isAct: false }
      ).pipe(Effect.flip, Effect.provideService(Events.Events, sink))
      assert.strictEqual(error.type, "not_configured")
      assert.include(error.message, "no API key for magnitude")
      assert.deepStrictEqual(
        events.map((e) => e.event),
        ["level_skipped", "level_skipped"]
      )
    })
  )

  it.effect("a miss on a page that stays the same is not retried on its level; the next level still tries", () =>
    Effect.gen(function* () {
      const attempts: Array<AttemptRef> = []
      const { events, sink } = Events.memory()
      const error = yield* run(
        {
          totalTimeoutMs: 60_000,
          retryBaseDelayMs: 0,
          levels: [
            { engine: "playwright", retryCount: 3, timeoutPerAttemptMs: 1_000 },
            { engine: "magnitude", retryCount: 3, timeoutPerAttemptMs: 1_000 }
          ]
        },
        {
          attempt: (at) =>
            Effect.sync(() => attempts.push(at)).pipe(
              Effect.andThen(Effect.fail(new ElementNotFound({ target: 'button "Nope"', message: "no such button" })))
            ),
          skip: () => Effect.succeed(Option.none()),
          fingerprint: Effect.succeed("the same page")
        },
        { action: "browser.act", isAct: true }
      ).pipe(Effect.flip, Effect.provideService(Events.Events, sink))
      assert.strictEqual(error.type, "element_not_found")
      assert.deepStrictEqual(
        attempts.map((a) => [a.index, a.attempt]),
        [
          [0, 1],
          [1, 1]
        ]
      )
      assert.strictEqual(events.filter((e) => e.event === "cascade_escalation").length, 2)
    })
  )

  it.effect("a miss while the page is still changing is retried: the target may have appeared", () =>
    Effect.gen(function* () {
      let reads = 0
      const attempts: Array<AttemptRef> = []
      const result = yield* run(
        {
          totalTimeoutMs: 60_000,
          retryBaseDelayMs: 0,
          levels: [{ engine: "playwright", retryCount: 3, timeoutPerAttemptMs: 1_000 }]
        },
        {
          attempt: (at) =>
            Effect.sync(() => attempts.push(at)).pipe(
              Effect.andThen(
                at.attempt < 3
                  ? Effect.fail(new ElementNotFound({ target: 'button "Late"', message: "not there yet" }))
                  : Effect.succeed("clicked")
              )
            ),
          skip: () => Effect.succeed(Option.none()),
          // Content keeps arriving: every read sees more of the page.
          fingerprint: Effect.sync(() => `page with ${++reads} items`)
        },
        { action: "browser.extract", isAct: false }
      )
      assert.strictEqual(result, "clicked")
      assert.strictEqual(attempts.length, 3)
    })
  )

  it.effect("a read's look at the page runs beside its attempt; an act's comes before it touches the page", () =>
    Effect.gen(function* () {
      const config: CascadeConfig = {
        totalTimeoutMs: 60_000,
        retryBaseDelayMs: 0,
        levels: [{ engine: "playwright", retryCount: 1, timeoutPerAttemptMs: 10_000 }]
      }
      /** The order things happened in: the page read begun and ended, the attempt begun and ended. */
      const traced = (readsOnly: boolean, isAct: boolean) =>
        Effect.gen(function* () {
          const seen: Array<string> = []
          const fiber = yield* Effect.forkChild(
            run(
              config,
              {
                attempt: () =>
                  Effect.sync(() => seen.push("attempt")).pipe(
                    Effect.andThen(Effect.sleep(300)),
                    Effect.andThen(Effect.sync(() => seen.push("attempt done"))),
                    Effect.as("done")
                  ),
                skip: () => Effect.succeed(Option.none()),
                fingerprint: Effect.sync(() => seen.push("look")).pipe(
                  Effect.andThen(Effect.sleep(100)),
                  Effect.andThen(Effect.sync(() => seen.push("look done"))),
                  Effect.as("page")
                )
              },
              { action: isAct ? "browser.act" : "browser.extract", isAct, readsOnly }
            )
          )
          yield* TestClock.adjust(100)
          const at100 = [...seen]
          yield* TestClock.adjust(400)
          assert.strictEqual(yield* Fiber.join(fiber), "done")
          return at100
        })
      // A read leaves the page as it was: its attempt does not wait for the look.
      assert.deepStrictEqual(yield* traced(true, false), ["look", "attempt", "look done"])
      // A call that may change the page is looked at first, so a failure can tell whether it changed it.
      assert.deepStrictEqual(yield* traced(false, false), ["look", "look done", "attempt"])
      assert.deepStrictEqual(yield* traced(true, true), ["look", "look done", "attempt"])
    })
  )

  it.effect("with every level skipped and an engine cooling down, the call says when to ask again", () =>
    Effect.gen(function* () {
      const error = yield* run(
        {
          totalTimeoutMs: 60_000,
          levels: [
            { engine: "stagehand", mode: "dom", retryCount: 1, timeoutPerAttemptMs: 1_000 },
            { engine: "playwright", retryCount: 1, timeoutPerAttemptMs: 1_000 },
            { engine: "magnitude", retryCount: 1, timeoutPerAttemptMs: 1_000 }
          ]
        },
        {
          attempt: () => Effect.succeed("never"),
          skip: (level) =>
            Effect.succeed(
              Option.some<SwitchyardError>(
                level.engine === "magnitude"
                  ? new NotConfigured({ message: "no API key for magnitude" })
                  : new EngineCoolingDown({
                      engine: level.engine,
                      label: level.engine,
                      failures: 3,
                      retryAfterMs: level.engine === "playwright" ? 20_000 : 45_000,
                      message: `${level.engine} is cooling down`
                    })
              )
            ),
          fingerprint: Effect.succeed("")
        },
        { action: "browser.extract", isAct: false }
      ).pipe(Effect.flip)
      assert.instanceOf(error, EngineCoolingDown)
      assert.isTrue(error.retryable)
      assert.strictEqual((error as EngineCoolingDown).retryAfterMs, 20_000)
      assert.strictEqual((error as EngineCoolingDown).label, "playwright")
      assert.include(error.message, "no API key for magnitude")
    })
  )

  describe("handing the page to a person", () => {
    const miss = new ElementNotFound({
      target: 'button "Delete account"',
      message: 'no button "Delete account"',
      elements: [{ ref: "e3", role: "button", name: "Delete draft" }]
    })
    const slow = new Timeout({ engine: "playwright", timeoutMs: 1_000, message: "the engine took too long" })

    /** Playwright fails with `first`; the person (level 1) fails with `person` or succeeds. */
    const escalation = (
      first: SwitchyardError,
      options: {
        readonly handToPerson?: CascadeConfig["handToPerson"]
        readonly humanCheck?: boolean
        readonly person?: SwitchyardError
      } = {}
    ) =>
      Effect.gen(function* () {
        const tried: Array<string> = []
        const { events, sink } = Events.memory()
        const exit = yield* run<string>(
          {
            totalTimeoutMs: 300_000,
            retryBaseDelayMs: 0,
            ...(options.handToPerson === undefined ? {} : { handToPerson: options.handToPerson }),
            levels: [
              { engine: "playwright", retryCount: 0, timeoutPerAttemptMs: 1_000 },
              { engine: "human", retryCount: 0, timeoutPerAttemptMs: 120_000 }
            ]
          },
          {
            attempt: (at) =>
              Effect.sync(() => tried.push(at.level.engine)).pipe(
                Effect.andThen(
                  at.level.engine === "playwright"
                    ? Effect.fail(first)
                    : options.person === undefined
                      ? Effect.succeed("a person did it")
                      : Effect.fail(options.person)
                )
              ),
            skip: () => Effect.succeed(Option.none()),
            fingerprint: Effect.succeed("the same page"),
            humanCheck: Effect.succeed(options.humanCheck ?? false)
          },
          { action: "browser.act", isAct: true }
        ).pipe(Effect.exit, Effect.provideService(Events.Events, sink))
        return { exit, tried, events }
      })

    const failureOf = (exit: Exit.Exit<string, SwitchyardError>) => {
      const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      return reason?._tag === "Fail" ? reason.error : undefined
    }

    it.effect("a page miss answers the agent at once, with its candidates; no person is asked", () =>
      Effect.gen(function* () {
        const { exit, tried, events } = yield* escalation(miss)
        assert.deepStrictEqual(tried, ["playwright"])
        assert.strictEqual(failureOf(exit), miss)
        const skipped = events.find((e) => e.event === "level_skipped") as { reason?: string; level?: number }
        assert.strictEqual(skipped?.level, 1)
        assert.include(skipped?.reason, "element_not_found")
        for (const other of [
          new AmbiguousTarget({ target: "ok", candidates: ["ok", "Ok"], message: "two" }),
          new InvalidInput({ message: "not a sentence of the grammar" })
        ]) {
          const again = yield* escalation(other)
          assert.deepStrictEqual(again.tried, ["playwright"])
          assert.strictEqual(failureOf(again.exit), other)
        }
      })
    )

    it.effect("engines that give out, a human check on the page, or a policy that says so: the person is asked", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual((yield* escalation(slow)).tried, ["playwright", "human"])
        assert.deepStrictEqual((yield* escalation(miss, { humanCheck: true })).tried, ["playwright", "human"])
        const asked = yield* escalation(miss, { handToPerson: ["page_miss"] })
        assert.deepStrictEqual(asked.tried, ["playwright", "human"])
        assert.strictEqual(Exit.isSuccess(asked.exit) ? asked.exit.value : undefined, "a person did it")
        // A policy that hands nothing to a person answers with what the engines said.
        const never = yield* escalation(slow, { handToPerson: [] })
        assert.deepStrictEqual(never.tried, ["playwright"])
        assert.strictEqual(failureOf(never.exit), slow)
        // Nor does a human check count where the policy leaves it out.
        const unchecked = yield* escalation(miss, { humanCheck: true, handToPerson: ["engines_exhausted"] })
        assert.deepStrictEqual(unchecked.tried, ["playwright"])
      })
    )

    it.effect("a person who does not finish: human_timeout says what made the cascade ask them", () =>
      Effect.gen(function* () {
        const timedOut = new HumanTimeout({
          engine: "human",
          action: "click the button",
          timeoutMs: 115_000,
          message: 'no person finished "click the button" within 115000 ms'
        })
        const { exit } = yield* escalation(slow, { person: timedOut })
        const error = failureOf(exit) as HumanTimeout
        assert.deepInclude(error, { type: "human_timeout", retryable: false, timeoutMs: 115_000 })
        assert.deepStrictEqual(error.causedBy, {
          type: "timeout",
          message: "the engine took too long",
          retryable: true,
          engine: "playwright"
        })
        assert.include(error.message, "The person was asked because timeout: the engine took too long")
        assert.deepStrictEqual(toErrorInfo(error).causedBy, error.causedBy)
        // On a human check, the miss's candidates come along.
        const checked = failureOf(
          (yield* escalation(miss, { humanCheck: true, person: timedOut })).exit
        ) as HumanTimeout
        assert.deepStrictEqual(checked.causedBy?.elements, miss.elements)
      })
    )
  })
})
