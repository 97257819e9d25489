/**
 * Stand-in session stacks for the Sessions tests: a Router and a Sandbox that record what ran (sessions opened and
 * closed, calls started and ended, pages restored), so the tests read the order and overlap of calls from them.
 */
import { Effect, Layer, Option } from "effect"
import { Router, type ToolAnswer } from "../../src/Cascade/Router.ts"
import { idleStatus, Sandbox } from "../../src/Sandbox/Sandbox.ts"
import { emptyState } from "../../src/Server/Sessions/Answers.ts"
import type { SessionsOptions } from "../../src/Server/Sessions.ts"

export interface Recorder {
  /** Sessions whose stack was built, by name, in order. */
  readonly opened: Array<string>
  /** Sessions whose stack was closed (a close, an idle expiry, a hibernation), in order. */
  readonly closed: Array<string>
  /** Pages put back into a session's browser: the session and the URL. */
  readonly restored: Array<string>
  /** Calls as they started and ended, `session:index`. */
  readonly log: Array<{ readonly event: "start" | "end"; readonly session: string; readonly n: number | undefined }>
  running: Map<string, number>
  overlaps: number
}

export const recorder = (): Recorder => ({
  opened: [],
  closed: [],
  restored: [],
  log: [],
  running: new Map(),
  overlaps: 0
})

const unused = Effect.die("not used by Sessions")

/** A stand-in stack: opening takes `openMs`; each call records its start and end and takes `args.ms`. */
export const stack =
  (rec: Recorder, openMs: number | ((name: string) => Effect.Effect<void>) = 0, restoreMs = 0) =>
  (name: string) =>
    Layer.effectContext(
      Effect.gen(function* () {
        yield* typeof openMs === "number" ? Effect.sleep(openMs) : openMs(name)
        rec.opened.push(name)
        yield* Effect.addFinalizer(() => Effect.sync(() => rec.closed.push(name)))
        const router = Router.of({
          occupied: Effect.succeed(false),
          // A stand-in whose every tool answers what it was called with.
          call: ((tool: string, args: unknown) =>
            Effect.gen(function* () {
              const { n, ms = 0 } = args as { n?: number; ms?: number }
              const busy = rec.running.get(name) ?? 0
              if (busy > 0) rec.overlaps++
              rec.running.set(name, busy + 1)
              rec.log.push({ event: "start", session: name, n })
              yield* Effect.sleep(ms)
              rec.log.push({ event: "end", session: name, n })
              rec.running.set(name, (rec.running.get(name) ?? 1) - 1)
              return {
                ok: true,
                result: { tool, n },
                traceId: "t",
                attemptId: "t#1",
                state: emptyState
              } satisfies ToolAnswer
            })) as Router["Service"]["call"],
          state: () => unused
        })
        const sandbox = Sandbox.of({
          use: () => unused,
          switchTo: () => unused,
          pageState: unused,
          location: unused,
          mainFrame: unused,
          errorCode: unused,
          fingerprint: unused,
          humanCheck: unused,
          artifacts: { screenshotLater: () => unused, settled: unused, snapshot: () => unused },
          status: Effect.succeed({ ...idleStatus, active: true }),
          history: Effect.succeed([]),
          page: Effect.succeed({ tabs: [], dialog: null, downloads: [] }),
          events: Effect.succeed([]),
          tabs: unused,
          switchTab: () => unused,
          closeTab: () => unused,
          openDialog: Effect.succeedNone,
          answerDialog: () => unused,
          chooseFiles: () => unused,
          onPage: () => unused,
          console: () => unused,
          network: () => unused,
          request: () => unused,
          // Each session's page is at a URL of its own name, with a cookie.
          saved: Effect.succeed(
            Option.some({
              url: `https://${name}.test/`,
              cookies: [{ name: "sid", value: name, domain: `${name}.test` }],
              localStorage: [],
              sessionStorage: []
            })
          ),
          restore: (page) =>
            Effect.sleep(restoreMs).pipe(
              Effect.andThen(Effect.sync(() => void rec.restored.push(`${name} ${page.url}`)))
            ),
          forceRelease: Effect.void,
          close: Effect.void
        })
        return Layer.mergeAll(Layer.succeed(Router, router), Layer.succeed(Sandbox, sandbox))
      }).pipe(Effect.flatMap((layer) => Layer.build(layer)))
    )

export const options = (rec: Recorder, overrides: Partial<SessionsOptions> = {}): SessionsOptions => ({
  maxBrowsers: 3,
  queue: 4,
  maxPendingPerSession: 64,
  slotTimeoutMs: 30_000,
  idleTimeoutMs: null,
  session: stack(rec, 20),
  ...overrides
})
